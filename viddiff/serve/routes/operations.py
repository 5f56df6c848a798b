"""``/healthz`` and ``/metrics``: for whoever runs the server."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Depends
from fastapi.responses import PlainTextResponse, Response

from viddiff.serve.metrics import CONTENT_TYPE
from viddiff.serve.models import Health
from viddiff.serve.routes.common import KEYED, errors, owner_dependency
from viddiff.serve.service import Service


def router(service: Service) -> APIRouter:
    routes = APIRouter(tags=["service"])
    operator = owner_dependency(service, "metrics")

    @routes.get("/healthz", response_model=Health)
    async def healthz() -> Health:
        return Health(queued=service.executor.queued(), running=service.executor.running())

    @routes.get("/metrics", response_class=PlainTextResponse, responses=errors(*KEYED))
    async def metrics(_: str = Depends(operator)) -> Response:
        exposition = await asyncio.to_thread(service.metrics.exposition)  # it reads the store: off the event loop
        return Response(exposition, media_type=CONTENT_TYPE)

    return routes
