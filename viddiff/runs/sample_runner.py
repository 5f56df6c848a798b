"""Runs a method over the samples of a run, each sample isolated from the others.

A sample that fails (an endpoint's 4xx, retries exhausted, invalid answers,
an unreadable video, a bug) is recorded in ``failures.jsonl`` and the run
goes on. An error every sample would hit (see ``failures.is_fatal``) or a
write to the results that fails stops the run: samples in flight are
cancelled, the calls they already made are recorded, and the error is raised
once, for the CLI's one line. The cost guard (``run.max_cost_usd``) admits
each sample before it starts; once the budget allows no more, the samples in
flight finish and the run returns what it has (``CostGuard.stop_reason`` says why).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Optional


from viddiff.backends.usage import UsageMeter
from viddiff.config import Config
from viddiff.console import Progress, stage_progress
from viddiff.runs.cost_guard import CostGuard, Reservation, sample_size
from viddiff.errors import ViddiffError
from viddiff.runs.failures import FailureLog, SampleFailure, describe_failure, interrupted, is_fatal
from viddiff.schema import Mode, Sample, SampleResult
from viddiff.store import ResultsStore

log = logging.getLogger(__name__)
VIDEO_STAGE = "video"


@dataclass
class RunProgress:
    """What this invocation did: new finished samples, failures, and whether anything was written."""

    results: dict[str, SampleResult] = field(default_factory=dict)
    failures: list[SampleFailure] = field(default_factory=list)
    wrote: bool = False


class _Stop(Exception):
    """Internal: a sample hit an error that ends the run."""

    def __init__(self, error: BaseException):
        super().__init__(str(error))
        self.error = error


class _StageTracker:
    """Where a sample is: ``video`` until its videos are read, then the first method stage not yet finished."""

    def __init__(self, stages: tuple[str, ...]):
        self.stages = stages
        self.finished: set[str] = set()
        self.videos_read = False

    def finish(self, stage: str) -> None:
        self.finished.add(stage)

    @property
    def current(self) -> str:
        if not self.videos_read:
            return VIDEO_STAGE
        return next((s for s in self.stages if s not in self.finished), self.stages[-1])


class SampleRunner:
    """One run's loop over its samples; ``method`` is ``VidDiff`` or an object with its runner interface."""

    def __init__(
        self,
        method: Any,
        cfg: Config,
        mode: Mode,
        store: ResultsStore,
        failure_log: FailureLog,
        guard: CostGuard,
        variant_of: Callable[[Sample], Sample],
    ):
        self.method = method
        self.cfg = cfg
        self.mode = mode
        self.store = store
        self.failure_log = failure_log
        self.guard = guard
        self.variant_of = variant_of
        """The sample as the method should see it (``--swap-videos``/``--same-video``)."""
        self.progress = RunProgress()
        self._bars: dict[str, Progress] = {}

    async def run(self, todo: list[tuple[int, Sample]]) -> RunProgress:
        """Process ``todo``; raises the run-ending error (a ``ViddiffError``) after recording what was paid for."""
        self._bars = stage_progress(self.method.stages, len(todo))
        sem = asyncio.Semaphore(self.cfg.run.max_samples_in_flight)
        tasks = [asyncio.create_task(self._guarded(sem, index, sample)) for index, sample in todo]
        try:
            for next_done in asyncio.as_completed(tasks):
                await next_done
                if self.guard.over_limit:  # a sample cost more than reserved: spend nothing more
                    await _cancel(tasks)
                    break
        except asyncio.CancelledError:  # Ctrl-C: say so at once, then stop the samples in flight
            in_flight = sum(not task.done() for task in tasks)
            log.warning(
                "stopping: cancelling %d unfinished samples (finished samples are saved); work in progress ends "
                "after its current step (one CLIP batch at most)", in_flight,
            )
            await _cancel(tasks)
            raise
        except _Stop as stop:
            await _cancel(tasks)
            raise stop.error from None
        finally:
            for bar in self._bars.values():
                bar.close()
            await self.method.client.aclose()
        return self.progress

    async def _guarded(self, sem: asyncio.Semaphore, index: int, sample: Sample) -> None:
        async with sem:
            reservation = await self.guard.admit(sample_size(sample, self.mode))
            if reservation is None:
                return
            meter = UsageMeter()
            tracker = _StageTracker(tuple(self.method.stages))
            try:
                result = await self._process(index, sample, meter, tracker)
            except asyncio.CancelledError:
                self.guard.release(reservation)
                self._record_interrupted(index, sample, meter, tracker)
                raise
            except Exception as exc:  # noqa: BLE001 - isolating one sample from the rest is the point
                self._on_failure(exc, index, sample, meter, tracker, reservation)
                return
            self._keep(result, reservation)

    async def _process(self, index: int, sample: Sample, meter: UsageMeter, tracker: _StageTracker) -> SampleResult:
        variant = self.variant_of(sample)
        videos = None
        if not _nothing_to_check(variant, self.mode):
            videos = await self.method.load_videos(variant)
        tracker.videos_read = True

        def on_stage(stage: str) -> None:
            tracker.finish(stage)
            self._bars[stage].update(1)

        return await self.method.aprocess(
            variant, self.mode, index=index, videos=videos, on_stage=on_stage, meter=meter
        )

    def _keep(self, result: SampleResult, reservation: Reservation) -> None:
        try:
            self.store.append(result)
            self.progress.wrote = True
            self.progress.results[result.sample_key] = result
            self.guard.finish(reservation, result.usage)
        except ViddiffError as exc:
            raise _Stop(exc) from None

    def _on_failure(
        self,
        exc: Exception,
        index: int,
        sample: Sample,
        meter: UsageMeter,
        tracker: _StageTracker,
        reservation: Reservation,
    ) -> None:
        usage = meter.by_stage()
        if is_fatal(exc):
            if usage:
                self._append_failure(interrupted(sample.sample_key, index, tracker.current, usage, str(exc)))
            raise _Stop(exc)
        failure = describe_failure(exc, sample_key=sample.sample_key, index=index, stage=tracker.current, usage=usage)
        if failure.kind == "internal":
            log.debug("sample %s: internal error", sample.sample_key, exc_info=exc)
        log.error("sample %s failed at %s: %s", sample.sample_key, failure.stage, failure.error)
        self._append_failure(failure)
        self.progress.failures.append(failure)
        try:
            self.guard.finish(reservation, usage)
        except ViddiffError as stop:
            raise _Stop(stop) from None

    def _record_interrupted(self, index: int, sample: Sample, meter: UsageMeter, tracker: _StageTracker) -> None:
        usage = meter.by_stage()
        if usage:
            self._append_failure(interrupted(sample.sample_key, index, tracker.current, usage, "the run stopped"))

    def _append_failure(self, failure: SampleFailure) -> None:
        try:
            self.failure_log.append(failure)
        except ViddiffError as exc:
            raise _Stop(exc) from None
        self.progress.wrote = True


async def _cancel(tasks: list[asyncio.Task]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def _nothing_to_check(sample: Sample, mode: Mode) -> bool:
    """A benchmark row whose differences have no ``a``/``b`` label: closed mode has nothing to ask about it."""
    return mode == "closed" and bool(sample.labels) and not sample.closed_differences()


def latest_failures(failures: list[SampleFailure], unfinished: set[str]) -> list[SampleFailure]:
    """The last recorded failure of each sample that is still unfinished, in sample order."""
    latest: dict[str, SampleFailure] = {}
    for failure in failures:
        if failure.sample_key in unfinished and failure.kind != "interrupted":
            latest[failure.sample_key] = failure
    return sorted(latest.values(), key=lambda f: f.index)


def error_entries(failures: list[SampleFailure]) -> list[dict[str, Optional[Any]]]:
    """``errors.json``: each failure without its usage (that goes to ``usage.json``)."""
    return [f.model_dump(mode="json", exclude={"usage"}, exclude_none=True) for f in failures]
