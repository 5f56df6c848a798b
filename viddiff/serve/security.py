"""Security headers on every response: what limits the damage if escaping ever slips.

The web page keeps its API key in ``localStorage``, so every document of the service's origin could read it.
Each response therefore says what it may load and run (``Content-Security-Policy``), that it is what its
``Content-Type`` says (``nosniff``), that no other site may frame it (``frame-ancestors 'none'``; nothing here
is meant to be framed), and that its URL is not sent on (``Referrer-Policy``). The report is the one document
with inline script and style; it is served with :data:`REPORT_CSP`, a ``sandbox`` that gives it an opaque
origin, so it can read nothing of the page's (docs/serve.md#security-headers).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
"""JSON, the event stream, the metrics: nothing to load or run."""
PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)
"""The web page: its own script and style files, requests to its own API, nothing inline."""
REPORT_CSP = (
    "sandbox allow-scripts allow-popups; default-src 'none'; script-src 'unsafe-inline'; "
    "style-src 'unsafe-inline'; img-src data:; media-src data:; font-src data:; frame-ancestors 'none'; "
    "base-uri 'none'; form-action 'none'"
)
"""The self-contained report: its inline script and style and ``data:`` keyframes and videos, in a sandbox
(an opaque origin: no access to the page's storage) that can reach nothing on the network."""
DOCS_CSP = (
    "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self' data:; connect-src 'self'; worker-src blob:; frame-ancestors 'none'; base-uri 'none'; "
    "form-action 'none'"
)
"""``/docs`` and ``/redoc``: Swagger UI and ReDoc from this server's own files (:mod:`viddiff.serve.routes.docs`),
started by an inline script; ReDoc runs a ``blob:`` worker."""
SERVER_HEADERS = [("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer")]
"""Sent by uvicorn itself on every response (``uvicorn.Config(headers=...)``), its own 500s and 503s included."""


class SecurityHeaders:
    """ASGI middleware: a ``Content-Security-Policy`` chosen by path, where the route set none (the report's
    route sets :data:`REPORT_CSP`); :data:`SERVER_HEADERS` come from the server."""

    def __init__(self, app: ASGIApp, *, page_paths: frozenset[str], docs_paths: frozenset[str]):
        self.app = app
        self.page_paths = page_paths
        self.docs_paths = docs_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        policy = PAGE_CSP if path in self.page_paths else DOCS_CSP if path in self.docs_paths else API_CSP

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if all(name.lower() != b"content-security-policy" for name, _ in headers):
                    message = {**message, "headers": [*headers, (b"content-security-policy", policy.encode())]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def secure_headers(app, docs_paths: frozenset[str]) -> None:
    """Install :class:`SecurityHeaders` on a FastAPI app (its page at ``/``, its API docs at ``docs_paths``)."""
    app.add_middleware(SecurityHeaders, page_paths=frozenset({"/"}), docs_paths=docs_paths)
