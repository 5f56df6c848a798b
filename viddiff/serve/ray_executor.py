"""``viddiff serve --ray ADDRESS``: the comparisons run on a pool of Ray actors, the service stays on the head.

The API, the job store, keys, limits and the event streams stay in the server process (the head): only
:class:`RayExecutor` knows that the work happens elsewhere. Each :class:`CompareActor` holds the server's
``VidDiff`` (chat client, a line to the head's cache, CLIP model: loaded once per actor, on a GPU of its own with
``ray.num_gpus: 1``) and runs up to ``serve.workers`` comparisons at once, so its CLIP batches their frames.
A comparison is a Ray streaming generator: each event (proposal, segmentation, each verdict, the result) is
sent back the moment the actor yields it, and the head stores and streams it on.

An actor that dies mid-job (killed, out of memory, its machine gone) loses the comparison, not the job: the
head runs it again on another actor, at least once in all. The dead actor gets no new job and is replaced
(:class:`viddiff.serve.ray_actors.ActorPool`). The re-run's model calls that had been answered
come from the cache, so it yields the same events; those the head already passed on are not repeated. The
cache is the head's, reached through Ray (:mod:`viddiff.runs.ray_cache`), so this holds across machines.

Nothing but Ray and the network is shared with the actors: the videos go to them through Ray's object store
and the report comes back with the events (:mod:`viddiff.serve.ray_files`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Optional, Union

from viddiff.api import CompareEvent, VidDiff
from viddiff.config import Config
from viddiff.errors import ViddiffError
from viddiff.runs.ray_cache import RemoteCache, start_cache_of_record
from viddiff.runs.ray_method import cluster_address, endpoint_environment, import_ray
from viddiff.serve.executor import Emitted, Ended, JobSpec, OnUpdate, WorkerPool, comparison_events, failure_message
from viddiff.serve.models import ActorsHealth
from viddiff.serve.ray_actors import ActorPlace, ActorPool
from viddiff.serve.ray_files import ReportFile, job_on_this_node, read_files, write_report

log = logging.getLogger(__name__)
MakeVidDiff = Callable[..., Callable[[bool], VidDiff]]
"""``make(cfg, cache)`` gives the server's ``make_vid_diff(pose)`` (``viddiff.serve.command.make_vid_diff_factory``)."""


@dataclass(frozen=True)
class JobFailed:
    """The comparison itself failed (the actor is fine): the job ends ``failed``."""

    error: str
    error_type: str


ActorItem = Union[CompareEvent, ReportFile, JobFailed]


class CompareActor:
    """The server's ``VidDiff`` on one Ray actor (its body): comparisons in, their events out as they happen."""

    def __init__(self, cfg: Config, make: MakeVidDiff, environment: dict[str, str], cache: Optional[Any]):
        os.environ.update(environment)
        self._make = make(cfg, RemoteCache(cache, str(cfg.cache.resolved_path())) if cache is not None else None)
        self._vid_diffs: dict[bool, VidDiff] = {}
        self._building = asyncio.Lock()

    async def ready(self) -> ActorPlace:
        """Loads the models (CLIP too) before the first job; says where the actor runs (logs, ``/healthz``)."""
        import ray

        await self._vid_diff(False)
        node_id = ray.get_runtime_context().get_node_id()
        address = next((n["NodeManagerAddress"] for n in ray.nodes() if n["NodeID"] == node_id), node_id)
        return ActorPlace(os.getpid(), address)  # the node's own address (get_node_ip_address is the machine's)

    async def watch(self) -> None:
        """Never returns: the head's call fails the moment this actor dies (:class:`ActorPool`)."""
        await asyncio.Event().wait()

    async def compare(self, spec: JobSpec, *files: bytes) -> AsyncIterator[ActorItem]:
        """The comparison's events, each as soon as it is made, its report just before the result; a failure
        of the comparison is the last item. Its files (videos, views, calibrations) come as bytes (from the
        object store), never as paths."""
        try:
            vd = await self._vid_diff(spec.pose)
            with job_on_this_node(spec, files) as here:
                async for event in comparison_events(vd, here):
                    if event.type == "result" and here.report_path:
                        yield ReportFile(Path(here.report_path).read_bytes())
                    yield event
        except Exception as exc:  # noqa: BLE001 - the job's failure is reported, the actor goes on
            if not isinstance(exc, ViddiffError):
                log.exception("job %s failed", spec.job_id)
            yield JobFailed(failure_message(exc), type(exc).__name__)

    async def close(self) -> None:
        for vd in self._vid_diffs.values():
            await vd.aclose()

    async def _vid_diff(self, pose: bool) -> VidDiff:
        async with self._building:
            if pose not in self._vid_diffs:
                self._vid_diffs[pose] = await asyncio.to_thread(self._build, pose)
            return self._vid_diffs[pose]

    def _build(self, pose: bool) -> VidDiff:
        vd = self._make(pose)
        if vd.config.localizer.method == "viterbi":
            _ = vd.embedder  # CLIP loads now, once
        return vd


@dataclass
class _Passed:
    """What the head has passed on of one job, so that a re-run on another actor repeats none of it."""

    kinds: set[str] = field(default_factory=set)
    verdicts: set[str] = field(default_factory=set)

    def is_new(self, event: CompareEvent) -> bool:
        if event.type == "verdict":
            key = event.difference.key
            new = key not in self.verdicts
            self.verdicts.add(key)
            return new
        new = event.type not in self.kinds
        self.kinds.add(event.type)
        return new


class RayExecutor(WorkerPool):
    """:class:`viddiff.serve.executor.Executor` on ``cfg.ray.actors`` Ray actors, ``cfg.serve.workers`` jobs each."""

    def __init__(self, cfg: Config, make: MakeVidDiff):
        super().__init__()
        self._ray = import_ray("viddiff serve --ray")
        self._cfg = cfg
        self._make = make
        self._pool: Optional[ActorPool] = None
        self._cache: Optional[Any] = None
        self._started_ray = False

    async def start(self, on_update: OnUpdate) -> None:
        ray, cfg = self._ray, self._cfg
        self._on_update = on_update
        if not ray.is_initialized():
            self._started_ray = True
            await asyncio.to_thread(ray.init, address=cluster_address(cfg), include_dashboard=False)
            _give_sigterm_back()
        actor_class = ray.remote(CompareActor).options(  # comparisons, ready, watch and close at once
            num_cpus=cfg.ray.num_cpus, num_gpus=cfg.ray.num_gpus, resources=cfg.ray.resources,
            max_concurrency=cfg.serve.workers + 3,
        )
        environment = endpoint_environment(cfg)
        self._cache = start_cache_of_record(ray, cfg.cache)
        self._pool = ActorPool(ray, lambda: actor_class.remote(cfg, self._make, environment, self._cache),
                               cfg.ray.actors)
        await self._pool.start()
        self._start_workers(cfg.ray.actors * cfg.serve.workers, "viddiff-ray-worker")

    def actors(self) -> Optional[ActorsHealth]:
        return self._pool.health() if self._pool is not None else None

    async def shutdown(self) -> None:
        await self._stop_workers()
        if self._pool is not None:
            await self._pool.shutdown()
        if self._cache is not None:
            try:  # a signal to the whole process group may have ended the cache actor already
                await self._cache.close.remote()
                self._ray.kill(self._cache)
            except Exception as exc:  # noqa: BLE001 - gone is as good as closed: it committed each store
                log.info("the cache actor was gone at shutdown (%s)", type(exc).__name__)
        if self._started_ray:
            await asyncio.to_thread(self._ray.shutdown)

    async def _execute(self, spec: JobSpec) -> Ended:
        """Run the job on the least busy actor; where that actor dies, again on another (at least once)."""
        assert self._pool is not None, "start() first"
        passed = _Passed()
        tried: list[int] = []
        videos = await asyncio.to_thread(self._put_files, spec)
        while True:
            actor, handle = await self._pool.take(avoid=tried)
            tried.append(actor)
            place = self._pool.place(actor)
            log.info("job %s runs on Ray actor %d (pid %d on %s)", spec.job_id, actor, place.pid if place else -1,
                     place.node_ip if place else "?")
            try:
                return await self._run_on(handle, actor, spec, videos, passed)
            except (self._ray.exceptions.RayActorError, self._ray.exceptions.ObjectLostError) as exc:
                if isinstance(exc, self._ray.exceptions.RayActorError):  # (an event lost with its node: the watch tells)
                    self._pool.lost(actor, handle)
                if len(tried) > self._pool.size:
                    raise ViddiffError(
                        f"the comparison was lost with {len(tried)} Ray actors in turn (the last: {exc}); "
                        "see the Ray logs (ray.init's session directory) for why they died"
                    ) from None
                log.warning("job %s: Ray actor %d died mid-job (%s); running it on another", spec.job_id, actor,
                            type(exc).__name__)
            finally:
                self._pool.release(actor)

    def _put_files(self, spec: JobSpec) -> list[Any]:
        """The job's files in the object store, once for all its tries."""
        try:
            data = read_files(spec)
        except OSError as exc:
            raise ViddiffError(f"a file of this comparison can no longer be read ({exc.strerror})") from None
        return [self._ray.put(item) for item in data]

    async def _run_on(self, handle: Any, actor: int, spec: JobSpec, videos: list[Any], passed: _Passed) -> Ended:
        """Stream the job's events from ``handle``; raises ``RayActorError`` if the actor dies meanwhile."""
        stream = handle.compare.remote(spec, *videos)
        try:
            async for ref in stream:
                item: ActorItem = await ref
                if isinstance(item, JobFailed):
                    return Ended(spec.job_id, "failed", item.error, item.error_type)
                if isinstance(item, ReportFile):
                    assert spec.report_path is not None, "a report comes only when asked for"
                    await asyncio.to_thread(write_report, Path(spec.report_path), item.data)
                    continue
                if passed.is_new(item):
                    await self._emit(Emitted(spec.job_id, item))
        except asyncio.CancelledError:
            self._ray.cancel(stream)
            raise
        if "result" not in passed.kinds:
            raise ViddiffError(f"the comparison on Ray actor {actor} ended without a result")
        return Ended(spec.job_id, "done")


def _give_sigterm_back() -> None:
    """``ray.init`` puts Ray's crash handler on SIGTERM (it prints a ``*** SIGTERM received`` stack dump and
    ends the process at once); the Python handler that was there (uvicorn's graceful stop) is put back, so
    SIGTERM stops the server as Ctrl-C does. Signal handlers belong to the main thread: elsewhere (a server
    in a test's thread) there is nothing to give back."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, signal.getsignal(signal.SIGTERM))
