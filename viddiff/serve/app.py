"""The HTTP face: FastAPI routes over :class:`viddiff.serve.service.Service` (docs/serve.md).

Request bodies are read by :mod:`viddiff.serve.uploads` (streamed, cut off at the limit), so the multipart
forms are described to OpenAPI by hand; every response body is a pydantic model of
:mod:`viddiff.serve.models`, so the schema on ``/docs`` is generated from the types the API returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from importlib import resources
from typing import AsyncIterator, Optional

from fastapi import Depends, FastAPI, Header, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, Response, StreamingResponse

from viddiff import __version__
from viddiff.serve.errors import ApiError
from viddiff.serve.models import FINISHED, Comparison, ComparisonCreated, ComparisonList, Health, Problem, Video
from viddiff.serve.service import TERMINAL_EVENTS, Service, links, video_model
from viddiff.serve.uploads import read_form

KEEP_ALIVE_S = 15.0
WEB_FILES = {"app.js": "text/javascript", "style.css": "text/css"}
_ERRORS = {status: {"model": Problem} for status in (400, 401, 404, 409, 413, 415, 422, 429)}


def _form_schema(properties: dict, required: list[str]) -> dict:
    return {
        "requestBody": {
            "required": True,
            "content": {"multipart/form-data": {"schema": {"type": "object", "properties": properties, "required": required}}},
        }
    }


_FILE = {"type": "string", "format": "binary"}
_COMPARISON_FORM = _form_schema(
    {
        "video_a": {**_FILE, "description": "video A (or video_a_id)"},
        "video_b": {**_FILE, "description": "video B (or video_b_id)"},
        "video_a_id": {"type": "string", "description": "id of a video uploaded with POST /v1/videos"},
        "video_b_id": {"type": "string"},
        "action": {"type": "string", "description": "what the videos show, e.g. 'barbell back squat'"},
        "differences": {"type": "array", "items": {"type": "string"}, "description": "closed mode: one field per statement"},
        "n_differences": {"type": "integer", "description": "open mode: how many differences to propose"},
        "pose": {"type": "boolean", "description": "also measure each difference from body pose"},
        "report": {"type": "boolean", "description": "write the HTML report (GET .../report)"},
    },
    ["action"],
)


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

    def owner(request: Request, authorization: Optional[str] = Header(default=None)) -> str:
        return service.authenticate(authorization, request.client.host if request.client else None)

    @app.get("/healthz", response_model=Health, response_model_exclude_none=True, tags=["service"])
    async def healthz() -> Health:
        actors = service.executor.actors()
        degraded = actors is not None and actors.live < actors.configured
        return Health(status="degraded" if degraded else "ok", queued=service.executor.queued(),
                      running=service.executor.running(), actors=actors)

    @app.get("/metrics", response_class=PlainTextResponse, tags=["service"], responses=_ERRORS)
    async def metrics(_: str = Depends(owner)) -> str:
        return service.prometheus()

    @app.post("/v1/videos", status_code=201, response_model=Video, tags=["videos"], responses=_ERRORS,
              openapi_extra=_form_schema({"video": _FILE}, ["video"]))
    async def upload_video(request: Request, who: str = Depends(owner)) -> Video:
        form = await read_form(dict(request.headers), request.stream(), service.tmp_dir,
                               max_bytes=service.limits.max_upload_bytes, file_fields=frozenset({"video"}))
        try:
            upload = form.files.get("video")
            if upload is None:
                raise ApiError(422, "video is missing: send the file in the field 'video' (curl: -F video=@a.mp4)")
            return video_model(await service.add_video(who, upload, "video"))
        finally:
            form.discard_files()

    @app.get("/v1/videos/{video_id}", response_model=Video, tags=["videos"], responses=_ERRORS)
    async def get_video(video_id: str, who: str = Depends(owner)) -> Video:
        return video_model(service.video(who, video_id))

    @app.delete("/v1/videos/{video_id}", status_code=204, tags=["videos"], responses=_ERRORS)
    async def delete_video(video_id: str, who: str = Depends(owner)) -> Response:
        service.delete_video(service.video(who, video_id))
        return Response(status_code=204)

    @app.post("/v1/comparisons", status_code=202, response_model=ComparisonCreated, tags=["comparisons"],
              responses=_ERRORS, openapi_extra=_COMPARISON_FORM)
    async def create_comparison(
        request: Request, who: str = Depends(owner), idempotency_key: Optional[str] = Header(default=None),
    ) -> JSONResponse:
        if idempotency_key:
            earlier = service.store.job_by_idempotency_key(who, idempotency_key)
            if earlier is not None:  # a retry: the job exists, the body is not needed
                return _created(earlier.id, earlier.status)
        service.check_queue(who)
        form = await read_form(
            dict(request.headers), request.stream(), service.tmp_dir, max_bytes=service.limits.max_upload_bytes,
            file_fields=frozenset({"video_a", "video_b"}),
        )
        try:
            job, _ = await service.create_comparison(who, form, idempotency_key)
        finally:
            form.discard_files()
        return _created(job.id, job.status)

    @app.get("/v1/comparisons", response_model=ComparisonList, tags=["comparisons"], responses=_ERRORS)
    async def list_comparisons(who: str = Depends(owner)) -> ComparisonList:
        return ComparisonList(comparisons=[service.comparison(row) for row in service.store.jobs(who)])

    @app.get("/v1/comparisons/{job_id}", response_model=Comparison, tags=["comparisons"], responses=_ERRORS)
    async def get_comparison(job_id: str, who: str = Depends(owner)) -> Comparison:
        return service.comparison(service.job(who, job_id))

    @app.delete("/v1/comparisons/{job_id}", status_code=204, tags=["comparisons"], responses=_ERRORS)
    async def delete_comparison(job_id: str, who: str = Depends(owner)) -> Response:
        await service.delete_comparison(service.job(who, job_id))
        return Response(status_code=204)

    @app.get("/v1/comparisons/{job_id}/report", response_class=HTMLResponse, tags=["comparisons"], responses=_ERRORS)
    async def report(job_id: str, who: str = Depends(owner)) -> FileResponse:
        row = service.job(who, job_id)
        if not row.report:
            raise ApiError(404, "no report was asked for: create the comparison with report=true")
        if row.status != "done":
            raise ApiError(409, f"the comparison is {row.status}; its report is written when it is done")
        return FileResponse(row.spec["report_path"], media_type="text/html")

    @app.get("/v1/comparisons/{job_id}/events", tags=["comparisons"], responses={
        200: {"content": {"text/event-stream": {}}, "description": "Server-Sent Events: proposal, segmentation, "
              "verdict (one per difference), then result, failed or cancelled; each with an id for Last-Event-ID"},
        **_ERRORS,
    })
    async def events(
        job_id: str, who: str = Depends(owner), last_event_id: Optional[str] = Header(default=None),
    ) -> StreamingResponse:
        service.job(who, job_id)
        after = int(last_event_id) if last_event_id and last_event_id.strip().isdigit() else 0
        return StreamingResponse(
            _event_stream(service, job_id, after), media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def page() -> HTMLResponse:
        html = _web_file("index.html").replace("{{DEV}}", "true" if service.dev else "false")
        return HTMLResponse(html)

    @app.get("/web/{name}", include_in_schema=False)
    async def web_file(name: str) -> Response:
        if name not in WEB_FILES:
            raise ApiError(404, f"no file {name!r}")
        return Response(_web_file(name), media_type=WEB_FILES[name])

    return app


def _created(job_id: str, status: str) -> JSONResponse:
    body = ComparisonCreated(id=job_id, status=status, links=links(job_id))
    return JSONResponse(body.model_dump(), status_code=202, headers={"Location": body.links.self})


def _web_file(name: str) -> str:
    return resources.files("viddiff.serve").joinpath("web", name).read_text(encoding="utf-8")


async def _event_stream(service: Service, job_id: str, after: int) -> AsyncIterator[str]:
    """Stored events after ``after``, then new ones as they are stored, until the job's last event."""
    while True:
        waiter = service.broker.waiter(job_id)  # before reading, so nothing stored in between is missed
        for event in service.store.events_after(job_id, after):
            yield f"id: {event.seq}\nevent: {event.type}\ndata: {event.data}\n\n"
            after = event.seq
            if event.type in TERMINAL_EVENTS:
                return
        row = service.store.job(job_id)
        if row is None:  # deleted (DELETE cancels, then removes everything)
            yield f"event: cancelled\ndata: {json.dumps({'type': 'cancelled', 'error': None})}\n\n"
            return
        if row.status in FINISHED and not service.store.events_after(job_id, after):
            return
        try:
            await asyncio.wait_for(waiter.wait(), KEEP_ALIVE_S)
        except asyncio.TimeoutError:
            yield ": keep-alive\n\n"
