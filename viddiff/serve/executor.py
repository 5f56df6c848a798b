"""Where comparisons run: the :class:`Executor` interface the service drives, and :class:`LocalExecutor`.

The API and the job store only ever submit a :class:`JobSpec`, cancel a job by id, and receive
:data:`JobUpdate` s through one callback; they never see how or where a comparison runs. So another
executor (Ray actors on GPU machines) can be added beside :class:`LocalExecutor` without touching them.

:class:`WorkerPool` holds what every executor shares (the queue, cancellation, the job's end states);
:class:`LocalExecutor` is a bounded pool of worker tasks in the server's event loop, all driving one shared
:class:`viddiff.api.VidDiff` (models load once). Each job is ``VidDiff.aevents`` turned into the app events of
``VidDiff.astream`` by :class:`viddiff.api.EventView`, the same conversion ``viddiff compare --json-lines``
uses; this module imports no web framework.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import AsyncIterator, Awaitable, Callable, Literal, Optional, Protocol, Union

from pydantic import BaseModel

from viddiff.api import CompareEvent, EventView, VidDiff, build_sample
from viddiff.errors import ViddiffError
from viddiff.methods.events import Finished
from viddiff.methods.viddiff import PairRun
from viddiff.schema import Mode, Sample
from viddiff.serve.models import ActorsHealth

log = logging.getLogger(__name__)


class JobSpec(BaseModel):
    """Everything a worker needs to run one comparison (the API has checked it)."""

    job_id: str
    video_a: str
    video_b: str
    action: str
    differences: Optional[list[str]] = None
    n_differences: Optional[int] = None
    pose: bool = False
    """Measure each difference from body pose (``pose.evidence``)."""
    report_path: Optional[str] = None
    """Where to write the self-contained HTML report once the comparison succeeded; ``None``: no report."""
    video_names: Optional[tuple[str, str]] = None
    """The names the user's files had (A, B), for the report; ``None``: the stored files' own names."""
    views_a: list[str] = []
    views_b: list[str] = []
    """More videos of each performance's take, from its other calibrated cameras (3D pose evidence only), in the
    order of their cameras in the calibration after the main video's."""
    calibration_a: Optional[str] = None
    calibration_b: Optional[str] = None
    """The calibration of each performance's cameras (set exactly where it has views)."""
    view_names: tuple[list[str], list[str]] = ([], [])
    calibration_names: tuple[Optional[str], Optional[str]] = (None, None)
    """The names the user's files of the views and calibrations had, for the report (like ``video_names``)."""

    def file_names(self) -> dict[str, str]:
        """The user's names of the views and calibrations, by their paths here (the report shows them)."""
        names = dict(zip([*self.views_a, *self.views_b], [*self.view_names[0], *self.view_names[1]]))
        for path, name in zip((self.calibration_a, self.calibration_b), self.calibration_names):
            if path and name:
                names[path] = name
        return names

    def files(self) -> list[str]:
        """Every file the job reads: the videos, their views, the calibrations (what must stay while it runs)."""
        return [self.video_a, self.video_b, *self.views_a, *self.views_b,
                *(path for path in (self.calibration_a, self.calibration_b) if path)]


@dataclass(frozen=True)
class Started:
    """A worker took the job."""

    job_id: str


@dataclass(frozen=True)
class Emitted:
    """One event of ``VidDiff.astream`` (proposal, segmentation, verdict, result), in order."""

    job_id: str
    event: CompareEvent


@dataclass(frozen=True)
class Ended:
    """The job is over: ``done`` (its result was emitted), ``failed`` (``error`` says why, worded as the CLI
    words it) or ``cancelled``."""

    job_id: str
    status: Literal["done", "failed", "cancelled"]
    error: Optional[str] = None
    error_type: Optional[str] = None
    """The exception's class name (``EndpointError``: a model call failed), for the metrics."""


JobUpdate = Union[Started, Emitted, Ended]
OnUpdate = Callable[[JobUpdate], Awaitable[None]]
"""Receives every update of every job, in order per job; awaited before the job goes on."""


class Executor(Protocol):
    """Runs submitted comparisons somewhere and reports on them through ``on_update``."""

    async def start(self, on_update: OnUpdate) -> None:
        """Load what the comparisons need and start taking jobs."""

    def submit(self, spec: JobSpec) -> None:
        """Queue a job; it runs when a worker is free (jobs start in the order submitted)."""

    async def cancel(self, job_id: str) -> bool:
        """Stop a queued or running job (its model calls are cancelled); ``False`` if it is not here."""

    def queued(self) -> int:
        """Jobs submitted and not yet started."""

    def running(self) -> int:
        """Jobs being run now."""

    def actors(self) -> Optional[ActorsHealth]:
        """The Ray actors' health; ``None`` for an executor without actors."""

    async def shutdown(self) -> None:
        """Stop every job (they stay unfinished, to be re-run after a restart) and release the models."""


def failure_message(exc: BaseException) -> str:
    """Why a job failed, in the words ``viddiff compare`` prints after ``viddiff: error:``; anything else is
    a bug, named by its type (the traceback goes to the server's log)."""
    if isinstance(exc, ViddiffError):
        return str(exc)
    return f"internal error ({type(exc).__name__}); the server log has the details"


async def comparison_events(vd: VidDiff, spec: JobSpec) -> AsyncIterator[CompareEvent]:
    """One job's events: ``VidDiff.aevents`` as the app events of ``VidDiff.astream``, the report written
    before the result is passed on (wherever the comparison runs). The result carries the ``stand-in: ...``
    notes ``VidDiff.acompare`` adds; they are found in a thread, as finding them may ask a local model server."""
    sample, mode = job_sample(spec)
    stand_ins: list[str] = []
    view = EventView(spec.action, lambda result: stand_ins)  # read when the result is converted, after Finished
    events = vd.aevents(sample, mode)
    async with contextlib.aclosing(events):
        async for event in events:
            if isinstance(event, Finished):
                stand_ins = await asyncio.to_thread(vd.stand_in_notes, event.result)
                if spec.report_path:
                    videos = event.videos or await vd.load_videos(sample)
                    run = PairRun(sample, videos, event.result)
                    await asyncio.to_thread(_write_report, Path(spec.report_path), run, vd, spec)
            yield view.convert(event)


def job_sample(spec: JobSpec) -> tuple[Sample, Mode]:
    """The job as the Python API's ``Sample``: a side with views is one performance from several calibrated
    cameras (its videos, main first, and its calibration), as ``compare`` takes it."""
    sides = [[video, *views] if views else video for video, views in ((spec.video_a, spec.views_a),
                                                                       (spec.video_b, spec.views_b))]
    return build_sample(
        *sides, spec.action, differences=spec.differences, n_differences=spec.n_differences,
        calibration_a=spec.calibration_a, calibration_b=spec.calibration_b,
    )


class WorkerPool(ABC):
    """Worker tasks taking submitted jobs in order: what every :class:`Executor` shares. A subclass says how
    one job runs (:meth:`_execute`); the pool reports it started, and ended done, failed or cancelled."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[JobSpec] = asyncio.Queue()
        self._waiting: set[str] = set()
        self._running: dict[str, asyncio.Task] = {}
        self._tasks: list[asyncio.Task] = []
        self._on_update: Optional[OnUpdate] = None
        self._stopping = False

    @abstractmethod
    async def _execute(self, spec: JobSpec) -> Ended:
        """Run one job, emitting its events; how it ended (a failure may also be raised)."""

    def _start_workers(self, count: int, name: str) -> None:
        self._tasks = [asyncio.create_task(self._work(), name=f"{name}-{i}") for i in range(count)]

    def submit(self, spec: JobSpec) -> None:
        self._waiting.add(spec.job_id)
        self._queue.put_nowait(spec)

    async def cancel(self, job_id: str) -> bool:
        if job_id in self._waiting:
            self._waiting.discard(job_id)  # its worker skips it
            await self._emit(Ended(job_id, "cancelled"))
            return True
        task = self._running.get(job_id)
        if task is None:
            return False
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(asyncio.wait({task}))
        return True

    def queued(self) -> int:
        return len(self._waiting)

    def running(self) -> int:
        return len(self._running)

    def actors(self) -> Optional[ActorsHealth]:
        return None

    async def _stop_workers(self) -> None:
        """Stop the workers and their jobs, which stay unfinished (to be re-run after a restart)."""
        self._stopping = True
        for task in [*self._tasks, *self._running.values()]:
            task.cancel()
        await asyncio.gather(*self._tasks, *self._running.values(), return_exceptions=True)

    async def _emit(self, update: JobUpdate) -> None:
        assert self._on_update is not None, "start() first"
        await self._on_update(update)

    async def _work(self) -> None:
        while True:
            spec = await self._queue.get()
            if spec.job_id not in self._waiting:
                continue  # cancelled while queued
            self._waiting.discard(spec.job_id)
            task = asyncio.create_task(self._run(spec), name=f"viddiff-job-{spec.job_id}")
            self._running[spec.job_id] = task
            try:
                await asyncio.shield(task)
            except asyncio.CancelledError:
                if not task.done():  # the worker itself is being stopped (shutdown): stop its job too
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)
                    raise
            except Exception:  # reporting the job failed (the store is unwritable): the worker goes on
                log.exception("job %s: its updates could not be recorded", spec.job_id)
            finally:
                self._running.pop(spec.job_id, None)

    async def _run(self, spec: JobSpec) -> None:
        try:  # a cancel may come while Started is being stored (the store is awaited): it still ends the job
            await self._emit(Started(spec.job_id))
            ended = await self._execute(spec)
        except asyncio.CancelledError:
            if self._stopping:  # left unfinished, to be re-run after a restart
                raise
            ended = Ended(spec.job_id, "cancelled")
        except Exception as exc:  # a job's failure is its own, never the pool's
            if not isinstance(exc, ViddiffError):
                log.exception("job %s failed", spec.job_id)
            ended = Ended(spec.job_id, "failed", failure_message(exc), type(exc).__name__)
        await self._emit(ended)


class LocalExecutor(WorkerPool):
    """A bounded pool of worker tasks in this process, on one shared ``VidDiff``.

    ``make_vid_diff(pose)`` builds the ``VidDiff`` for jobs without / with body-pose measuring; each is built
    once, on first need, and shared by every job after.
    """

    def __init__(self, make_vid_diff: Callable[[bool], VidDiff], workers: int):
        super().__init__()
        self._make = make_vid_diff
        self._workers = workers
        self._vid_diffs: dict[bool, VidDiff] = {}
        self._building = threading.Lock()  # workers ask from their threads; each VidDiff is built once

    async def start(self, on_update: OnUpdate) -> None:
        self._on_update = on_update
        await asyncio.to_thread(self._vid_diff, False)  # load before the first job (CLIP loads on first use)
        self._start_workers(self._workers, "viddiff-worker")

    async def shutdown(self) -> None:
        await self._stop_workers()
        for vd in self._vid_diffs.values():
            await vd.aclose()
        self._vid_diffs.clear()

    def _vid_diff(self, pose: bool) -> VidDiff:
        with self._building:
            if pose not in self._vid_diffs:
                vd = self._make(pose)
                if vd.config.localizer.method == "viterbi":
                    _ = vd.embedder  # CLIP loads now, once
                self._vid_diffs[pose] = vd
            return self._vid_diffs[pose]

    async def _execute(self, spec: JobSpec) -> Ended:
        vd = await asyncio.to_thread(self._vid_diff, spec.pose)
        async for event in comparison_events(vd, spec):
            await self._emit(Emitted(spec.job_id, event))
        return Ended(spec.job_id, "done")


def _write_report(path: Path, run: PairRun, vd: VidDiff, spec: JobSpec) -> None:
    from viddiff.report.pages import write_comparison_report

    path.parent.mkdir(parents=True, exist_ok=True)
    write_comparison_report(path, run, vd.config, embed_videos=True, video_names=spec.video_names,
                            file_names=spec.file_names())
