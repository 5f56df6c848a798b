"""``/`` and ``/web/*``: the small web page (not part of the API schema)."""

from __future__ import annotations

from importlib import resources

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, Response

from viddiff.serve.errors import ApiError
from viddiff.serve.service import Service

WEB_FILES = {"app.js": "text/javascript", "style.css": "text/css"}


def router(service: Service) -> APIRouter:
    routes = APIRouter(include_in_schema=False)

    @routes.get("/", response_class=HTMLResponse)
    async def page() -> HTMLResponse:
        html = _web_file("index.html").replace("{{DEV}}", "true" if service.dev else "false")
        return HTMLResponse(html)

    @routes.get("/web/{name}")
    async def web_file(name: str) -> Response:
        if name not in WEB_FILES:
            raise ApiError(404, f"no file {name!r}")
        return Response(_web_file(name), media_type=WEB_FILES[name])

    return routes


def _web_file(name: str) -> str:
    return resources.files("viddiff.serve").joinpath("web", name).read_text(encoding="utf-8")
