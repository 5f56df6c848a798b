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
from fastapi.responses import JSONResponse

from viddiff import __version__
from viddiff.serve.errors import ApiError
from viddiff.serve.routes import comparisons, operations, videos, web
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
        title="viddiff serve", version=__version__, lifespan=lifespan,
        description="Video action differencing as a service: upload two videos of an action, get verdicts as they "
        "are decided. Every route but /healthz needs 'Authorization: Bearer KEY'.",
    )

    @app.exception_handler(ApiError)
    async def api_error(_: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse({"detail": exc.detail}, status_code=exc.status, headers=exc.headers)

    for resource in (operations, videos, comparisons, web):
        app.include_router(resource.router(service))
    return app
