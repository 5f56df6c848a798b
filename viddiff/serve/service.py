"""The service behind the HTTP routes: the job store, the executor, keys, limits, events, metrics, retention.

It knows nothing of HTTP beyond :class:`ApiError`; :mod:`viddiff.serve.routes` map routes onto it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import math
import os
import shutil
import time
from pathlib import Path
from typing import Optional, Union

from viddiff.api import ComparisonResult, DifferenceResult, ResultEvent, build_sample
from viddiff.config import Config
from viddiff.errors import ViddiffError
from viddiff.serve import job_log
from viddiff.serve.calibrations import SUFFIXES, calibration_format, count_cameras
from viddiff.serve.errors import ApiError, without_paths
from viddiff.serve.executor import Emitted, Ended, Executor, JobSpec, JobUpdate, Started
from viddiff.serve.jobs import CalibrationRow, JobRow, JobStore, QueueFull, VideoGone, VideoRow, new_id
from viddiff.serve.keys import SCOPES, key_hash
from viddiff.serve.limits import RateLimiter, check_video
from viddiff.serve.metrics import ServiceMetrics
from viddiff.serve.models import Calibration, Comparison, Links, Video
from viddiff.serve.readiness import Readiness
from viddiff.serve.setups import side_setup
from viddiff.serve.states import FINISHED, Progress, Webhook
from viddiff.serve.store_thread import AsyncJobStore, StoreBusy
from viddiff.serve.uploads import Form, UploadedFile, move_into
from viddiff.serve.webhooks import RefusedTarget, WebhookSender, check_url

log = logging.getLogger(__name__)
DEV_OWNER = "dev"
METRICS_TOKEN_NAME = "metrics-token"
"""How the access log names a request that read ``/metrics`` with ``serve.metrics_token_env``'s token."""
TERMINAL_EVENTS = ("result", "failed", "cancelled")


class Broker:
    """Wakes the event streams of a job when something was stored for it."""

    def __init__(self) -> None:
        self._events: dict[str, asyncio.Event] = {}

    def waiter(self, job_id: str) -> asyncio.Event:
        return self._events.setdefault(job_id, asyncio.Event())

    def notify(self, job_id: str) -> None:
        event = self._events.pop(job_id, None)
        if event is not None:
            event.set()


class Service:
    """One server's state: ``data_dir`` holds ``serve.sqlite``, ``videos/``, ``reports/`` and ``tmp/``."""

    def __init__(self, data_dir: Path, config: Config, executor: Executor, *, dev: bool = False):
        self.data_dir = Path(data_dir)
        self.config = config
        self.limits = config.serve
        self.executor = executor
        self.dev = dev
        self.metrics_token = _metrics_token(self.limits.metrics_token_env)  # before anything is opened
        self.store = AsyncJobStore(JobStore(self.data_dir / "serve.sqlite", self.limits.store_busy_timeout_s))
        self.rate = RateLimiter(self.limits.requests_per_minute)
        self.broker = Broker()
        self.metrics = ServiceMetrics(self.store.store, executor)  # read on a store thread (routes.operations)
        self.readiness = Readiness()
        self.webhooks = WebhookSender(self.store, self.limits)
        self._retention_task: Optional[asyncio.Task] = None

    @property
    def tmp_dir(self) -> Path:
        return self.data_dir / "tmp"

    # ---- life

    async def start(self) -> None:
        """Requeue what a stop left, then load the executor in the background (``readiness`` follows it)."""
        shutil.rmtree(self.tmp_dir, ignore_errors=True)  # uploads cut off by a stop
        await self.webhooks.start()
        for row in await self.store.requeue_unfinished():
            self.executor.submit(JobSpec.model_validate(row.spec))
        for job_id in await self.store.jobs_with_pending_webhooks():  # the last stop came before they were sent
            row = await self.store.job(job_id)
            if row is not None:
                await self._send_webhook(row)
        self.readiness.load(self.executor.start(self.on_update))
        self._retention_task = asyncio.create_task(self._expire_forever(), name="viddiff-retention")

    async def stop(self) -> None:
        if self._retention_task is not None:
            self._retention_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._retention_task
        await self.readiness.cancel()
        await self.executor.shutdown()
        await self.executor.shutdown()
        await self.store.requeue_unfinished()  # the jobs it stopped wait for the next start, and say so meanwhile
        await self.webhooks.stop()
        await asyncio.to_thread(self.store.close)

    # ---- keys and rate

    async def authenticate(self, authorization: Optional[str], client_host: Optional[str], scope: str = "app") -> str:
        """The name of the key in ``Authorization: Bearer KEY``, which must hold ``scope``; in ``--dev`` mode a
        keyless local request is ``dev``."""
        if authorization:
            scheme, _, key = authorization.partition(" ")
            if scheme.lower() != "bearer" or not key.strip():
                raise ApiError(401, "send the key as 'Authorization: Bearer KEY'", {"WWW-Authenticate": "Bearer"})
            row = await self.store.active_key(key_hash(key.strip()))
            if row is None:
                raise ApiError(401, "unknown or revoked API key", {"WWW-Authenticate": "Bearer"})
            if scope not in row.scopes:
                raise ApiError(403, f"key {row.name!r} may not {SCOPES[scope]}; make a key for that with: "
                               f"viddiff serve keys create NAME --scope {scope}")
            owner = row.name
        elif self.dev and client_host in ("127.0.0.1", "::1"):
            owner = DEV_OWNER
        else:
            raise ApiError(
                401, "an API key is required: 'Authorization: Bearer KEY' (make one with: viddiff serve keys create NAME)",
                {"WWW-Authenticate": "Bearer"},
            )
        self.rate.take(owner)
        return owner

    async def authenticate_operator(self, authorization: Optional[str], client_host: Optional[str]) -> str:
        """Who may read ``/metrics``: the token ``serve.metrics_token_env`` names, or a key with the ``metrics`` scope."""
        if self.metrics_token and authorization:
            scheme, _, token = authorization.partition(" ")
            if scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), self.metrics_token.encode()):
                return METRICS_TOKEN_NAME
        return await self.authenticate(authorization, client_host, scope="metrics")

    # ---- videos

    async def add_video(self, owner: str, upload: UploadedFile, label: str) -> VideoRow:
        """Check an uploaded file against the limits, keep it under ``videos/`` and store its row (or neither)."""
        row = await self._keep_video(owner, upload, label)
        try:
            await self.store.add_video(row)
        except BaseException:
            Path(row.path).unlink(missing_ok=True)  # never a file without a row, which retention would not find
            raise
        return row

    async def _keep_video(self, owner: str, upload: UploadedFile, label: str, job_id: Optional[str] = None) -> VideoRow:
        """Check an uploaded file against the limits, then move it under ``videos/``; its row, not yet stored."""
        claims = await asyncio.to_thread(check_video, upload.path, label, self.limits)
        video_id = new_id("vid")
        suffix = {"mp4": ".mp4", "matroska": ".mkv", "avi": ".avi"}[claims.kind]
        path = move_into(upload, self.data_dir / "videos" / f"{video_id}{suffix}")
        return VideoRow(
            id=video_id, owner=owner, job_id=job_id, path=str(path), filename=upload.filename, bytes=upload.bytes,
            kind=claims.kind, duration_s=claims.duration_s, width=claims.width, height=claims.height,
            n_frames=claims.n_frames, created_at=time.time(),
        )

    async def video(self, owner: str, video_id: str) -> VideoRow:
        row = await self.store.video(owner, video_id)
        if row is None:
            raise ApiError(404, f"no video {video_id!r} (upload it with POST /v1/videos; videos expire after "
                           f"serve.retention_hours = {self.limits.retention_hours:g})")
        return row

    async def delete_video(self, owner: str, video_id: str) -> None:
        """Delete an uploaded video; 409 while a queued or running comparison uses it."""
        row = await self.video(owner, video_id)
        users = await self.store.delete_video_unless_used(row.id)
        if users:
            raise ApiError(409, f"video {video_id!r} is in use by comparison {', '.join(users)} (queued or running); "
                           "delete it once that comparison has finished, or delete the comparison first")
        Path(row.path).unlink(missing_ok=True)

    async def _remove_video(self, row: VideoRow) -> None:
        Path(row.path).unlink(missing_ok=True)
        await self.store.delete_video(row.id)

    # ---- calibrations

    async def add_calibration(self, owner: str, upload: UploadedFile) -> CalibrationRow:
        """Check an uploaded calibration (text, within the size limit, cameras in it), keep it under
        ``calibrations/`` with the suffix its format has, and store its row (or neither)."""
        fmt = await asyncio.to_thread(calibration_format, upload.path, "calibration", self.limits.max_calibration_bytes)
        calibration_id = new_id("cal")
        path = move_into(upload, self.data_dir / "calibrations" / f"{calibration_id}{SUFFIXES[fmt]}")  # the reader's cue
        try:
            row = CalibrationRow(
                id=calibration_id, owner=owner, path=str(path), filename=upload.filename, bytes=upload.bytes, format=fmt,
                cameras=await asyncio.to_thread(count_cameras, path, "calibration"), created_at=time.time(),
            )
            await self.store.add_calibration(row)
        except BaseException:
            path.unlink(missing_ok=True)  # never a file without a row
            raise
        return row

    async def calibration(self, owner: str, calibration_id: str) -> CalibrationRow:
        row = await self.store.calibration(owner, calibration_id)
        if row is None:
            raise ApiError(404, f"no calibration {calibration_id!r} (upload it with POST /v1/calibrations; calibrations "
                           f"expire after serve.retention_hours = {self.limits.retention_hours:g})")
        return row

    async def delete_calibration(self, owner: str, calibration_id: str) -> None:
        """Delete an uploaded calibration; 409 while a queued or running comparison uses it."""
        row = await self.calibration(owner, calibration_id)
        users = await self.store.delete_calibration_unless_used(row.id)
        if users:
            raise ApiError(409, f"calibration {calibration_id!r} is in use by comparison {', '.join(users)} (queued or "
                           "running); delete it once that comparison has finished, or delete the comparison first")
        Path(row.path).unlink(missing_ok=True)

    # ---- comparisons

    async def check_queue(self, owner: str) -> None:
        """429 when this key, or the server, has as many comparisons waiting as it may (a cheap early answer,
        before the body is read; the limits are held by the insert itself, :meth:`JobStore.add_job`)."""
        mine, total = await self.store.count("queued", owner), await self.store.count("queued")
        if mine >= self.limits.max_queued_per_key or total >= self.limits.max_queued_total:
            raise self._queue_full(mine, total)

    def _queue_full(self, mine: int, total: int) -> ApiError:
        which = (
            f"this key has {mine} comparisons queued (serve.max_queued_per_key = {self.limits.max_queued_per_key})"
            if mine >= self.limits.max_queued_per_key
            else f"{total} comparisons are queued (serve.max_queued_total = {self.limits.max_queued_total})"
        )
        wait = self._retry_after()
        return ApiError(429, f"{which}; retry in {wait} s", {"Retry-After": str(wait)})

    def _retry_after(self) -> int:
        mean = self.metrics.mean_job_seconds() or 10.0
        return max(1, min(600, math.ceil(mean / max(1, self.limits.workers))))

    async def create_comparison(self, owner: str, form: Form, idempotency_key: Optional[str]) -> tuple[JobRow, bool]:
        """Validate the form, keep its videos, queue the job: ``(job, created)``."""
        action = (form.text("action") or "").strip()
        differences = [d for d in form.fields.get("differences", []) if d.strip()] or None
        n_text = form.text("n_differences")
        n_differences = _int_field("n_differences", n_text) if n_text not in (None, "") else None
        count = len(differences) if differences is not None else n_differences
        if count is not None and count > self.limits.max_statements:
            raise ApiError(
                422, f"{count} statements asked for; at most serve.max_statements = {self.limits.max_statements} "
                "per comparison: split them over several comparisons",
            )
        pose, report = _bool_field(form, "pose"), _bool_field(form, "report")
        callback_url = await self._callback_url(owner, form.text("callback_url"))
        sources = {side: await self._video_source(owner, form, side) for side in ("a", "b")}
        setups = {
            side: await side_setup(form, side, pose=pose, most=self.limits.max_views_per_side,
                                   video=lambda video_id: self.video(owner, video_id),
                                   calibration=lambda calibration_id: self.calibration(owner, calibration_id))
            for side in ("a", "b")
        }
        job_id = new_id("cmp")
        try:  # the Python API's own checks and words, before any video is kept (the paths are not opened)
            build_sample("a.mp4", "b.mp4", action, differences=differences, n_differences=n_differences)
        except ViddiffError as exc:
            raise ApiError(422, str(exc)) from None
        kept: list[VideoRow] = []
        try:
            paths, names = {}, {}
            for side, source in sources.items():
                if isinstance(source, VideoRow):
                    paths[side], names[side] = source.path, source.filename
                else:
                    kept.append(await self._keep_video(owner, source, f"video_{side}", job_id=job_id))
                    paths[side], names[side] = kept[-1].path, kept[-1].filename
            spec = JobSpec(
                job_id=job_id, video_a=paths["a"], video_b=paths["b"], action=action, differences=differences,
                n_differences=n_differences, pose=pose,
                report_path=str(self.data_dir / "reports" / f"{job_id}.html") if report else None,
                video_names=(names["a"], names["b"]),
                views_a=[v.path for v in setups["a"].views], views_b=[v.path for v in setups["b"].views],
                calibration_a=setups["a"].calibration_path, calibration_b=setups["b"].calibration_path,
                view_names=([v.filename for v in setups["a"].views], [v.filename for v in setups["b"].views]),
                calibration_names=(setups["a"].calibration_name, setups["b"].calibration_name),
            )
            stored_id, created = await self.store.add_job(
                owner, job_id, spec.model_dump(), action=action, mode="closed" if differences else "open",
                report=report, idempotency_key=idempotency_key, videos=kept,
                uses=[*(src.id for src in sources.values() if isinstance(src, VideoRow)),
                      *(v.id for setup in setups.values() for v in setup.views)],
                uses_calibrations=[setup.calibration.id for setup in setups.values() if setup.calibration],
                max_queued_per_key=self.limits.max_queued_per_key, max_queued_total=self.limits.max_queued_total,
            )
        except BaseException as exc:
            for row in kept:  # their rows were never stored
                Path(row.path).unlink(missing_ok=True)
            if isinstance(exc, QueueFull):
                raise self._queue_full(exc.mine, exc.total) from None
            if isinstance(exc, VideoGone):
                raise ApiError(404, f"{exc.what} {exc.video_id!r} was deleted while this comparison was being created") from None
            raise
        if not created:  # a concurrent retry won the race
            for row in kept:
                Path(row.path).unlink(missing_ok=True)
        else:
            if callback_url:
                await self.store.save_webhook(job_id, Webhook(url=callback_url))
        job = await self.store.job(stored_id)  # as stored: a worker may take it as soon as it is submitted
        assert job is not None
        if created:
            job_log.queued(job)
            self.executor.submit(spec)
        return job, created

    async def _callback_url(self, owner: str, given: Optional[str]) -> Optional[str]:
        """Where this comparison's webhook goes: ``callback_url`` of the form, else the key's; checked now."""
        key = await self.store.key_webhook(owner)
        url = (given or "").strip() or (key[1] if key else None)
        if not url:
            return None
        if key is None:
            raise ApiError(422, "callback_url: webhooks are signed with the key's webhook secret, and this key has "
                           "none (keys made before webhooks, and --dev): make one with viddiff serve keys create")
        try:
            check_url(url, self.webhooks.allow)
        except RefusedTarget as exc:
            raise ApiError(422, f"callback_url: {exc}") from None
        return url

    async def _send_webhook(self, row: JobRow) -> None:
        """Start sending a finished job's pending webhook: the comparison as it ended, signed."""
        webhook, key = await self.store.webhook(row.id), await self.store.key_webhook(row.owner)
        if webhook is None or webhook.state != "pending" or key is None:
            return
        body = (await self.comparison(row)).model_dump_json(exclude={"webhook"}).encode()
        self.webhooks.deliver_later(row.id, webhook, key[0], row.status, body)

    async def _video_source(self, owner: str, form: Form, side: str) -> Union[UploadedFile, VideoRow]:
        """The file sent for ``video_{side}``, or the uploaded video its ``video_{side}_id`` names."""
        upload = form.files.get(f"video_{side}")
        ref = form.text(f"video_{side}_id")
        if upload is not None and ref:
            raise ApiError(422, f"give video_{side} (a file) or video_{side}_id (an uploaded video), not both")
        if upload is not None:
            return upload
        if ref:
            return await self.video(owner, ref.strip())
        if f"video_{side}" in form.fields:
            raise ApiError(422, f"video_{side} must be a file (curl: -F video_{side}=@{side}.mp4)")
        raise ApiError(422, f"video_{side} is missing: send a file, or video_{side}_id of a video uploaded before")

    async def job(self, owner: str, job_id: str) -> JobRow:
        row = await self.store.job(job_id, owner)
        if row is None:
            raise ApiError(404, f"no comparison {job_id!r}")
        return row

    async def comparison(self, row: JobRow) -> Comparison:
        result = ComparisonResult.model_validate_json(row.result) if row.result else None
        partial = [] if result else [
            DifferenceResult.model_validate(json.loads(data)["difference"])
            for data in await self.store.events_of_type(row.id, "verdict")
        ]
        return Comparison(
            id=row.id, status=row.status, action=row.action, mode=row.mode, created_at=row.created_at,
            started_at=row.started_at, finished_at=row.finished_at, progress=row.progress, result=result,
            partial=partial, error=row.error, report=row.report, webhook=await self.store.webhook(row.id),
            links=links(row.id),
        )

    async def delete_comparison(self, row: JobRow) -> None:
        """Cancel it if it is queued or running (its model calls stop), then delete its videos, events, report."""
        if row.status not in FINISHED:
            await self.executor.cancel(row.id)
        for video in await self.store.videos_of_job(row.id):
            await self._remove_video(video)
        if row.spec.get("report_path"):
            Path(row.spec["report_path"]).unlink(missing_ok=True)
        await self.store.delete_job(row.id)
        self.broker.notify(row.id)

    # ---- updates from the executor

    async def on_update(self, update: JobUpdate) -> None:
        """Store an update; while the store is locked by another process the job waits, nothing is lost."""
        while True:
            try:
                await self._record(update)
                break
            except StoreBusy:
                log.warning("job %s: the job store is locked by another process; its update waits", update.job_id)
                await asyncio.sleep(1.0)
        self.broker.notify(update.job_id)

    async def _record(self, update: JobUpdate) -> None:
        if isinstance(update, Started):
            await self.store.mark_started(update.job_id)
            self.metrics.job_started(update.job_id)
            job_log.started(await self.store.job(update.job_id))
        elif isinstance(update, Emitted) and update.event.type == "result":
            # stored done with its result before any client can read the event (the store calls run off the
            # event loop, so a stream could otherwise end, and its client ask, before the job's end is stored)
            if await self.store.add_result(update.job_id, update.event.model_dump_json(),
                                           update.event.result.model_dump_json()):
                await self._observe(update.job_id)
        elif isinstance(update, Emitted):
            event = update.event
            progress = _advanced(await self.store.progress(update.job_id), event.type, event)
            if event.type == "verdict":
                self.metrics.verdict(update.job_id)
                if event.difference.prediction is None:
                    self.metrics.invalid_verdicts.inc()
            await self.store.add_event(update.job_id, event.type, event.model_dump_json(), progress)
        elif isinstance(update, Ended):
            await self._end(update)

    async def _end(self, update: Ended) -> None:
        result = None
        row = await self.store.job(update.job_id)
        error = update.error if update.error is None or row is None else without_paths(
            update.error, {**_file_names(JobSpec.model_validate(row.spec)), str(self.data_dir): "the server's data dir"}
        )
        event = None
        if update.status == "done":  # normally stored already, with its result event (_record)
            for data in await self.store.events_of_type(update.job_id, "result"):
                result = ResultEvent.model_validate_json(data).result.model_dump_json()
        else:  # its last event and its end in one transaction, and neither after a result
            event = (update.status, json.dumps({"type": update.status, "error": error}))
        if update.error_type == "EndpointError":
            self.metrics.model_call_errors.inc()
        if await self.store.finish(update.job_id, update.status, error=error, result=result, event=event):
            await self._observe(update.job_id)

    async def _observe(self, job_id: str) -> None:
        """A job just ended: its metrics, its log line, its webhook."""
        row = await self.store.job(job_id)
        if row is not None:
            self.metrics.job_ended(row)
            job_log.ended(row)
            await self._send_webhook(row)

    # ---- retention

    async def _expire_forever(self) -> None:
        interval = min(60.0, self.limits.retention_hours * 3600 / 4)
        while True:
            await asyncio.sleep(interval)
            try:
                await self.expire()
            except Exception:  # a failed sweep is retried next time; the server goes on
                log.exception("retention sweep failed")

    async def expire(self) -> int:
        """Delete finished comparisons and videos older than ``serve.retention_hours``; how many went."""
        cutoff = time.time() - self.limits.retention_hours * 3600
        gone = 0
        busy = {path for row in await self.store.jobs_in("queued", "running")
                for path in JobSpec.model_validate(row.spec).files()}
        for row in await self.store.finished_jobs_created_before(cutoff):
            for video in await self.store.videos_of_job(row.id):
                if video.path not in busy:
                    await self._remove_video(video)
            if row.spec.get("report_path"):
                Path(row.spec["report_path"]).unlink(missing_ok=True)
            await self.store.delete_job(row.id)
            gone += 1
        for video in await self.store.videos_created_before(cutoff):
            if video.path not in busy:
                await self._remove_video(video)
                gone += 1
        for calibration in await self.store.calibrations_created_before(cutoff):
            if calibration.path not in busy:
                Path(calibration.path).unlink(missing_ok=True)
                await self.store.delete_calibration(calibration.id)
                gone += 1
        return gone


def links(job_id: str) -> Links:
    base = f"/v1/comparisons/{job_id}"
    return Links(self=base, events=f"{base}/events", report=f"{base}/report")


def calibration_model(row: CalibrationRow) -> Calibration:
    return Calibration(id=row.id, filename=row.filename, bytes=row.bytes, format=row.format, cameras=row.cameras,
                       created_at=row.created_at)


def video_model(row: VideoRow) -> Video:
    return Video(
        id=row.id, filename=row.filename, bytes=row.bytes, kind=row.kind, duration_s=row.duration_s, width=row.width,
        height=row.height, n_frames=row.n_frames, created_at=row.created_at,
    )


def _file_names(spec: JobSpec) -> dict[str, str]:
    """How a client knows each of a job's files: by the field that named it (``views_a[1]``, ``calibration_b``)."""
    names = {spec.video_a: "video_a", spec.video_b: "video_b"}
    for side, views, calibration in (("a", spec.views_a, spec.calibration_a), ("b", spec.views_b, spec.calibration_b)):
        names.update({path: f"views_{side}[{i}]" for i, path in enumerate(views)})
        if calibration:
            names[calibration] = f"calibration_{side}"
    return names


def _advanced(progress: Progress, type_: str, event) -> Progress:
    if type_ == "proposal":
        return progress.model_copy(update={"step": "localizing", "differences": len(event.differences)})
    if type_ == "segmentation":
        return progress.model_copy(update={"step": "judging"})
    if type_ == "verdict":
        return progress.model_copy(update={"decided": progress.decided + 1})
    return progress


def _int_field(name: str, text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ApiError(422, f"{name} must be a whole number, got {text!r}") from None


def _bool_field(form: Form, name: str) -> bool:
    text = (form.text(name) or "false").strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise ApiError(422, f"{name} must be true or false, got {text!r}")


def _metrics_token(variable: Optional[str]) -> Optional[str]:
    if variable is None:
        return None
    token = os.environ.get(variable, "").strip()
    if not token:
        raise ViddiffError(f"serve.metrics_token_env names {variable}, which is not set (or empty) in the server's environment")
    return token
