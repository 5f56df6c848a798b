"""``/healthz``, ``/readyz`` and ``/metrics``: for whoever runs the server and its probes."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from viddiff.serve.metrics import CONTENT_TYPE
from viddiff.serve.models import Health
from viddiff.serve.routes.common import KEYED, errors, owner_dependency
from viddiff.serve.service import Service


def router(service: Service) -> APIRouter:
    routes = APIRouter(tags=["service"])
    operator = owner_dependency(service, "metrics")

    @routes.get("/healthz", response_model=Health, response_model_exclude_none=True)
    async def healthz() -> Health:
        executor = service.executor
        actors = executor.actors()
        status = service.readiness.state
        if status == "ok" and actors is not None and actors.live < actors.configured:
            status = "degraded"  # dead Ray actors being replaced
        return Health(status=status, queued=executor.queued(), running=executor.running(), actors=actors)

    @routes.get("/readyz", response_model=Health, responses={503: {"model": Health}})
    async def readyz() -> JSONResponse:
        """200 once the service can take a job; 503 while its models load (a container's readiness probe)."""
        health = await healthz()
        return JSONResponse(health.model_dump(exclude_none=True), status_code=200 if service.readiness.ready else 503)

    @routes.get("/metrics", response_class=PlainTextResponse, responses=errors(*KEYED))
    async def metrics(_: str = Depends(operator)) -> Response:
        exposition = await service.store.run(service.metrics.exposition)  # it reads the store: on a store thread
        return Response(exposition, media_type=CONTENT_TYPE)

    return routes
