"""``run.executor: ray``: a run's samples answered by a pool of Ray actors, the run itself kept here.

Everything that makes a run trustworthy stays in the driver (this process): the output directory's lock,
the one writer of ``samples.jsonl`` and ``failures.jsonl``, resume, the cost guard, scoring. Only the
method's work moves: :class:`RayMethod` is a :class:`viddiff.methods.Method` whose ``load_videos`` and
``aprocess`` run on :class:`SampleActor` s, each holding one instance of the method (a VidDiff with its
chat client, a line to the driver's cache and CLIP model, loaded once) and answering several samples at once (its
CLIP batches their frames together). A sample is decoded and answered on the same actor, the least busy
when its videos are read; its result, model usage and finished stages come back to the driver, which
records them as a local run would. The actors look up and store model answers through the driver's cache
(:mod:`viddiff.runs.ray_cache`), on any node. They read the dataset's videos by path: the dataset must be on
storage every node reads at the same path, which is checked at start (one clear error naming the node).

Ray is an optional extra (``pip install "viddiff[ray]"``); without it the local executor is unchanged and
asking for this one is one clear error.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import pickle
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from viddiff.backends.usage import UsageMeter
from viddiff.config import Config, ModelCallConfig
from viddiff.errors import ViddiffError
from viddiff.methods import Method, MethodFactory
from viddiff.runs.ray_cache import RemoteCache, start_cache_of_record
from viddiff.schema import Mode, Sample, SampleResult, StageUsage

log = logging.getLogger(__name__)
INSTALL_HINT = 'pip install "viddiff[ray]"'


def import_ray(what: str) -> Any:
    """The ``ray`` module, or a :class:`ViddiffError` saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise ViddiffError(f"{what} needs Ray, which is not installed here ({exc}); {INSTALL_HINT}") from None
    return ray


def cluster_address(cfg: Config) -> Optional[str]:
    """``ray.init``'s address for ``ray.address``: ``None`` (start one here) for ``local`` or unset."""
    address = cfg.ray.address
    return None if address in (None, "local") else address


@dataclass
class Outcome:
    """What an actor sends back for one sample: the result or the error, and what it cost."""

    result: Optional[SampleResult] = None
    error: Optional[BaseException] = None
    usage: dict[str, StageUsage] = field(default_factory=dict)
    stages: list[str] = field(default_factory=list)
    """The method's stages that finished, in order."""


def _sendable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling (the driver then classifies it as a local run would), else its text."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - any pickling failure: send what can be sent
        return ViddiffError(f"{type(exc).__name__}: {exc}")


def endpoint_environment(cfg: Config) -> dict[str, str]:
    """The driver's values of the variables the endpoints read (keys, ``OPENAI_BASE_URL``), for the actors:
    a cluster started elsewhere does not have the driver's environment. They travel in memory with the
    actors' creation, never through a file."""
    names = {"OPENAI_BASE_URL", *_values_of(cfg.endpoints.model_dump(), "api_key_env")}
    for section in cfg.model_dump().values():
        names.update(_values_of(section, "api_key_env"))
    return {name: os.environ[name] for name in sorted(names) if name in os.environ}


def _values_of(tree: Any, field_name: str) -> set[str]:
    if isinstance(tree, dict):
        found = {v for k, v in tree.items() if k == field_name and isinstance(v, str)}
        return found.union(*(_values_of(v, field_name) for v in tree.values()))
    if isinstance(tree, list):
        return set().union(*(_values_of(v, field_name) for v in tree))
    return set()


class SampleActor:
    """One method instance, loaded once, answering the samples the driver sends it (a Ray actor's body)."""

    def __init__(self, cfg: Config, factory: MethodFactory, environment: dict[str, str], cache: Optional[Any] = None):
        os.environ.update(environment)
        if cache is None:
            self.method = factory(cfg)
        else:
            self.method = factory(cfg, cache=RemoteCache(cache, str(cfg.cache.resolved_path())))
        self._videos: dict[int, Any] = {}

    def unreadable(self, paths: list[str]) -> tuple[str, list[str]]:
        """This actor's node, and those of ``paths`` it cannot read."""
        import ray

        node_id = ray.get_runtime_context().get_node_id()
        address = next((n["NodeManagerAddress"] for n in ray.nodes() if n["NodeID"] == node_id), node_id)
        return address, [p for p in paths if not os.access(p, os.R_OK)]  # a file, or a folder of frames

    async def load(self, token: int, sample: Sample) -> Optional[BaseException]:
        """Decode ``sample``'s videos and keep them for :meth:`process`; the error, if that failed (the video
        stage's), returned rather than raised so that it reaches the driver as itself."""
        try:
            self._videos[token] = await self.method.load_videos(sample)
        except Exception as exc:  # noqa: BLE001 - the driver records it for this sample
            return _sendable(exc)
        return None

    async def process(self, token: Optional[int], sample: Sample, mode: Mode, index: int) -> Outcome:
        videos = self._videos.pop(token, None) if token is not None else None
        meter, stages = UsageMeter(), []
        try:
            result = await self.method.aprocess(
                sample, mode, index=index, videos=videos, on_stage=stages.append, meter=meter
            )
        except Exception as exc:  # noqa: BLE001 - the driver isolates the sample, as a local run does
            return Outcome(error=_sendable(exc), usage=meter.by_stage(), stages=stages)
        return Outcome(result=result, usage=meter.by_stage(), stages=stages)

    def forget(self, token: int) -> None:
        self._videos.pop(token, None)

    def clip_stats(self) -> Optional[dict]:
        return self.method.clip_stats()

    async def close(self) -> None:
        await self.method.aclose()


@dataclass(frozen=True)
class RemoteVideos:
    """Videos decoded on an actor, where the sample will be answered: what ``load_videos`` returns here."""

    actor: int
    token: int


class RayMethod:
    """The method ``factory`` makes, its samples answered by ``cfg.ray.actors`` Ray actors.

    A local instance (models not loaded: CLIP loads on first use) answers for the method's name, stages,
    modes and model calls, and lends the benchmark's judge its chat client when the run is scored.
    """

    def __init__(self, cfg: Config, factory: MethodFactory, samples: Optional[list[Sample]] = None):
        ray = import_ray("run.executor=ray")
        self._ray = ray
        self.local: Method = factory(cfg)
        self.name, self.stages, self.modes = self.local.name, self.local.stages, self.local.modes
        self.client = self.local.client
        self._started_ray = not ray.is_initialized()
        if self._started_ray:
            ray.init(address=cluster_address(cfg), include_dashboard=False)
        actor_class = ray.remote(SampleActor).options(
            num_cpus=cfg.ray.num_cpus, num_gpus=cfg.ray.num_gpus, resources=cfg.ray.resources,
            max_concurrency=cfg.run.max_samples_in_flight + 1,
        )
        environment = endpoint_environment(cfg)
        self._cache = start_cache_of_record(ray, cfg.cache)
        self._actors = [actor_class.remote(cfg, factory, environment, self._cache) for _ in range(cfg.ray.actors)]
        self._busy = [0] * len(self._actors)
        self._dead: set[int] = set()
        self._tokens = itertools.count()
        if samples:
            try:
                self._check_readable(samples)
            except BaseException:
                asyncio.run(self.aclose())  # the actors, the cache actor and a cluster started here go
                raise

    def _check_readable(self, samples: list[Sample]) -> None:
        """One clear error when an actor's node cannot read the dataset's videos (they are read by path)."""
        paths = sorted({video.path for sample in samples for video in sample.videos})
        answers = self._ray.get([actor.unreadable.remote(paths) for actor in self._actors])
        for node, missing in answers:
            if missing:
                raise ViddiffError(
                    f"run.executor=ray: the Ray node {node} cannot read {len(missing)} of the dataset's "
                    f"{len(paths)} videos (the first: {missing[0]}); the actors read them by path, so put the dataset "
                    "on storage every node mounts at the same path (a network filesystem or a bucket mount, "
                    "read-only is enough), or keep the actors on nodes that have it (ray.resources)"
                )

    def model_calls(self) -> dict[str, ModelCallConfig]:
        return self.local.model_calls()

    async def load_videos(self, sample: Sample, fps: Optional[float] = None) -> RemoteVideos:
        """Decode on the least busy live actor, which then answers the sample (another, if it dies meanwhile)."""
        while True:
            actor = self._least_busy()
            token = next(self._tokens)
            self._busy[actor] += 1
            try:
                error = await self._actors[actor].load.remote(token, sample)
            except self._ray.exceptions.RayActorError:
                self._busy[actor] -= 1
                self._lost(actor)
                continue
            except BaseException:
                self._busy[actor] -= 1
                raise
            if error is not None:
                self._busy[actor] -= 1
                raise error
            return RemoteVideos(actor, token)

    async def aprocess(
        self,
        sample: Sample,
        mode: Mode,
        *,
        index: int = 0,
        videos: Optional[RemoteVideos] = None,
        on_stage: Optional[Callable[[str], Any]] = None,
        meter: Optional[UsageMeter] = None,
    ) -> SampleResult:
        """Answer ``sample`` on the actor that decoded its videos; where that actor dies (its node lost), decode
        and answer it again on another: its calls already answered come from the cache of record."""
        if videos is None:  # nothing to decode (no difference to check): any actor
            actor, token = self._least_busy(), None
            self._busy[actor] += 1
        else:
            actor, token = videos.actor, videos.token
        try:
            outcome: Outcome = await self._actors[actor].process.remote(token, sample, mode, index)
        except asyncio.CancelledError:
            if token is not None:
                self._actors[actor].forget.remote(token)
            raise
        except self._ray.exceptions.RayActorError:
            self._lost(actor)
            again = await self.load_videos(sample) if videos is not None else None
            return await self.aprocess(sample, mode, index=index, videos=again, on_stage=on_stage, meter=meter)
        finally:
            self._busy[actor] -= 1
        for stage, usage in outcome.usage.items():
            if meter is not None:
                meter.record(stage, usage)
        for stage in outcome.stages:
            if on_stage is not None:
                on_stage(stage)
        if outcome.error is not None:
            raise outcome.error
        assert outcome.result is not None
        return outcome.result

    def _least_busy(self) -> int:
        live = [i for i in range(len(self._actors)) if i not in self._dead]
        if not live:
            raise ViddiffError(
                "run.executor=ray: every Ray actor died (see the Ray logs for why); the finished samples are "
                "kept: --resume runs the rest"
            )
        return min(live, key=self._busy.__getitem__)

    def _lost(self, actor: int) -> None:
        if actor not in self._dead:
            self._dead.add(actor)
            log.warning("Ray actor %d died (its node lost?); its samples run on the other actors", actor)

    def clip_stats(self) -> Optional[dict]:
        """The live actors' CLIP work added up (``None`` if none of them needed CLIP)."""
        live = [a for i, a in enumerate(self._actors) if i not in self._dead]
        stats = [s for s in self._ray.get([a.clip_stats.remote() for a in live]) if s is not None]
        if not stats:
            return None
        return {key: sum(s[key] for s in stats) for key in stats[0]}

    async def aclose(self) -> None:
        try:
            await asyncio.gather(*(a.close.remote() for a in self._actors), return_exceptions=True)
        finally:
            for actor in self._actors:
                self._ray.kill(actor)
            if self._cache is not None:
                await asyncio.gather(self._cache.close.remote(), return_exceptions=True)
                self._ray.kill(self._cache)
            await self.local.aclose()
            if self._started_ray:
                self._ray.shutdown()


def build_method(cfg: Config, factory: MethodFactory, samples: Optional[list[Sample]] = None) -> Method:
    """The method a run drives: ``factory(cfg)`` here, or on Ray actors with ``run.executor: ray`` (whose
    nodes must read ``samples``' videos)."""
    if cfg.run.executor == "ray":
        return RayMethod(cfg, factory, samples)
    return factory(cfg)
