"""``/healthz`` and ``/metrics``: for whoever runs the server."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from fastapi.responses import PlainTextResponse

from viddiff.serve.models import Health
from viddiff.serve.routes.common import ERRORS, owner_dependency
from viddiff.serve.service import Service


def router(service: Service) -> APIRouter:
    routes = APIRouter(tags=["service"])
    owner = owner_dependency(service)

    @routes.get("/healthz", response_model=Health)
    async def healthz() -> Health:
        return Health(queued=service.executor.queued(), running=service.executor.running())

    @routes.get("/metrics", response_class=PlainTextResponse, responses=ERRORS)
    async def metrics(_: str = Depends(owner)) -> str:
        return service.prometheus()

    return routes
