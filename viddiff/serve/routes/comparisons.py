"""``/v1/comparisons``: create, list, read, delete a comparison; its events (SSE) and its report."""

from __future__ import annotations

import asyncio
from typing import AsyncIterator, Optional

from fastapi import APIRouter, Depends, Header, Query, Request, Security
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials

from viddiff.api import MAX_ACTION_CHARS, MAX_DIFFERENCES
from viddiff.serve import access_log
from viddiff.serve.errors import ApiError
from viddiff.serve.jobs import JobRow
from viddiff.serve.listing import DEFAULT_PAGE, MAX_PAGE, comparison_page
from viddiff.serve.models import (
    CancelledEvent, Comparison, ComparisonCreated, ComparisonList, ReportLink, ServiceEvent,
)
from viddiff.serve.report_links import ReportLinks
from viddiff.serve.routes.common import BEARER, FILE, KEYED, WRITES, errors, form_schema, owner_dependency
from viddiff.serve.security import REPORT_CSP
from viddiff.serve.service import TERMINAL_EVENTS, Service, links
from viddiff.serve.states import FINISHED, JobStatus
from viddiff.serve.uploads import read_form

KEEP_ALIVE_S = 15.0


def comparison_form(max_views_per_side: int) -> dict:
    """The comparison's multipart form, for OpenAPI (the views' count is a limit of the server's config)."""
    views = {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": max_views_per_side - 1}
    return form_schema(
        {
            "video_a": {**FILE, "description": "video A (or video_a_id)"},
            "video_b": {**FILE, "description": "video B (or video_b_id)"},
            "video_a_id": {"type": "string", "description": "id of a video uploaded with POST /v1/videos"},
            "video_b_id": {"type": "string"},
            "action": {"type": "string", "minLength": 1, "maxLength": MAX_ACTION_CHARS, "pattern": r"[^\s]",
                       "description": "what the videos show, e.g. 'barbell back squat'"},
            "differences": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1,
                            "maxItems": MAX_DIFFERENCES, "description": "closed mode: one field per statement"},
            "n_differences": {"type": "integer", "minimum": 1, "maximum": MAX_DIFFERENCES,
                              "description": "open mode: how many differences to propose"},
            "pose": {"type": "boolean", "description": "also measure each difference from body pose"},
            "report": {"type": "boolean", "description": "write the HTML report (GET .../report)"},
            "callback_url": {"type": "string", "format": "uri", "description": "POSTed the signed comparison when it "
                             "ends (default: the key's callback URL); see 'Webhooks' in docs/serve.md"},
            "views_a": {**views, "description": "ids of uploaded videos (POST /v1/videos) of the same take as video A from "
                        "its other calibrated cameras, one field each, in the calibration's camera order after video A's; "
                        "measured in 3D with pose=true"},
            "views_b": {**views, "description": "the same for video B"},
            "calibration_a_id": {"type": "string", "description": "id of an uploaded calibration (POST /v1/calibrations) "
                                 "of video A's cameras: video A, then each of views_a"},
            "calibration_b_id": {"type": "string", "description": "the same for video B (may be the same id)"},
        },
        ["action"],
    )


def router(service: Service) -> APIRouter:
    routes = APIRouter(prefix="/v1/comparisons", tags=["comparisons"])
    owner = owner_dependency(service)
    report_links = ReportLinks()

    @routes.post("", status_code=202, response_model=ComparisonCreated, responses=errors(*KEYED, *WRITES, 400, 404, 413, 415, 422),
                 openapi_extra=comparison_form(service.limits.max_views_per_side))
    async def create_comparison(
        request: Request, who: str = Depends(owner), idempotency_key: Optional[str] = Header(default=None),
    ) -> JSONResponse:
        if idempotency_key:
            earlier = await service.store.job_by_idempotency_key(who, idempotency_key)
            if earlier is not None:  # a retry: the job exists, the body is not needed
                access_log.tag(request.scope, job_id=earlier.id)
                return _created(earlier.id, earlier.status)
        await service.check_queue(who)
        form = await read_form(
            dict(request.headers), request.stream(), service.tmp_dir, max_bytes=service.limits.max_upload_bytes,
            file_fields=frozenset({"video_a", "video_b"}),
        )
        try:
            job, _ = await service.create_comparison(who, form, idempotency_key)
        finally:
            form.discard_files()
        access_log.tag(request.scope, job_id=job.id)
        return _created(job.id, job.status)

    @routes.get("", response_model=ComparisonList, responses=errors(*KEYED, 404, 422))
    async def list_comparisons(
        who: str = Depends(owner),
        limit: int = Query(DEFAULT_PAGE, ge=1, le=MAX_PAGE, description="comparisons per page"),
        after: Optional[str] = Query(None, min_length=1, description="the last id of the page before (its next link has it)"),
        status: Optional[JobStatus] = Query(None, description="only comparisons in this state"),
    ) -> ComparisonList:
        # store reads stay off the event loop (design §12): the page is read on a store thread
        return await service.store.run(
            lambda: comparison_page(service.store.store, who, limit=limit, after=after, status=status)
        )

    @routes.get("/{job_id}", response_model=Comparison, responses=errors(*KEYED, 404))
    async def get_comparison(job_id: str, who: str = Depends(owner)) -> Comparison:
        return await service.comparison(await service.job(who, job_id))

    @routes.delete("/{job_id}", status_code=204, responses=errors(*KEYED, *WRITES, 404))
    async def delete_comparison(job_id: str, who: str = Depends(owner)) -> Response:
        await service.delete_comparison(await service.job(who, job_id))
        return Response(status_code=204)

    async def report_row(job_id: str, who: str) -> JobRow:
        row = await service.job(who, job_id)
        if not row.report:
            raise ApiError(404, "no report was asked for: create the comparison with report=true")
        if row.status != "done":
            raise ApiError(409, f"the comparison is {row.status}; its report is written when it is done")
        return row

    @routes.get("/{job_id}/report", response_class=HTMLResponse, responses=errors(*KEYED, 404, 409))
    async def get_comparison_report(
        job_id: str, request: Request,
        link: Optional[str] = Query(default=None, description="a token from POST .../report-link, instead of a key"),
        credentials: Optional[HTTPAuthorizationCredentials] = Security(BEARER),
    ) -> FileResponse:
        if link:
            who = report_links.owner(job_id, link)
            service.rate.take(who)
            access_log.tag(request.scope, key=who)
        else:
            who = await owner(request, credentials)
        row = await report_row(job_id, who)
        sandboxed = {"Content-Security-Policy": REPORT_CSP}
        return FileResponse(row.spec["report_path"], media_type="text/html", headers=sandboxed)

    @routes.post("/{job_id}/report-link", response_model=ReportLink, responses=errors(*KEYED, 404, 409))
    async def create_comparison_report_link(job_id: str, who: str = Depends(owner)) -> ReportLink:
        """A URL that opens the report in a browser tab without the key, for an hour."""
        await report_row(job_id, who)
        token, expires = report_links.sign(job_id, who)
        return ReportLink(url=f"{links(job_id).report}?link={token}", expires_at=expires)

    @routes.get("/{job_id}/events", response_class=EventStream, response_model=ServiceEvent, responses={
        200: {"description": "Server-Sent Events, each 'id: N', 'event: TYPE' and 'data: JSON' (this schema): "
              "proposal, segmentation, verdict (one per difference), then result, failed or cancelled. "
              "Reconnect with Last-Event-ID: N to get what came after N."},
        **errors(*KEYED, 404),
    })
    async def get_comparison_events(
        job_id: str, who: str = Depends(owner), last_event_id: Optional[str] = Header(default=None),
    ) -> StreamingResponse:
        await service.job(who, job_id)
        after = int(last_event_id) if last_event_id and last_event_id.strip().isdigit() else 0
        return EventStream(
            _event_stream(service, job_id, after), headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        )

    return routes


class EventStream(StreamingResponse):
    """Server-Sent Events (the media type is what the schema declares for the events route)."""

    media_type = "text/event-stream"


def _created(job_id: str, status: str) -> JSONResponse:
    body = ComparisonCreated(id=job_id, status=status, links=links(job_id))
    return JSONResponse(body.model_dump(), status_code=202, headers={"Location": body.links.self})


async def _event_stream(service: Service, job_id: str, after: int) -> AsyncIterator[str]:
    """Stored events after ``after``, then new ones as they are stored, until the job's last event."""
    while True:
        waiter = service.broker.waiter(job_id)  # before reading, so nothing stored in between is missed
        for event in await service.store.events_after(job_id, after):
            yield f"id: {event.seq}\nevent: {event.type}\ndata: {event.data}\n\n"
            after = event.seq
            if event.type in TERMINAL_EVENTS:
                return
        row = await service.store.job(job_id)
        if row is None:  # deleted (DELETE cancels, then removes everything)
            yield f"event: cancelled\ndata: {CancelledEvent().model_dump_json()}\n\n"
            return
        if row.status in FINISHED and not await service.store.events_after(job_id, after):
            return
        try:
            await asyncio.wait_for(waiter.wait(), KEEP_ALIVE_S)
        except asyncio.TimeoutError:
            yield ": keep-alive\n\n"
