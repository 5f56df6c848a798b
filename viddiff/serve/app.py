"""The HTTP face: FastAPI over :class:`viddiff.serve.service.Service` (docs/serve.md).

The routes live in :mod:`viddiff.serve.routes`, one router per resource. Request bodies are read by
:mod:`viddiff.serve.uploads` (streamed, cut off at the limit), so the multipart forms are described to
OpenAPI by hand; every response body is a pydantic model of :mod:`viddiff.serve.models`, so the schema on
``/docs`` is generated from the types the API returns.
"""

from __future__ import annotations

import contextlib
from typing import AsyncIterator

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from viddiff import __version__
from viddiff.serve.access_log import AccessLog
from viddiff.serve.errors import ApiError
from viddiff.serve.http_limits import bound_requests
from viddiff.serve.openapi import allowed_methods, operation_id, refine_schema
from viddiff.serve.routes import calibrations, comparisons, docs, operations, videos, web
from viddiff.serve.security import secure_headers
from viddiff.serve.service import Service


def create_app(service: Service) -> FastAPI:
    """The app for one :class:`Service`; its lifespan starts and stops the service (workers, retention)."""

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await service.start()
        try:
            yield
        finally:
            await service.stop()

    app = FastAPI(
        title="viddiff serve", version=__version__, lifespan=lifespan, generate_unique_id_function=operation_id,
        docs_url=None, redoc_url=None,  # served from the package by routes.docs, not from a CDN
        description="Video action differencing as a service: upload two videos of an action, get verdicts as they "
        "are decided. Every route but /healthz and /readyz needs 'Authorization: Bearer KEY' (Authorize, above); /metrics a key "
        "made with --scope metrics.",
    )

    bound_requests(app)
    secure_headers(app, docs.PAGES)

    @app.exception_handler(ApiError)
    async def api_error(_: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse({"detail": exc.detail}, status_code=exc.status, headers=exc.headers)

    @app.exception_handler(Exception)
    async def internal_error(_: Request, exc: Exception) -> JSONResponse:
        """A bug or a server-side fault: JSON like every error, naming no path; Starlette re-raises it after
        this answer, so uvicorn logs it once, with its traceback."""
        return JSONResponse({"detail": f"internal error ({type(exc).__name__}); the server log has the details"},
                            status_code=500)

    @app.exception_handler(RequestValidationError)
    async def invalid_parameter(_: Request, exc: RequestValidationError) -> JSONResponse:
        """A query parameter FastAPI checked: one ``detail`` sentence, as for every other error."""
        said = [f"{'.'.join(str(part) for part in e['loc'][1:])}: {e['msg']}" for e in exc.errors()]
        return JSONResponse({"detail": "; ".join(said)}, status_code=422)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            methods = allowed_methods(app.openapi(), request.url.path)
            if methods:
                headers["Allow"] = ", ".join(methods)
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=headers)

    for resource in (operations, videos, calibrations, comparisons, web):
        app.include_router(resource.router(service))
    app.include_router(docs.router(app.title, app.openapi_url))
    app.add_middleware(AccessLog, on_request=service.metrics.request)
    refine_schema(app)
    return app
