"""``/docs`` (Swagger UI) and ``/redoc`` (ReDoc) with their scripts, styles and icon served by this server
from the files the ``fastapi-offline`` package bundles, so both pages work without internet access (FastAPI's
own pages load them from a CDN)."""

from __future__ import annotations

from importlib import resources

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response

from viddiff.serve.errors import ApiError

PAGES = frozenset({"/docs", "/redoc"})
ASSETS = "/docs-assets"
ASSET_TYPES = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "redoc.standalone.js": "text/javascript",
    "favicon.png": "image/png",
}


def router(title: str, openapi_url: str) -> APIRouter:
    routes = APIRouter(include_in_schema=False)

    @routes.get("/docs", response_class=HTMLResponse)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "").rstrip("/")
        return get_swagger_ui_html(
            openapi_url=root + openapi_url, title=f"{title} - Swagger UI",
            swagger_js_url=f"{root}{ASSETS}/swagger-ui-bundle.js", swagger_css_url=f"{root}{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS}/favicon.png", swagger_ui_parameters={"persistAuthorization": True},
        )

    @routes.get("/redoc", response_class=HTMLResponse)
    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "").rstrip("/")
        return get_redoc_html(
            openapi_url=root + openapi_url, title=f"{title} - ReDoc", redoc_js_url=f"{root}{ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{ASSETS}/favicon.png", with_google_fonts=False,
        )

    @routes.get(ASSETS + "/{name}")
    async def asset(name: str) -> Response:
        if name not in ASSET_TYPES:
            raise ApiError(404, f"no file {name!r}")
        data = resources.files("fastapi_offline").joinpath("static", name).read_bytes()
        return Response(data, media_type=ASSET_TYPES[name], headers={"Cache-Control": "public, max-age=86400"})

    return routes
