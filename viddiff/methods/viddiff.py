"""The VidDiff method: propose → localise → differ, with its models loaded once.

:class:`VidDiffMethod` is the ``viddiff`` entry of :mod:`viddiff.methods`: ``viddiff run``, ``audit`` and
``ablate`` drive its ``aprocess``, and the app-facing :class:`viddiff.api.VidDiff` adds ``compare`` on top
of the same object, so the API and the benchmark runner can never drift apart. It owns the chat client, the
cache and the (lazily loaded) embedder, and is safe to share across concurrent samples.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import math
import threading
from typing import Optional

from viddiff.backends.chat import ChatModel
from viddiff.backends.llm import ChatClient, UsageMeter
from viddiff.backends.stopping import raise_if_stopped, run_stoppable
from viddiff.cache import Cache, open_cache
from viddiff.config import Config, ModelCallConfig
from viddiff.differencer import Differencer
from viddiff.errors import ViddiffError
from viddiff.localizer.localize import Localization, Localizer, needs_clip
from viddiff.localizer.oracle import annotations_for_mode
from viddiff.methods.evidence import PoseEvidence
from viddiff.methods.description import omitted_note, render_description
from viddiff.proposer import Proposer
from viddiff.pose.measure import describe_evidence
from viddiff.proposer.seeding import proposal_seed
from viddiff.schema import Difference, Evidence, Mode, Proposal, Sample, SampleResult
from viddiff.video import VideoFrames, read_pair

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class PairRun:
    """One processed pair with what produced it: the sample, the frames read at the inference fps, the result."""

    sample: Sample
    videos: tuple[VideoFrames, VideoFrames]
    result: SampleResult



class VidDiffMethod:
    """The VidDiff method with its models loaded once; safe to share across concurrent samples.

    A :class:`viddiff.methods.Method` (``viddiff``): ``viddiff run`` drives ``aprocess``.
    """

    name = "viddiff"
    stages = ("proposer", "localizer", "differencer")
    modes = ("closed", "open", "describe")

    def __init__(
        self,
        config: Optional[Config] = None,
        *,
        cache: Optional[Cache] = None,
        client: Optional[ChatModel] = None,
        embedder=None,
    ):
        self.config = config or Config()
        self._owns_cache = cache is None and client is None
        self.cache = cache if cache is not None else (open_cache(self.config.cache) if client is None else None)
        self.client = client or ChatClient(
            self.config.endpoints, self.cache, cache_nonzero_temperature=self.config.cache.cache_nonzero_temperature
        )
        self._embedder = embedder
        self._embedder_lock = threading.Lock()
        self._clip_lock = threading.Lock()
        self.proposer = Proposer(self.client, self.config.proposer)
        self.differencer = Differencer(self.client, self.config.differencer)
        self.pose_evidence = PoseEvidence(self.config, self.client, self.cache)
        self._memo_futures: dict[tuple, asyncio.Future] = {}
        self._cpu_time_warned = False

    @property
    def embedder(self):
        """CLIP loads on first use, so methods that never need it (uniform, random, oracle) never pay for it."""
        with self._embedder_lock:
            if self._embedder is None:
                from viddiff.backends.embedders import build_embedder

                self._embedder = build_embedder(self.config.localizer.clip, self.cache)
            return self._embedder

    def model_calls(self) -> dict[str, ModelCallConfig]:
        return {"proposer": self.config.proposer, "differencer": self.config.differencer}

    def clip_stats(self) -> Optional[dict]:
        """CLIP forward passes and cache hits so far (``None`` if CLIP was never needed)."""
        return dataclasses.asdict(self._embedder.stats) if self._embedder is not None else None

    def _localizer(self, proposal: Proposal) -> Localizer:
        cfg = self.config.localizer
        return Localizer(cfg, self.embedder if needs_clip(cfg.method, proposal) else None)

    def _warn_cpu_clip_time(self, localizer: Localizer, videos: tuple[VideoFrames, VideoFrames], n_stages: int) -> None:
        """Once per instance: a large CLIP model on the CPU is about to embed many frames; name the CPU presets."""
        if self._cpu_time_warned or localizer.embedder is None or getattr(localizer.embedder, "device", None) != "cpu":
            return
        from viddiff.backends.clip_cost import localizer_cpu_warning

        message = localizer_cpu_warning(self.config.localizer, [len(v.frame_indices) for v in videos], n_stages)
        if message:
            self._cpu_time_warned = True
            log.warning(message)

    @functools.cached_property
    def _abc_differencer(self) -> Differencer:
        """Describe mode always allows ``c``: a ``c`` verdict is what the description reports as a similarity."""
        return Differencer(self.client, self.config.differencer.model_copy(update={"options": "abc"}))

    async def load_videos(self, sample: Sample, fps: Optional[float] = None) -> tuple[VideoFrames, VideoFrames]:
        """Decode both videos at the inference fps (the domain's, unless ``fps`` is given) in worker threads."""
        data = self.config.data
        return await read_pair(sample.videos, fps or data.fps_for(sample.domain), data.max_side, data.video_backend)

    def _sample_proposer(self, sample: Sample) -> Proposer:
        """A proposer seeded for this sample (``proposer.reuse_per_action=false``, as released)."""
        cfg = self.config.proposer
        seed = proposal_seed(cfg.seed, sample.sample_hash, sample.sample_key)
        return Proposer(self.client, cfg.model_copy(update={"seed": seed}))

    async def _proposal(self, sample: Sample, mode: Mode, meter: UsageMeter) -> Proposal:
        action, n = sample.action_description, sample.n_differences_open
        reuse = self.config.proposer.reuse_per_action
        proposer = self.proposer if reuse else self._sample_proposer(sample)
        if mode == "closed":
            # Benchmark samples: only the a/b-labelled differences are the task input. User input has no labels.
            kwargs = {"differences": sample.closed_differences() if sample.labels else list(sample.differences.values())}
            if not kwargs["differences"]:
                raise ViddiffError(f"sample {sample.sample_key}: no differences to check in closed mode")
        elif mode == "describe":
            # Along the seven dimensions (viddiff.schema.DIMENSIONS); global ones need no stage plan (see Proposer.propose).
            make = functools.partial(proposer.propose_dimension_differences, action, n, meter)
            differences = await (self._memo(("dimension-differences", action, n), make) if reuse else make())
            kwargs = {"differences": differences}
        else:
            kwargs = {"n_differences": n}
        if not reuse:
            return await proposer.propose(action, meter=meter, **kwargs)
        # One stage plan (and, in open/describe mode, one list of differences) per action, shared by its samples.
        stages = None
        if mode != "describe" or any(d.scope == "local" for d in kwargs["differences"]):
            stages, _ = await self._memo(("stages", action), lambda: self.proposer.stage_plan(action, meter))
        if mode == "open":
            kwargs = {
                "differences": await self._memo(
                    ("differences", action, n), lambda: self.proposer.propose_differences(action, n, meter)
                )
            }
        return await self.proposer.propose(action, stages=stages, meter=meter, **kwargs)

    async def _memo(self, key: tuple, make):
        """Run ``make()`` once per key (concurrent callers wait for it); failures are not remembered."""
        future = self._memo_futures.get(key)
        if future is None or (future.done() and (future.cancelled() or future.exception() is not None)):
            future = self._memo_futures[key] = asyncio.ensure_future(make())
        return await asyncio.shield(future)

    async def aprocess(
        self,
        sample: Sample,
        mode: Mode,
        *,
        index: int = 0,
        videos: Optional[tuple[VideoFrames, VideoFrames]] = None,
        fps: Optional[float] = None,
        on_stage=None,
        meter: Optional[UsageMeter] = None,
    ) -> SampleResult:
        """Run propose → localise → differ for one sample. ``on_stage(name)`` is called as each stage finishes.

        ``describe`` mode: differences proposed along the seven dimensions, verified with options
        ``abc``, and rendered into ``SampleResult.description`` (``c`` verdicts as similarities).
        ``meter`` collects the sample's model calls (also when it fails part-way).
        A benchmark row without ``a``/``b``-labelled differences has nothing to check in closed mode: it gets
        no predictions, without reading its videos or calling a model.
        """
        meter = meter if meter is not None else UsageMeter()
        if mode == "closed" and sample.labels and not sample.closed_differences():
            return SampleResult(
                sample_key=sample.sample_key, index=index, mode=mode, notes=["no a/b-labelled differences: nothing to check"]
            )
        videos = videos or await self.load_videos(sample, fps)
        proposal = await self._proposal(sample, mode, meter)
        _notify(on_stage, "proposer")
        localizer = self._localizer(proposal)
        self._warn_cpu_clip_time(localizer, videos, len(proposal.stages))
        differencer = self._abc_differencer if mode == "describe" else self.differencer

        def localize():
            with self._clip_lock:
                raise_if_stopped()  # cancelled while another sample held the lock
                return localizer.localize(
                    proposal,
                    videos[0],
                    videos[1],
                    retrieval=annotations_for_mode(sample.retrieval_frames, mode),
                    seed=self.config.run.seed,
                    sample_key=sample.sample_key,
                )

        localization = await run_stoppable(localize)  # a cancelled sample stops its CLIP work after one batch
        _notify(on_stage, "localizer")
        by_key = {k.key: k for k in localization.keyframes}
        # Measured context for the prompts must come first; evidence only for the results runs beside the judging.
        measuring = self._evidence(sample, proposal, localization, videos, meter)
        evidence, measured = await measuring if self.config.differencer.pose_evidence else ([], {})

        async def judge(diff: Difference):
            kf = by_key[diff.key]
            frames_a = videos[0].at(kf.a.frame_indices)
            frames_b = videos[1].at(kf.b.frame_indices)
            return await differencer.judge(
                sample.action_description,
                diff,
                frames_a,
                frames_b,
                seconds_between_frames=_seconds_between(kf.a.times_s, kf.b.times_s),
                meter=meter,
                frame_times_s=(kf.a.times_s, kf.b.times_s),
                measured=measured.get(diff.key),
            )

        if self.config.differencer.pose_evidence:
            predictions = list(await asyncio.gather(*(judge(d) for d in proposal.differences)))
        else:
            (evidence, _), *predictions = await asyncio.gather(measuring, *(judge(d) for d in proposal.differences))
        _notify(on_stage, "differencer")
        notes = proposal.notes + localization.notes + _frame_rate_notes(videos)
        description = None
        if mode == "describe":
            description = render_description(proposal.differences, predictions)
            notes += omitted_note(predictions)
            if self.config.differencer.options != "abc":
                notes.append("differencer.options=ab ignored in describe mode: c verdicts are the similarities")
        return SampleResult(
            sample_key=sample.sample_key,
            index=index,
            mode=mode,
            proposal=proposal,
            notes=notes,
            segmentations=localization.segmentations,
            keyframes=localization.keyframes,
            predictions=predictions,
            usage=meter.by_stage(),
            description=description,
            evidence=evidence,
        )

    async def _evidence(
        self,
        sample: Sample,
        proposal: Proposal,
        localization: Localization,
        videos: tuple[VideoFrames, VideoFrames],
        meter: UsageMeter,
    ) -> tuple[list[Evidence], dict[str, str]]:
        """Body-pose evidence (``pose.evidence`` / ``differencer.pose_evidence``; docs/pose.md), and the measured
        context each difference's differencer prompt gets (only with ``differencer.pose_evidence``)."""
        if not self.pose_evidence.wanted:
            return [], {}
        evidence = await self.pose_evidence.measure(sample, proposal, localization, videos, meter)
        if not self.config.differencer.pose_evidence:
            return evidence, {}
        return evidence, {e.key: describe_evidence(e) for e in evidence}

    async def arun_pair(self, sample: Sample, mode: Mode, *, fps: Optional[float] = None) -> PairRun:
        """Read both videos and process the pair, keeping the frames and the full result (what a report needs)."""
        if fps is not None and fps <= 0:
            raise ViddiffError(f"fps must be positive, got {fps}")
        videos = await self.load_videos(sample, fps)
        return PairRun(sample=sample, videos=videos, result=await self.aprocess(sample, mode, videos=videos))

    async def aclose(self) -> None:
        await self.client.aclose()
        if self._owns_cache and self.cache is not None:
            self.cache.close()


def _frame_rate_notes(videos: tuple[VideoFrames, VideoFrames]) -> list[str]:
    """Flag variable-frame-rate videos and a pair recorded at different frame rates: keyframe spacing then
    differs per video (the VLM is told each video's frame times), which matters for speed-related verdicts."""
    a, b = videos
    notes = [
        f"video {name} has a variable frame rate: its frames were picked by presentation time"
        for name, video in (("A", a), ("B", b)) if video.variable_frame_rate
    ]
    if math.isclose(a.fps_original, b.fps_original, rel_tol=0.01):
        return notes
    return notes + [
        f"the videos have different frame rates: A {a.fps_original:g} fps (sampled at {a.fps:.3g} fps), "
        f"B {b.fps_original:g} fps (sampled at {b.fps:.3g} fps)"
    ]


def _seconds_between(times_a: list[float], times_b: list[float]) -> Optional[float]:
    gaps = [b - a for times in (times_a, times_b) for a, b in zip(times, times[1:])]
    return round(sum(gaps) / len(gaps), 3) if gaps else None


def _notify(callback, stage: str) -> None:
    if callback is not None:
        callback(stage)
