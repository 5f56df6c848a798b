"""The HTTP routes, one :class:`fastapi.APIRouter` per resource, read like the API table of docs/serve.md.

Each module's ``router(service)`` builds its routes over one :class:`viddiff.serve.service.Service`;
:func:`viddiff.serve.app.create_app` includes them.
"""
