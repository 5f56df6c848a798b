"""The service behind the HTTP routes: the job store, the executor, keys, limits, events, metrics, retention.

It knows nothing of HTTP beyond :class:`ApiError`; :mod:`viddiff.serve.app` maps routes onto it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

from viddiff.api import ComparisonResult, DifferenceResult, ResultEvent, build_sample
from viddiff.config import Config
from viddiff.errors import ViddiffError
from viddiff.serve.errors import ApiError
from viddiff.serve.executor import Emitted, Ended, Executor, JobSpec, JobUpdate, Started
from viddiff.serve.jobs import JobRow, JobStore, VideoRow, new_id
from viddiff.serve.keys import key_hash
from viddiff.serve.limits import RateLimiter, check_video
from viddiff.serve.models import FINISHED, Comparison, Links, Progress, Video
from viddiff.serve.uploads import Form, UploadedFile, move_into

log = logging.getLogger(__name__)
DEV_OWNER = "dev"
TERMINAL_EVENTS = ("result", "failed", "cancelled")


@dataclass
class Metrics:
    """Counters since start; gauges (queue, jobs by state) are read when scraped."""

    job_seconds: dict[str, list[float]] = field(default_factory=dict)
    """Per final status: [count, sum of seconds from start to end]."""
    model_call_errors: int = 0
    invalid_verdicts: int = 0

    def observe(self, status: str, seconds: float) -> None:
        count, total = self.job_seconds.get(status, [0, 0.0])
        self.job_seconds[status] = [count + 1, total + seconds]

    def mean_job_seconds(self) -> Optional[float]:
        count, total = self.job_seconds.get("done", [0, 0.0])
        return total / count if count else None


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
        self.store = JobStore(self.data_dir / "serve.sqlite")
        self.rate = RateLimiter(self.limits.requests_per_minute)
        self.broker = Broker()
        self.metrics = Metrics()
        self._retention_task: Optional[asyncio.Task] = None

    @property
    def tmp_dir(self) -> Path:
        return self.data_dir / "tmp"

    # ---- life

    async def start(self) -> None:
        shutil.rmtree(self.tmp_dir, ignore_errors=True)  # uploads cut off by a stop
        await self.executor.start(self.on_update)
        for row in self.store.requeue_unfinished():
            self.executor.submit(JobSpec.model_validate(row.spec))
        self._retention_task = asyncio.create_task(self._expire_forever(), name="viddiff-retention")

    async def stop(self) -> None:
        if self._retention_task is not None:
            self._retention_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._retention_task
        await self.executor.shutdown()
        self.store.requeue_unfinished()  # the jobs it stopped wait for the next start, and say so meanwhile
        self.store.close()

    # ---- keys and rate

    def authenticate(self, authorization: Optional[str], client_host: Optional[str]) -> str:
        """The key's owner for ``Authorization: Bearer KEY``; in ``--dev`` mode a keyless local request is ``dev``."""
        if authorization:
            scheme, _, key = authorization.partition(" ")
            if scheme.lower() != "bearer" or not key.strip():
                raise ApiError(401, "send the key as 'Authorization: Bearer KEY'", {"WWW-Authenticate": "Bearer"})
            owner = self.store.owner_of(key_hash(key.strip()))
            if owner is None:
                raise ApiError(401, "unknown or revoked API key", {"WWW-Authenticate": "Bearer"})
        elif self.dev and client_host in ("127.0.0.1", "::1"):
            owner = DEV_OWNER
        else:
            raise ApiError(
                401, "an API key is required: 'Authorization: Bearer KEY' (make one with: viddiff serve keys create NAME)",
                {"WWW-Authenticate": "Bearer"},
            )
        self.rate.take(owner)
        return owner

    # ---- videos

    async def add_video(self, owner: str, upload: UploadedFile, label: str, job_id: Optional[str] = None) -> VideoRow:
        """Check an uploaded file against the limits, then keep it under ``videos/``."""
        claims = await asyncio.to_thread(check_video, upload.path, label, self.limits)
        video_id = new_id("vid")
        suffix = {"mp4": ".mp4", "matroska": ".mkv", "avi": ".avi"}[claims.kind]
        path = move_into(upload, self.data_dir / "videos" / f"{video_id}{suffix}")
        row = VideoRow(
            id=video_id, owner=owner, job_id=job_id, path=str(path), filename=upload.filename, bytes=upload.bytes,
            kind=claims.kind, duration_s=claims.duration_s, width=claims.width, height=claims.height,
            n_frames=claims.n_frames, created_at=time.time(),
        )
        self.store.add_video(row)
        return row

    def video(self, owner: str, video_id: str) -> VideoRow:
        row = self.store.video(owner, video_id)
        if row is None:
            raise ApiError(404, f"no video {video_id!r} (upload it with POST /v1/videos; videos expire after "
                           f"serve.retention_hours = {self.limits.retention_hours:g})")
        return row

    def delete_video(self, row: VideoRow) -> None:
        Path(row.path).unlink(missing_ok=True)
        self.store.delete_video(row.id)

    # ---- comparisons

    def check_queue(self, owner: str) -> None:
        """429 when this key, or the server, has as many comparisons waiting as it may."""
        mine, total = self.store.count("queued", owner), self.store.count("queued")
        if mine < self.limits.max_queued_per_key and total < self.limits.max_queued_total:
            return
        which = (
            f"this key has {mine} comparisons queued (serve.max_queued_per_key = {self.limits.max_queued_per_key})"
            if mine >= self.limits.max_queued_per_key
            else f"{total} comparisons are queued (serve.max_queued_total = {self.limits.max_queued_total})"
        )
        wait = self._retry_after()
        raise ApiError(429, f"{which}; retry in {wait} s", {"Retry-After": str(wait)})

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
        sources = {side: self._video_source(owner, form, side) for side in ("a", "b")}
        job_id = new_id("cmp")
        try:  # the Python API's own checks and words, before any video is kept (the paths are not opened)
            build_sample("a.mp4", "b.mp4", action, differences=differences, n_differences=n_differences)
        except ViddiffError as exc:
            raise ApiError(422, str(exc)) from None
        kept: list[VideoRow] = []
        try:
            paths = {}
            for side, source in sources.items():
                if isinstance(source, VideoRow):
                    paths[side] = source.path
                else:
                    row = await self.add_video(owner, source, f"video_{side}", job_id=job_id)
                    kept.append(row)
                    paths[side] = row.path
            spec = JobSpec(
                job_id=job_id, video_a=paths["a"], video_b=paths["b"], action=action, differences=differences,
                n_differences=n_differences, pose=pose,
                report_path=str(self.data_dir / "reports" / f"{job_id}.html") if report else None,
            )
            stored_id, created = self.store.add_job(
                owner, job_id, spec.model_dump(), action=action, mode="closed" if differences else "open",
                report=report, idempotency_key=idempotency_key,
            )
        except BaseException:
            for row in kept:
                self.delete_video(row)
            raise
        if not created:  # a concurrent retry won the race
            for row in kept:
                self.delete_video(row)
        else:
            self.executor.submit(spec)
        job = self.store.job(stored_id)
        assert job is not None
        return job, created

    def _video_source(self, owner: str, form: Form, side: str) -> Union[UploadedFile, VideoRow]:
        """The file sent for ``video_{side}``, or the uploaded video its ``video_{side}_id`` names."""
        upload = form.files.get(f"video_{side}")
        ref = form.text(f"video_{side}_id")
        if upload is not None and ref:
            raise ApiError(422, f"give video_{side} (a file) or video_{side}_id (an uploaded video), not both")
        if upload is not None:
            return upload
        if ref:
            return self.video(owner, ref.strip())
        if f"video_{side}" in form.fields:
            raise ApiError(422, f"video_{side} must be a file (curl: -F video_{side}=@{side}.mp4)")
        raise ApiError(422, f"video_{side} is missing: send a file, or video_{side}_id of a video uploaded before")

    def job(self, owner: str, job_id: str) -> JobRow:
        row = self.store.job(job_id, owner)
        if row is None:
            raise ApiError(404, f"no comparison {job_id!r}")
        return row

    def comparison(self, row: JobRow) -> Comparison:
        result = ComparisonResult.model_validate_json(row.result) if row.result else None
        partial = [] if result else [
            DifferenceResult.model_validate(json.loads(data)["difference"])
            for data in self.store.events_of_type(row.id, "verdict")
        ]
        return Comparison(
            id=row.id, status=row.status, action=row.action, mode=row.mode, created_at=row.created_at,
            started_at=row.started_at, finished_at=row.finished_at, progress=row.progress, result=result,
            partial=partial, error=row.error, report=row.report, links=links(row.id),
        )

    async def delete_comparison(self, row: JobRow) -> None:
        """Cancel it if it is queued or running (its model calls stop), then delete its videos, events, report."""
        if row.status not in FINISHED:
            await self.executor.cancel(row.id)
        for video in self.store.videos_of_job(row.id):
            self.delete_video(video)
        if row.spec.get("report_path"):
            Path(row.spec["report_path"]).unlink(missing_ok=True)
        self.store.delete_job(row.id)
        self.broker.notify(row.id)

    # ---- updates from the executor

    async def on_update(self, update: JobUpdate) -> None:
        if isinstance(update, Started):
            self.store.mark_started(update.job_id)
        elif isinstance(update, Emitted) and update.event.type == "result":  # the job is done at its result
            self._end(Ended(update.job_id, "done"), update.event)
        elif isinstance(update, Emitted):
            event = update.event
            progress = _advanced(self.store.progress(update.job_id), event.type, event)
            if event.type == "verdict" and event.difference.prediction is None:
                self.metrics.invalid_verdicts += 1
            self.store.add_event(update.job_id, event.type, event.model_dump_json(), progress)
        elif isinstance(update, Ended):
            self._end(update)
        self.broker.notify(update.job_id)

    def _end(self, update: Ended, result: Optional[ResultEvent] = None) -> None:
        """Store the job's end with its last event (``result`` for ``done``), once: a job is done at its result
        event, and the executor's ``Ended`` that follows it changes nothing."""
        if update.status == "done":
            event = ("result", result.model_dump_json()) if result is not None else None
        else:
            event = (update.status, json.dumps({"type": update.status, "error": update.error}))
        if update.error_type == "EndpointError":
            self.metrics.model_call_errors += 1
        if self.store.finish(update.job_id, update.status, error=update.error, event=event,
                             result=result.result.model_dump_json() if result is not None else None):
            row = self.store.job(update.job_id)
            if row is not None and row.started_at is not None and row.finished_at is not None:
                self.metrics.observe(update.status, row.finished_at - row.started_at)

    # ---- retention

    async def _expire_forever(self) -> None:
        interval = min(60.0, self.limits.retention_hours * 3600 / 4)
        while True:
            await asyncio.sleep(interval)
            try:
                self.expire()
            except Exception:  # a failed sweep is retried next time; the server goes on
                log.exception("retention sweep failed")

    def expire(self) -> int:
        """Delete finished comparisons and videos older than ``serve.retention_hours``; how many went."""
        cutoff = time.time() - self.limits.retention_hours * 3600
        gone = 0
        busy = {v for row in self.store.jobs_in("queued", "running") for v in (row.spec["video_a"], row.spec["video_b"])}
        for row in self.store.finished_jobs_created_before(cutoff):
            for video in self.store.videos_of_job(row.id):
                if video.path not in busy:
                    self.delete_video(video)
            if row.spec.get("report_path"):
                Path(row.spec["report_path"]).unlink(missing_ok=True)
            self.store.delete_job(row.id)
            gone += 1
        for video in self.store.videos_created_before(cutoff):
            if video.path not in busy:
                self.delete_video(video)
                gone += 1
        return gone

    # ---- metrics

    def prometheus(self) -> str:
        """``/metrics`` in the Prometheus text format."""
        lines = [
            "# HELP viddiff_queue_length Comparisons waiting for a worker.",
            "# TYPE viddiff_queue_length gauge",
            f"viddiff_queue_length {self.executor.queued()}",
            "# HELP viddiff_jobs Comparisons in the store by state.",
            "# TYPE viddiff_jobs gauge",
        ]
        counts = self.store.counts_by_status()
        for status in ("queued", "running", "done", "failed", "cancelled"):
            lines.append(f'viddiff_jobs{{state="{status}"}} {counts.get(status, 0)}')
        lines += [
            "# HELP viddiff_job_seconds Seconds from a worker taking a comparison to its end, since the server started.",
            "# TYPE viddiff_job_seconds summary",
        ]
        for status, (count, total) in sorted(self.metrics.job_seconds.items()):
            lines.append(f'viddiff_job_seconds_count{{state="{status}"}} {count}')
            lines.append(f'viddiff_job_seconds_sum{{state="{status}"}} {total:.6f}')
        lines += [
            "# HELP viddiff_model_call_errors_total Comparisons stopped by a model endpoint's error.",
            "# TYPE viddiff_model_call_errors_total counter",
            f"viddiff_model_call_errors_total {self.metrics.model_call_errors}",
            "# HELP viddiff_invalid_verdicts_total Verdicts the model never answered validly.",
            "# TYPE viddiff_invalid_verdicts_total counter",
            f"viddiff_invalid_verdicts_total {self.metrics.invalid_verdicts}",
        ]
        return "\n".join(lines) + "\n"


def links(job_id: str) -> Links:
    base = f"/v1/comparisons/{job_id}"
    return Links(self=base, events=f"{base}/events", report=f"{base}/report")


def video_model(row: VideoRow) -> Video:
    return Video(
        id=row.id, filename=row.filename, bytes=row.bytes, kind=row.kind, duration_s=row.duration_s, width=row.width,
        height=row.height, n_frames=row.n_frames, created_at=row.created_at,
    )


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
