"""The VidDiff method: propose → localise → differ, with its models loaded once.

:class:`VidDiffMethod` is the ``viddiff`` entry of :mod:`viddiff.methods`: ``viddiff run``, ``audit`` and
``ablate`` drive its ``aprocess``, and the app-facing :class:`viddiff.api.VidDiff` adds ``compare`` on top
of the same object, so the API and the benchmark runner can never drift apart. It owns the chat client, the
cache and the (lazily loaded) embedder, and is safe to share across concurrent samples.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import math
import threading
from typing import AsyncIterator, Callable, Optional, Union

from viddiff.backends.chat import ChatModel
from viddiff.backends.clip_frames import FrameShrink, clip_frame_shrink
from viddiff.backends.llm import ChatClient, UsageMeter
from viddiff.backends.stopping import raise_if_stopped, run_stoppable
from viddiff.cache import Cache, open_cache
from viddiff.console import ONCE_PER_RUN
from viddiff.config import Config, ModelCallConfig
from viddiff.differencer import Differencer
from viddiff.errors import ViddiffError
from viddiff.localizer.localize import FirstEmbeddings, Localization, Localizer, Segmented, needs_clip
from viddiff.localizer.segmenters import get_segmenter
from viddiff.localizer.oracle import annotations_for_mode
from viddiff.methods.evidence import MainPoseFrames, PoseEvidence
from viddiff.methods.description import omitted_note, render_description
from viddiff.methods.events import Finished, Judged, Localized, Proposed, SampleEvent
from viddiff.proposer import Proposer
from viddiff.pose.measure import describe_evidence
from viddiff.proposer.seeding import proposal_seed
from viddiff.schema import Difference, Evidence, Mode, Prediction, Proposal, Sample, SampleResult, Stage
from viddiff.video import Sampling, VideoFrames, probe_video, read_pair, read_videos_sampled, with_stills

log = logging.getLogger(__name__)
StagePlanCallback = Callable[[list[Stage], list[Difference]], None]


@dataclasses.dataclass(frozen=True)
class PairRun:
    """One processed pair with what produced it: the sample, the frames read at the inference fps, the result."""

    sample: Sample
    videos: tuple[VideoFrames, VideoFrames]
    result: SampleResult



@dataclasses.dataclass(frozen=True)
class LoadedVideos:
    """Both videos' frames at the inference fps, and, when the pose will be measured, both videos' pose frames
    (:meth:`PoseEvidence.sampling`) from the same decode."""

    videos: tuple[VideoFrames, VideoFrames]
    pose: Optional[tuple[VideoFrames, VideoFrames]] = None


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
        self._cpu_time_lock = threading.Lock()

    @property
    def embedder(self):
        """CLIP loads on first use, so methods that never need it (uniform, random, oracle) never pay for it."""
        with self._embedder_lock:
            if self._embedder is None:
                from viddiff.backends.embedders import build_embedder

                self._embedder = build_embedder(self.config.localizer.clip, self.cache)
            return self._embedder

    def _clip_turn(self) -> contextlib.AbstractContextManager:
        """One sample's CLIP work at a time, unless the embedder batches concurrent callers itself
        (``concurrent_calls``, the open_clip embedder with ``micro_batch``): then samples share its batches."""
        if getattr(self._embedder, "concurrent_calls", False):
            return contextlib.nullcontext()
        return self._clip_lock

    def model_calls(self) -> dict[str, ModelCallConfig]:
        return {"proposer": self.config.proposer, "differencer": self.config.differencer}

    def clip_stats(self) -> Optional[dict]:
        """CLIP forward passes and cache hits so far (``None`` if CLIP was never needed)."""
        return dataclasses.asdict(self._embedder.stats) if self._embedder is not None else None

    def _localizer(self, differences: list[Difference]) -> Localizer:
        cfg = self.config.localizer
        return Localizer(cfg, self.embedder if needs_clip(cfg.method, differences) else None)

    def _warn_cpu_clip_time(self, localizer: Localizer, videos: tuple[VideoFrames, VideoFrames], n_stages: int) -> None:
        """Once per instance: a large CLIP model on the CPU is about to embed many frames; name the CPU presets."""
        if localizer.embedder is None or getattr(localizer.embedder, "device", None) != "cpu":
            return
        from viddiff.backends.clip_cost import localizer_cpu_warning

        with self._cpu_time_lock:  # samples in flight ask from several threads at once
            if self._cpu_time_warned:
                return
            message = localizer_cpu_warning(self.config.localizer, [len(v.frame_indices) for v in videos], n_stages)
            if message:
                self._cpu_time_warned = True
                log.warning(message, extra=ONCE_PER_RUN)  # and once per command, whatever runs it makes

    @functools.cached_property
    def _abc_differencer(self) -> Differencer:
        """Describe mode always allows ``c``: a ``c`` verdict is what the description reports as a similarity."""
        return Differencer(self.client, self.config.differencer.model_copy(update={"options": "abc"}))

    async def load_videos(self, sample: Sample, fps: Optional[float] = None) -> tuple[VideoFrames, VideoFrames]:
        """Decode both videos at the inference fps (the domain's, unless ``fps`` is given) in worker threads.

        Every sampled frame is kept only as CLIP will see it (its resize and crop, done as the frame is decoded),
        so memory does not grow with the resolution; the keyframes are decoded again at full size once they are
        known (:meth:`_keyframe_stills`). The embeddings, and so the keyframes and verdicts, are the same."""
        data = self.config.data
        return await read_pair(
            sample.videos, fps or data.fps_for(sample.domain), self._frame_side(), data.video_backend,
            shrink=self._clip_shrink,
        )

    async def load_videos_and_pose(self, sample: Sample, fps: Optional[float] = None, *, pose: bool) -> LoadedVideos:
        """:meth:`load_videos`, and with ``pose`` also the pose's frames, each video decoded once for both: the
        pose's second decode cost about as much CPU as the estimator on a 10-s 1080p clip (docs/pose.md, "Cost").
        Read before the mapping call says whether a body is measured at all, so that answer can waste the pose
        frames' conversion (not a decode); clips with more pose frames than ``SHARED_READ_MAX_FRAMES`` are not
        read so early (:meth:`PoseEvidence.shared_sampling`)."""
        if not pose:
            return LoadedVideos(await self.load_videos(sample, fps))
        videos = list(sample.videos)
        shared = await asyncio.gather(*(asyncio.to_thread(self.pose_evidence.shared_sampling, ref) for ref in videos))
        if None in shared:
            return LoadedVideos(await self.load_videos(sample, fps))
        data = self.config.data
        own = Sampling(target_fps=fps or data.fps_for(sample.domain), max_side=self._frame_side(), shrink=self._clip_shrink)
        (a, pose_a), (b, pose_b) = await read_videos_sampled(
            sample.videos, lambda ref: (own, shared[videos.index(ref)]), data.video_backend
        )
        return LoadedVideos((a, b), (pose_a, pose_b))

    @functools.cached_property
    def _clip_shrink(self) -> Optional[FrameShrink]:
        """CLIP's resize and crop (``None`` for a plug-in embedder: its frames are kept whole)."""
        return clip_frame_shrink(self.config.localizer.clip)

    async def _keyframe_stills(
        self, videos: tuple[VideoFrames, VideoFrames], localization: Localization
    ) -> tuple[VideoFrames, VideoFrames]:
        """Both videos with their keyframes at full size: what the differencer, pose overlays and reports show."""
        wanted = ([f for k in localization.keyframes for f in k.a.frame_indices],
                  [f for k in localization.keyframes for f in k.b.frame_indices])
        if videos[0] is videos[1]:  # the same-video check: one read, one set of stills
            both = await asyncio.to_thread(with_stills, videos[0], wanted[0] + wanted[1])
            return both, both
        a, b = await asyncio.gather(*(asyncio.to_thread(with_stills, v, w) for v, w in zip(videos, wanted)))
        return a, b

    def _frame_side(self) -> Optional[int]:
        """Longest side of the decoded frames: ``data.max_side``, or the differencer's if smaller and asked for."""
        data, sent = self.config.data, self.config.differencer.image.max_side
        if data.frame_size == "max_side" or sent is None:
            return data.max_side
        return sent if data.max_side is None else min(data.max_side, sent)

    def _sample_proposer(self, sample: Sample) -> Proposer:
        """A proposer seeded for this sample (``proposer.reuse_per_action=false``, as released)."""
        cfg = self.config.proposer
        seed = proposal_seed(cfg.seed, sample.sample_hash, sample.sample_key)
        return Proposer(self.client, cfg.model_copy(update={"seed": seed}))

    async def _proposal(
        self, sample: Sample, mode: Mode, meter: UsageMeter, on_stage_plan: Optional[StagePlanCallback] = None
    ) -> Proposal:
        """The sample's proposal; ``on_stage_plan`` as in :meth:`Proposer.propose`."""
        action, n = sample.action_description, sample.n_differences_open
        reuse = self.config.proposer.reuse_per_action
        proposer = self.proposer if reuse else self._sample_proposer(sample)
        if mode == "closed":
            kwargs = {"differences": _closed_differences(sample)}
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
            return await proposer.propose(action, meter=meter, on_stage_plan=on_stage_plan, **kwargs)
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
        return await self.proposer.propose(action, stages=stages, meter=meter, on_stage_plan=on_stage_plan, **kwargs)

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
        events = self.aevents(sample, mode, index=index, videos=videos, fps=fps, meter=meter)
        async with contextlib.aclosing(events):
            async for event in events:
                if event.stage is not None:
                    _notify(on_stage, event.stage)
                if isinstance(event, Finished):
                    return event.result
        raise AssertionError("unreachable: the events end with the result")

    async def aevents(
        self,
        sample: Sample,
        mode: Mode,
        *,
        index: int = 0,
        videos: Optional[tuple[VideoFrames, VideoFrames]] = None,
        fps: Optional[float] = None,
        meter: Optional[UsageMeter] = None,
    ) -> AsyncIterator[SampleEvent]:
        """``aprocess`` step by step: the proposal, the localisation, each verdict as it is decided, the result.

        With ``run.overlap_stages`` (the default) the videos are decoded, and the frames CLIP will embed whatever
        the proposal says are embedded, while the proposer's calls are in flight; once the stage plan is final
        the videos are segmented (stage texts embedded, Viterbi) while the differences are being linked to the
        stages; the keyframes follow from the links. The same CLIP requests are made either way, so the
        results are the same. Closing the generator (or cancelling its consumer) cancels the model calls still
        in flight and makes no more.
        """
        if fps is not None and fps <= 0:
            raise ViddiffError(f"fps must be positive, got {fps}")
        meter = meter if meter is not None else UsageMeter()
        if _nothing_to_check(sample, mode):
            empty = SampleResult(
                sample_key=sample.sample_key, index=index, mode=mode, notes=["no a/b-labelled differences: nothing to check"]
            )
            yield Finished(empty, videos=None)
            return
        if self.config.run.overlap_stages:
            if videos is None:
                await self._probe_videos(sample)  # a file that is no video fails before any model call
            loading = None if videos is not None else asyncio.ensure_future(
                self.load_videos_and_pose(sample, fps, pose=self.pose_evidence.wanted)
            )
            reading = asyncio.ensure_future(self._read_and_embed_first(sample, mode, videos, fps, loading))
            segmenting: list[asyncio.Future] = []

            def segment_early(stages: list[Stage], differences: list[Difference]) -> None:
                segmenting.append(asyncio.ensure_future(self._segment(sample, mode, stages, differences, reading)))

            proposing = asyncio.ensure_future(self._proposal(sample, mode, meter, on_stage_plan=segment_early))
            preparing: Optional[asyncio.Future] = None
            try:
                proposal = await _first_failure_or(proposing, reading)
                preparing = self._begin_evidence(sample, proposal, meter, loading)  # the mapping and the pose, beside the rest
                yield Proposed(proposal)
                videos, _ = await reading
                segmented = await segmenting[-1] if segmenting else None
                localization = await self._localize(sample, mode, proposal, videos, reading, segmented)
            except BaseException:
                await _cancelled(*([preparing] if preparing else []))
                raise
            finally:
                await _cancelled(proposing, reading, *segmenting, *([loading] if loading else []))
        else:
            loaded = None if videos is not None else await self.load_videos_and_pose(sample, fps, pose=self.pose_evidence.wanted)
            videos = videos or loaded.videos
            proposal = await self._proposal(sample, mode, meter)
            preparing = self._begin_evidence(sample, proposal, meter, loaded)
            try:
                yield Proposed(proposal)
                localization = await self._localize_now(sample, mode, proposal, videos)
            except BaseException:
                await _cancelled(*([preparing] if preparing else []))
                raise
        yield Localized(localization)
        videos = await self._keyframe_stills(videos, localization)
        predictions: dict[str, Prediction] = {}
        # Measured context for the prompts must come first; evidence only for the results runs beside the judging.
        measuring = asyncio.ensure_future(self._evidence(sample, proposal, localization, videos, meter, preparing))
        try:
            (evidence_first, absent_first), measured = await measuring if self.pose_evidence.needed_first else (([], {}), {})
            known = {e.key: e for e in evidence_first}
            verdicts = self._verdicts(sample, mode, proposal, localization, videos, meter, measured)
            async with contextlib.aclosing(verdicts):
                async for prediction in verdicts:
                    predictions[prediction.key] = prediction
                    key = prediction.key
                    settled = self.pose_evidence.settle(prediction, known.get(key), mode)
                    yield Judged(settled, evidence=known.get(key), evidence_absent=absent_first.get(key))
            (evidence, absent), _ = await measuring
        finally:
            await _cancelled(measuring)
        by_key = {e.key: e for e in evidence}
        ordered = [self.pose_evidence.settle(predictions[d.key], by_key.get(d.key), mode) for d in proposal.differences]
        result = self._result(sample, mode, index, proposal, localization, ordered, evidence, videos, meter)
        result.evidence_absent = absent
        yield Finished(result, videos)

    async def _probe_videos(self, sample: Sample) -> None:
        """Open both videos without decoding them (milliseconds): what is unreadable raises its VideoError here."""
        backend = self.config.data.video_backend
        refs = sample.videos[:1] if sample.videos[0] == sample.videos[1] else sample.videos
        await asyncio.gather(*(asyncio.to_thread(probe_video, ref.path, ref.fps_original, backend) for ref in refs))

    async def _read_and_embed_first(
        self,
        sample: Sample,
        mode: Mode,
        videos: Optional[tuple[VideoFrames, VideoFrames]],
        fps: Optional[float],
        loading: Optional["asyncio.Future[LoadedVideos]"] = None,
    ) -> tuple[tuple[VideoFrames, VideoFrames], FirstEmbeddings]:
        """The frames (given, being read by ``loading``, or read now) and their first embeddings."""
        if videos is None:
            videos = (await asyncio.shield(loading)).videos if loading is not None else await self.load_videos(sample, fps)
        return videos, await self._embed_first(sample, mode, videos)

    async def _embed_first(self, sample: Sample, mode: Mode, videos: tuple[VideoFrames, VideoFrames]) -> FirstEmbeddings:
        """The frames the configured segmenter embeds first whatever the stage texts, when the sample will be
        segmented with CLIP at all (a local difference is known before the proposal): never more CLIP work."""
        if not self._will_segment_with_clip(sample, mode):
            return None, None
        cfg = self.config
        max_stages = cfg.proposer.max_stages
        if all(Localizer(cfg.localizer).first_frames(len(v.frame_indices), max_stages) is None for v in videos):
            return None, None

        def embed() -> FirstEmbeddings:
            localizer = Localizer(cfg.localizer, self.embedder)  # CLIP loads here, off the event loop
            self._warn_cpu_clip_time(localizer, videos, max_stages)
            with self._clip_turn():
                raise_if_stopped()  # cancelled while another sample held the lock
                a, b = (localizer.embed_first(video, max_stages) for video in videos)
                return a, b

        return await run_stoppable(embed)  # a cancelled sample stops its CLIP work after one batch

    def _will_segment_with_clip(self, sample: Sample, mode: Mode) -> bool:
        """Whether localisation will run a CLIP segmenter, as far as is known before the proposal: open-mode
        differences are local; closed mode knows its differences; describe mode learns their scope from the proposal."""
        method = get_segmenter(self.config.localizer.method)
        if not method.needs_clip or mode == "describe":
            return False
        return mode == "open" or any(d.scope == "local" for d in _closed_differences(sample))

    async def _segment(
        self,
        sample: Sample,
        mode: Mode,
        stages: list[Stage],
        differences: list[Difference],
        reading: asyncio.Future,
    ) -> Segmented:
        """Both videos split into ``stages`` once they are read (and their first frames embedded): with
        ``run.overlap_stages``, while the proposer is still linking differences to stages."""
        videos, first = await asyncio.shield(reading)
        localizer = self._localizer(differences)
        self._warn_cpu_clip_time(localizer, videos, len(stages))

        def segment() -> Segmented:
            with self._clip_turn():
                raise_if_stopped()  # cancelled while another sample held the lock
                return localizer.segment(
                    stages,
                    differences,
                    videos[0],
                    videos[1],
                    retrieval=annotations_for_mode(sample.retrieval_frames, mode),
                    seed=self.config.run.seed,
                    sample_key=sample.sample_key,
                    first=first,
                )

        return await run_stoppable(segment)

    async def _localize(
        self,
        sample: Sample,
        mode: Mode,
        proposal: Proposal,
        videos: tuple[VideoFrames, VideoFrames],
        reading: asyncio.Future,
        segmented: Optional[Segmented],
    ) -> Localization:
        """Keyframes from the links, on the segmentation made while they were awaited (or made now)."""
        if segmented is None or not segmented.plans(proposal):
            segmented = await self._segment(sample, mode, proposal.stages, proposal.differences, reading)
        retrieval = annotations_for_mode(sample.retrieval_frames, mode)
        return self._localizer(proposal.differences).pick_keyframes(
            proposal, segmented, videos[0], videos[1], retrieval=retrieval
        )

    async def _localize_now(
        self, sample: Sample, mode: Mode, proposal: Proposal, videos: tuple[VideoFrames, VideoFrames]
    ) -> Localization:
        """Localisation once the proposal is in (nothing ran ahead): the same CLIP requests in the same order."""
        reading = asyncio.ensure_future(self._read_and_embed_first(sample, mode, videos, None))
        try:
            return await self._localize(sample, mode, proposal, videos, reading, None)
        finally:
            await _cancelled(reading)

    async def _verdicts(
        self,
        sample: Sample,
        mode: Mode,
        proposal: Proposal,
        localization: Localization,
        videos: tuple[VideoFrames, VideoFrames],
        meter: UsageMeter,
        measured: dict[str, str],
    ) -> AsyncIterator[Prediction]:
        """Every difference judged at once; each verdict as soon as it is decided. Closing this cancels the rest.
        ``measured``: each difference's pose measurement for its prompt (``differencer.pose_evidence``)."""
        differencer = self._abc_differencer if mode == "describe" else self.differencer
        by_key = {k.key: k for k in localization.keyframes}

        async def judge(diff: Difference) -> Prediction:
            kf = by_key[diff.key]
            return await differencer.judge(
                sample.action_description,
                diff,
                videos[0].at(kf.a.frame_indices),
                videos[1].at(kf.b.frame_indices),
                seconds_between_frames=_seconds_between(kf.a.times_s, kf.b.times_s),
                meter=meter,
                frame_times_s=(kf.a.times_s, kf.b.times_s),
                measured=measured.get(diff.key),
            )

        tasks = [asyncio.ensure_future(judge(d)) for d in proposal.differences]
        try:
            for next_done in asyncio.as_completed(tasks):
                yield await next_done
        finally:
            await _cancelled(*tasks)

    def _result(
        self,
        sample: Sample,
        mode: Mode,
        index: int,
        proposal: Proposal,
        localization: Localization,
        predictions: list[Prediction],
        evidence: list[Evidence],
        videos: tuple[VideoFrames, VideoFrames],
        meter: UsageMeter,
    ) -> SampleResult:
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

    def _begin_evidence(
        self,
        sample: Sample,
        proposal: Proposal,
        meter: UsageMeter,
        loaded: Union[None, LoadedVideos, "asyncio.Future[LoadedVideos]"] = None,
    ) -> Optional[asyncio.Future]:
        """The pose mapping call and pose estimation, started as soon as the proposal is known (``None``: no pose);
        ``loaded``: the read that also decoded the pose's frames (else the pose reads its own)."""
        if not self.pose_evidence.wanted:
            return None
        return self.pose_evidence.begin(sample, proposal, meter, main_pose_frames(loaded))

    async def _evidence(
        self,
        sample: Sample,
        proposal: Proposal,
        localization: Localization,
        videos: tuple[VideoFrames, VideoFrames],
        meter: UsageMeter,
        preparing: Optional[asyncio.Future] = None,
    ) -> tuple[tuple[list[Evidence], dict[str, str]], dict[str, str]]:
        """Body-pose evidence (``pose.evidence`` / ``differencer.pose_evidence``; docs/pose.md) with why each other
        difference has none, and the measured context each difference's differencer prompt gets (only with
        ``differencer.pose_evidence``)."""
        if not self.pose_evidence.wanted:
            return ([], {}), {}
        found = await self.pose_evidence.measure(sample, proposal, localization, videos, meter, prepared=preparing)
        context = {e.key: describe_evidence(e) for e in found.evidence} if self.config.differencer.pose_evidence else {}
        return (found.evidence, found.absent), context

    async def arun_pair(self, sample: Sample, mode: Mode, *, fps: Optional[float] = None) -> PairRun:
        """Read both videos and process the pair, keeping the frames and the full result (what a report needs)."""
        events = self.aevents(sample, mode, fps=fps)
        async with contextlib.aclosing(events):
            async for event in events:
                if isinstance(event, Finished):
                    videos = event.videos or await self.load_videos(sample, fps)
                    return PairRun(sample=sample, videos=videos, result=event.result)
        raise AssertionError("unreachable: the events end with the result")

    async def aclose(self) -> None:
        await self.client.aclose()
        if self._owns_cache and self.cache is not None:
            self.cache.close()


def _closed_differences(sample: Sample) -> list[Difference]:
    """Closed mode's task input: a benchmark row's ``a``/``b``-labelled differences; all of a user's (no labels)."""
    return sample.closed_differences() if sample.labels else list(sample.differences.values())


def _nothing_to_check(sample: Sample, mode: Mode) -> bool:
    return mode == "closed" and bool(sample.labels) and not sample.closed_differences()


async def _first_failure_or(wanted: asyncio.Future, other: asyncio.Future):
    """``wanted``'s result; a failure of ``other`` while ``wanted`` is still running is raised at once."""
    pending = {wanted, other}
    while not wanted.done():
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        if other in done:
            other.result()
    return wanted.result()


def main_pose_frames(loaded: Union[None, LoadedVideos, "asyncio.Future[LoadedVideos]"]) -> Optional[MainPoseFrames]:
    """Both main videos' pose frames from a read (done, or a future) for :meth:`PoseEvidence.begin`; ``None``
    (or its answer ``None``: a read without them) lets the pose read its own."""
    if loaded is None:
        return None

    async def pose() -> Optional[tuple[VideoFrames, VideoFrames]]:
        return (loaded if isinstance(loaded, LoadedVideos) else await asyncio.shield(loaded)).pose

    return pose


async def _cancelled(*tasks: asyncio.Future) -> None:
    """Cancel what is still running and wait until it has stopped (its HTTP requests closed)."""
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


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
