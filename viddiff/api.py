"""Python API for apps: ``compare()``, ``describe()``, the reusable ``VidDiff`` object, and the result models.

``VidDiff`` is the VidDiff method (:class:`viddiff.methods.viddiff.VidDiffMethod`, which ``viddiff run``
drives) plus the app-facing calls: video paths and plain-text statements in, a :class:`ComparisonResult`
out. It owns the model clients (chat client, cache, CLIP), so an app backend pays for loading them once,
then runs any number of comparisons. ``astream`` (and ``stream``) give the same comparison as typed events,
each verdict the moment it is decided, so an app can show the first one before the slowest arrives.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import (
    Annotated, AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator, Literal, Optional, Sequence, TypeVar, Union,
)

from pydantic import BaseModel, Field

from viddiff.config import Config
from viddiff.errors import VideoError, ViddiffError
from viddiff.methods.events import Judged, Localized, Proposed, SampleEvent
from viddiff.methods.viddiff import VidDiffMethod
from viddiff.pose.performance_input import performance_cameras
from viddiff.report.standins import localised_with_clip, model_roles, note_lines, stand_in_views
from viddiff.report.views import StandInView
from viddiff.schema import (
    Agreement, Difference, Evidence, Keyframes, Letter, Mode, Prediction, Proposal, Sample, SampleResult, Segmentation, Stage,
    StageUsage, VideoRef,
)

R = TypeVar("R")
PathLike = Union[str, Path]
VideoInput = Union[PathLike, Sequence[PathLike]]
"""One side of a comparison: a video (a path), or one performance filmed by several calibrated cameras (a list of
paths, the main video first; its calibration comes with ``calibration=`` or ``calibration_a=``/``calibration_b=``).
The method's own frames come from the main video; the other views feed the body-pose evidence in 3D."""
MAX_ACTION_CHARS = 2000
MAX_DIFFERENCES = 50
"""Most differences one comparison may check or propose: each costs a VLM call, so a runaway list
(a script passing a whole corpus) is refused up front instead of billing thousands of calls."""


class DifferenceResult(BaseModel):
    """One difference, the verdict, and where in each video it was judged."""

    key: str
    name: str
    description: str
    prediction: Optional[Letter]
    """``a``/``b``: more true of video A/B; ``c``: similar or can't tell; ``None``: the model never answered validly."""
    rationale: str = ""
    keyframes_a: list[int] = Field(default_factory=list)
    keyframes_b: list[int] = Field(default_factory=list)
    times_a: list[float] = Field(default_factory=list)
    times_b: list[float] = Field(default_factory=list)
    stages: list[str] = Field(default_factory=list)
    evidence: Optional[Evidence] = None
    """The body-pose measurement of this difference (``pose.evidence``; docs/pose.md): values in A and B with
    their unit, stage and frames, or why it could not be measured. ``None`` where no measurement fits."""
    evidence_absent: Optional[str] = None
    """Why there is no ``evidence`` although pose evidence was asked for (``None`` when it was not asked for)."""
    agreement: Optional[Agreement] = None
    """With ``evidence``: the VLM's answer beside the measured one, whether they agree, which decided
    ``prediction`` (``differencer.evidence``), and the ``headline`` to show ("VLM: B · measured: same within
    ±6° — disagree")."""


class ComparisonResult(BaseModel):
    """What ``compare`` returns; serialise with ``.model_dump_json()``."""

    action: str
    mode: Mode
    differences: list[DifferenceResult]
    stages: list[Stage]
    segmentations: Optional[tuple[Segmentation, Segmentation]] = None
    notes: list[str] = Field(default_factory=list)
    usage: dict[str, StageUsage] = Field(default_factory=dict)
    description: Optional[str] = None
    """``describe`` mode: the pair's similarities and differences as text, grouped by dimension."""


class PlannedDifference(BaseModel):
    """A difference about to be checked, and the stages where it will be looked for."""

    key: str
    name: str
    description: str
    stages: list[str] = Field(default_factory=list)


class ProposalEvent(BaseModel):
    """First event: what will be checked (closed mode: the given statements; open mode: the proposed ones)."""

    type: Literal["proposal"] = "proposal"
    differences: list[PlannedDifference]
    stages: list[Stage]


class SegmentationEvent(BaseModel):
    """Second event: both videos split into the stages (``spans`` index ``frame_indices``)."""

    type: Literal["segmentation"] = "segmentation"
    segmentations: tuple[Segmentation, Segmentation]


class VerdictEvent(BaseModel):
    """One difference decided (in the order verdicts arrive); equal to its entry in the final result, except
    that with ``pose.evidence`` alone its ``evidence`` and ``agreement`` are left out: measured beside the
    judging, they come with the result (with ``differencer.pose_evidence`` or ``differencer.evidence: decide``
    it is measured first and included)."""

    type: Literal["verdict"] = "verdict"
    difference: DifferenceResult


class ResultEvent(BaseModel):
    """Last event: the whole result, identical to what ``acompare`` returns."""

    type: Literal["result"] = "result"
    result: ComparisonResult


CompareEvent = Annotated[
    Union[ProposalEvent, SegmentationEvent, VerdictEvent, ResultEvent], Field(discriminator="type")
]
"""What ``VidDiff.astream`` yields: a proposal, a segmentation, one verdict per difference, then the result.
Each serialises to one JSON object with ``.model_dump_json()`` (what ``viddiff compare --json-lines`` prints)."""


class EventView:
    """Turns the method's events for one pair into the app's :data:`CompareEvent` s."""

    def __init__(self, action: str, stand_in_notes: Callable[[SampleResult], list[str]] = lambda result: []):
        self.action = action
        self.stand_in_notes = stand_in_notes
        self._proposal: Optional[Proposal] = None
        self._keyframes: dict[str, Keyframes] = {}

    def convert(self, event: SampleEvent) -> CompareEvent:
        if isinstance(event, Proposed):
            self._proposal = proposal = event.proposal
            planned = [
                PlannedDifference(
                    key=d.key, name=d.name, description=d.description, stages=_stage_names(proposal, d.key)
                )
                for d in proposal.differences
            ]
            return ProposalEvent(differences=planned, stages=proposal.stages)
        if isinstance(event, Localized):
            self._keyframes = {k.key: k for k in event.localization.keyframes}
            return SegmentationEvent(segmentations=event.localization.segmentations)
        if isinstance(event, Judged):
            assert self._proposal is not None, "a verdict comes after the proposal"
            key = event.prediction.key
            return VerdictEvent(
                difference=difference_result(
                    event.prediction, self._proposal, self._keyframes.get(key), event.evidence, event.evidence_absent
                )
            )
        return ResultEvent(result=to_comparison(event.result, self.action, self.stand_in_notes(event.result)))


class VidDiff(VidDiffMethod):
    """The VidDiff method with its models loaded once, for apps; safe to share across concurrent comparisons."""

    async def astream(
        self,
        video_a: VideoInput,
        video_b: VideoInput,
        action: str,
        *,
        differences: Optional[Sequence[Union[str, Difference]]] = None,
        n_differences: Optional[int] = None,
        fps: Optional[float] = None,
        fps_original: Optional[float] = None,
        calibration: Optional[PathLike] = None,
        calibration_a: Optional[PathLike] = None,
        calibration_b: Optional[PathLike] = None,
    ) -> AsyncIterator[CompareEvent]:
        """``acompare`` as it happens: a :class:`ProposalEvent`, a :class:`SegmentationEvent`, a
        :class:`VerdictEvent` per difference the moment it is decided, then the :class:`ResultEvent`.

        Stop iterating (or cancel the task) and the model calls still in flight are cancelled, none more made.
        """
        sample, mode = build_sample(
            video_a, video_b, action, differences=differences, n_differences=n_differences, fps_original=fps_original,
            calibration=calibration, calibration_a=calibration_a, calibration_b=calibration_b,
        )
        view = EventView(action, self.stand_in_notes)
        events = self.aevents(sample, mode, fps=fps)
        async with contextlib.aclosing(events):
            async for event in events:
                yield view.convert(event)

    def stream(self, *args, **kwargs) -> Iterator[CompareEvent]:
        """Synchronous ``astream`` for callers without an event loop; leaving the loop early cancels the rest."""
        _no_running_loop()
        return _iterate_sync(self.astream(*args, **kwargs), finally_=self.client.aclose)

    async def acompare(
        self,
        video_a: VideoInput,
        video_b: VideoInput,
        action: str,
        *,
        differences: Optional[Sequence[Union[str, Difference]]] = None,
        n_differences: Optional[int] = None,
        fps: Optional[float] = None,
        fps_original: Optional[float] = None,
        calibration: Optional[PathLike] = None,
        calibration_a: Optional[PathLike] = None,
        calibration_b: Optional[PathLike] = None,
    ) -> ComparisonResult:
        """Compare two videos. Give ``differences`` (closed mode) or ``n_differences`` (open mode)."""
        sample, mode = build_sample(
            video_a, video_b, action, differences=differences, n_differences=n_differences, fps_original=fps_original,
            calibration=calibration, calibration_a=calibration_a, calibration_b=calibration_b,
        )
        run = await self.arun_pair(sample, mode, fps=fps)
        return to_comparison(run.result, action, self.stand_in_notes(run.result))

    def compare(self, *args, **kwargs) -> ComparisonResult:
        """Synchronous ``acompare`` for callers without an event loop."""
        return _run_sync(self._then_hang_up(self.acompare(*args, **kwargs)))

    async def adescribe(
        self,
        video_a: VideoInput,
        video_b: VideoInput,
        *,
        action: str = "",
        n_differences: Optional[int] = None,
        fps: Optional[float] = None,
        fps_original: Optional[float] = None,
        calibration: Optional[PathLike] = None,
        calibration_a: Optional[PathLike] = None,
        calibration_b: Optional[PathLike] = None,
    ) -> ComparisonResult:
        """Describe how two videos are alike and how they differ along the seven dimensions of ``viddiff.schema.DIMENSIONS``
        (subject, style, background, camera, motion, position, playback): ``result.description``.

        ``action`` is optional context; ``n_differences`` (candidates to verify) defaults to ``proposer.describe_n_differences``.
        """
        n = self.config.proposer.describe_n_differences if n_differences is None else n_differences
        sample = build_describe_sample(
            video_a, video_b, action, n, fps_original=fps_original,
            calibration=calibration, calibration_a=calibration_a, calibration_b=calibration_b,
        )
        run = await self.arun_pair(sample, "describe", fps=fps)
        return to_comparison(run.result, sample.action_description, self.stand_in_notes(run.result))

    def describe(self, *args, **kwargs) -> ComparisonResult:
        """Synchronous ``adescribe`` for callers without an event loop."""
        return _run_sync(self._then_hang_up(self.adescribe(*args, **kwargs)))

    def stand_in_notes(self, result: SampleResult) -> list[str]:
        """One line per stand-in (the scripted server, random CLIP weights) that produced ``result``; empty when
        real models did."""
        return note_lines(self.stand_in_views(result))

    def stand_in_views(self, result: SampleResult) -> list[StandInView]:
        """The stand-ins behind ``result``; local endpoints are asked once per instance whether they are the
        scripted server."""
        clip_used = localised_with_clip(self.config, [result])
        memo: dict[bool, list[StandInView]] = self.__dict__.setdefault("_stand_in_memo", {})
        if clip_used not in memo:
            roles = model_roles(self.config, method_calls=list(self.model_calls().items()))
            memo[clip_used] = stand_in_views(self.config, roles, clip_used=clip_used)
        return memo[clip_used]

    async def _then_hang_up(self, call: Awaitable[R]) -> R:
        """Await ``call``, then close the HTTP clients opened in this event loop: each synchronous call runs
        its own loop, and a client left open would hold its sockets until it is collected, in another loop."""
        try:
            return await call
        finally:
            await self.client.aclose()


def build_sample(
    video_a: VideoInput,
    video_b: VideoInput,
    action: str,
    *,
    differences: Optional[Sequence[Union[str, Difference]]] = None,
    n_differences: Optional[int] = None,
    fps_original: Optional[float] = None,
    calibration: Optional[PathLike] = None,
    calibration_a: Optional[PathLike] = None,
    calibration_b: Optional[PathLike] = None,
) -> tuple[Sample, Mode]:
    """Validate ``compare`` arguments into a one-off ``Sample`` (custom domain)."""
    action = _checked_action(action)
    if not action:
        raise ViddiffError("the action description is empty: say what the videos show, e.g. 'barbell back squat'")
    if differences is not None and n_differences is not None:
        raise ViddiffError("give either differences (closed mode) or n_differences (open mode), not both")
    if differences is None and n_differences is None:
        raise ViddiffError("give differences to check (closed mode) or n_differences to propose (open mode)")
    diffs: dict[str, Difference] = {}
    if differences is not None:
        if len(differences) == 0:
            raise ViddiffError("the differences list is empty: give at least one statement, or use n_differences")
        if len(differences) > MAX_DIFFERENCES:
            raise ViddiffError(
                f"{len(differences)} differences given; at most {MAX_DIFFERENCES} per comparison: "
                "split them over several calls"
            )
        for i, item in enumerate(differences):
            if isinstance(item, Difference):
                diffs[item.key] = item
                continue
            text = str(item).strip()
            if not text:
                raise ViddiffError(f"difference {i} is empty")
            diffs[str(i)] = Difference(key=str(i), name=text, description=text, query_string=text, num_frames="gt_1")
        mode: Mode = "closed"
    else:
        _check_n_differences(n_differences)
        mode = "open"
    sample = Sample(
        sample_key="compare",
        action="custom",
        action_name=action,
        action_description=action,
        split="custom",
        domain="custom",
        videos=_video_refs(video_a, video_b, fps_original, calibration, calibration_a, calibration_b),
        differences=diffs,
        n_differences_open=n_differences or 0,
    )
    return sample, mode


def build_describe_sample(
    video_a: VideoInput,
    video_b: VideoInput,
    action: str,
    n_differences: int,
    *,
    fps_original: Optional[float] = None,
    calibration: Optional[PathLike] = None,
    calibration_a: Optional[PathLike] = None,
    calibration_b: Optional[PathLike] = None,
) -> Sample:
    """Validate ``describe`` arguments into a one-off ``Sample``; unlike ``compare``, the action may be empty."""
    action = _checked_action(action)
    _check_n_differences(n_differences)
    return Sample(
        sample_key="describe",
        action="custom",
        action_name=action,
        action_description=action,
        split="custom",
        domain="custom",
        videos=_video_refs(video_a, video_b, fps_original, calibration, calibration_a, calibration_b),
        n_differences_open=n_differences,
    )


def _checked_action(action: Optional[str]) -> str:
    action = (action or "").strip()
    if len(action) > MAX_ACTION_CHARS:
        raise ViddiffError(f"the action description is {len(action)} characters; keep it under {MAX_ACTION_CHARS}")
    return action


def _check_n_differences(n_differences: int) -> None:
    if n_differences < 1:
        raise ViddiffError(f"n_differences must be at least 1, got {n_differences}")
    if n_differences > MAX_DIFFERENCES:
        raise ViddiffError(f"n_differences is {n_differences}; at most {MAX_DIFFERENCES} per comparison")


def _video_refs(
    video_a: VideoInput, video_b: VideoInput, fps_original: Optional[float], calibration: Optional[PathLike],
    calibration_a: Optional[PathLike], calibration_b: Optional[PathLike],
) -> tuple[VideoRef, VideoRef]:
    """Both sides' references. A side given as several videos is one performance with its calibration
    (``calibration_a``/``_b``, else the shared ``calibration``), checked now (files, one camera per video) so a
    wrong input fails before any model call."""
    if calibration is not None and (calibration_a is not None or calibration_b is not None):
        raise ViddiffError("give calibration (both sides) or calibration_a / calibration_b, not both")
    sides = (("A", _video_paths(video_a, "A"), calibration_a), ("B", _video_paths(video_b, "B"), calibration_b))
    if calibration is not None and all(len(paths) == 1 for _, paths, _ in sides):
        raise ViddiffError(
            "a calibration is for a side filmed by several cameras: give that side as a list of videos, main video first"
        )
    for which, paths, own in sides:
        if own is not None and len(paths) == 1:
            raise ViddiffError(f"calibration_{which.lower()} is for several videos of side {which}, but it is one video")
    a, b = (_video_ref(paths, which, fps_original, calibration if own is None else own) for which, paths, own in sides)
    return a, b


def _video_paths(video: VideoInput, which: str) -> list[str]:
    paths = [video] if isinstance(video, (str, Path)) else list(video)
    if not paths:
        raise VideoError(f"video {which} is an empty list: give a path, or the paths of one take from several cameras")
    return [_resolved_video_path(path, which) for path in paths]


def _video_ref(
    paths: list[str], which: str, fps_original: Optional[float], calibration: Optional[PathLike]
) -> VideoRef:
    """One side: one path stays one view; several are the main video, then the other cameras' videos."""
    if len(paths) == 1:
        return VideoRef(path=paths[0], fps_original=fps_original)
    if calibration is None:
        raise ViddiffError(
            f"video {which} is {len(paths)} videos, but no calibration says where their cameras stand: give a "
            "calibration (a Pose2Sim .toml or a Qualisys .qca.txt; see the Body pose page of the docs)"
        )
    ref = VideoRef(
        path=paths[0], fps_original=fps_original,
        views=tuple(VideoRef(path=path, fps_original=fps_original) for path in paths[1:]),
        calibration=str(Path(calibration).expanduser().absolute()),
    )
    performance_cameras(ref, f"video {which}")
    return ref


def _resolved_video_path(path: Union[str, Path], which: str) -> str:
    """Absolute path of a user's video; a path that cannot even be resolved (a symlink loop) is a clear error."""
    try:
        return str(Path(path).expanduser().resolve())
    except (OSError, RuntimeError) as exc:
        raise VideoError(f"{path}: cannot open video {which} ({exc}); check the path") from None


def difference_result(
    pred: Prediction, proposal: Proposal, keyframes: Optional[Keyframes], evidence: Optional[Evidence] = None,
    evidence_absent: Optional[str] = None,
) -> DifferenceResult:
    """One verdict as apps see it: the statement, the letter, where in each video it was judged, and its
    body-pose measurement if one was made."""
    d, k = {d.key: d for d in proposal.differences}[pred.key], keyframes
    return DifferenceResult(
        key=pred.key,
        name=d.name,
        description=d.description,
        prediction=pred.prediction,
        rationale=pred.rationale,
        keyframes_a=k.a.frame_indices if k else [],
        keyframes_b=k.b.frame_indices if k else [],
        times_a=k.a.times_s if k else [],
        times_b=k.b.times_s if k else [],
        stages=_stage_names(proposal, pred.key),
        evidence=evidence,
        evidence_absent=evidence_absent,
        agreement=pred.agreement,
    )


def _stage_names(proposal: Proposal, key: str) -> list[str]:
    return [proposal.stages[i].name for i in proposal.links.get(key, [])]


def to_comparison(result: SampleResult, action: str, stand_ins: Sequence[str] = ()) -> ComparisonResult:
    """The app's view of a result; ``stand_ins`` (:meth:`VidDiff.stand_in_notes`) go into its notes."""
    kf = {k.key: k for k in result.keyframes}
    evidence = {e.key: e for e in result.evidence}
    diffs = [
        difference_result(
            pred, result.proposal, kf.get(pred.key), evidence.get(pred.key), result.evidence_absent.get(pred.key)
        )
        for pred in result.predictions
    ]
    return ComparisonResult(
        action=action,
        mode=result.mode,
        differences=diffs,
        stages=result.proposal.stages,
        segmentations=result.segmentations,
        notes=[*result.notes, *stand_ins],
        usage=result.usage,
        description=result.description,
    )


def compare(
    video_a: VideoInput,
    video_b: VideoInput,
    action: str,
    *,
    differences: Optional[Sequence[Union[str, Difference]]] = None,
    n_differences: Optional[int] = None,
    config: Optional[Config] = None,
    fps: Optional[float] = None,
    fps_original: Optional[float] = None,
    calibration: Optional[PathLike] = None,
    calibration_a: Optional[PathLike] = None,
    calibration_b: Optional[PathLike] = None,
) -> ComparisonResult:
    """One-shot comparison (loads models, compares, closes). Reuse ``VidDiff`` for many calls.

    ``fps_original`` is needed only for directories of frame images (files carry their frame rate).
    A side may be a list of videos of one take from several calibrated cameras, main video first, with
    ``calibration`` (one setup for both sides) or ``calibration_a``/``calibration_b``: its body-pose evidence is
    then measured in 3D (docs/pose.md), while the method's own frames come from the main video.
    """

    return run_once(
        config,
        lambda vd: vd.acompare(
            video_a, video_b, action, differences=differences, n_differences=n_differences, fps=fps,
            fps_original=fps_original, calibration=calibration, calibration_a=calibration_a, calibration_b=calibration_b,
        ),
    )


def describe(
    video_a: VideoInput,
    video_b: VideoInput,
    *,
    action: str = "",
    n_differences: Optional[int] = None,
    config: Optional[Config] = None,
    fps: Optional[float] = None,
    fps_original: Optional[float] = None,
    calibration: Optional[PathLike] = None,
    calibration_a: Optional[PathLike] = None,
    calibration_b: Optional[PathLike] = None,
) -> ComparisonResult:
    """One-shot description of similarities and differences (``result.description``)."""

    return run_once(
        config,
        lambda vd: vd.adescribe(
            video_a, video_b, action=action, n_differences=n_differences, fps=fps, fps_original=fps_original,
            calibration=calibration, calibration_a=calibration_a, calibration_b=calibration_b,
        ),
    )


def run_once(config: Optional[Config], call: Callable[["VidDiff"], Awaitable[R]]) -> R:
    """Load the models, run one call, release them: the module-level convenience functions."""

    async def run() -> R:
        vd = VidDiff(config)
        try:
            return await call(vd)
        finally:
            await vd.aclose()

    return _run_sync(run())


def _run_sync(coro):
    try:
        _no_running_loop()
    except RuntimeError:
        coro.close()
        raise
    return asyncio.run(coro)


def _no_running_loop() -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError("called the synchronous API inside a running event loop; use `await VidDiff.acompare(...)`")


def _iterate_sync(events: AsyncGenerator[R, None], finally_: Callable[[], Awaitable[None]]) -> Iterator[R]:
    """Drive an async generator from synchronous code on a private event loop; closing the iterator closes it.
    ``finally_`` runs on that loop at the end (to close the HTTP clients opened in it)."""
    with asyncio.Runner() as runner:
        try:
            while True:
                try:
                    item = runner.run(events.__anext__())
                except StopAsyncIteration:
                    return
                yield item
        finally:
            try:
                runner.run(events.aclose())
            finally:
                runner.run(finally_())
