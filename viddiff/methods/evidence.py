"""Body-pose evidence for a method's differences: the mapping call, the pose when a measurement needs one,
and one :class:`~viddiff.schema.Evidence` per difference a measurement fits (docs/pose.md).

Shared by the VidDiff method (``pose.evidence``, ``differencer.pose_evidence``) and the ``pose`` method. The
pose wing does the work; this module only composes it with the proposal, the localizer's segmentation and
keyframes, the frames, the chat client and the cache. :meth:`PoseEvidence.begin` starts the mapping call and
the pose estimation as soon as the proposal is known, so they run beside the localizer and the differencer's
calls; :meth:`PoseEvidence.measure` then only does the arithmetic.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from dataclasses import dataclass, field
from typing import Awaitable, Callable, Optional, Sequence, Union

import numpy as np

from viddiff.backends.chat import ChatModel
from viddiff.backends.usage import UsageMeter
from viddiff.cache import Cache
from viddiff.config import Config, ModelCallConfig
from viddiff.errors import EndpointError, InvalidAnswerError
from viddiff.localizer.localize import Localization
from viddiff.pose.agreement import settle
from viddiff.pose.align import stage_windows
from viddiff.pose.calibration import CalibrationError
from viddiff.pose.estimators import PoseEstimator, build_pose_estimator
from viddiff.pose.frames import pose_shrink
from viddiff.pose.mapping import map_differences
from viddiff.pose.multiview import PerformancePose, estimate_performance
from viddiff.pose.performance_input import performance_cameras, performance_paths
from viddiff.pose.roll import level_pair
from viddiff.pose.measure import Settings, VideoMeasures, measure
from viddiff.pose.track import PoseTrack, estimate_track
from viddiff.pose.sampling import pose_rate
from viddiff.pose.sync import SyncError
from viddiff.pose.statistics import inside
from viddiff.pose.view import comparable_views, estimate_view
from viddiff.pose.vocabulary import QUANTITIES
from viddiff.schema import CameraView, Evidence, MeasurementSpec, Mode, Prediction, Proposal, Sample, VideoRef
from viddiff.video import Sampling, VideoFrames, probe_video, read_video_ref_sampled, resolve_trim

NO_MEASUREMENT = "no measurement fits this difference"
BodyPose = Union[PoseTrack, PerformancePose]
"""One side's pose: one video's 2D track, or a performance triangulated from several calibrated views."""
SHARED_READ_MAX_FRAMES = 600
"""Pose frames per video up to which they are decoded with the method's (40 s at 15 fps, about 0.9 GB at 960
pixels); beyond it they are decoded again once the mapping call wants a body (docs/pose.md, "Cost")."""
MainPoseFrames = Callable[[], Awaitable[Optional[tuple[VideoFrames, VideoFrames]]]]
"""Both main videos' pose frames (:meth:`PoseEvidence.sampling`), decoded with the method's own frames (``None``:
they were not); called only when a measurement needs a body."""


@dataclass
class Prepared:
    """What the model call and the estimator gave, before the segmentation is known."""

    specs: dict[str, MeasurementSpec] = field(default_factory=dict)
    absent: dict[str, str] = field(default_factory=dict)
    """Difference key → why it gets no measurement."""
    tracks: Optional[tuple[BodyPose, BodyPose]] = None
    frames: Optional[tuple[tuple[VideoFrames, ...], tuple[VideoFrames, ...]]] = None
    """The frames the pose was estimated on (read at ``pose.fps``): per side, its main video's, then its other
    views' (a side filmed by several calibrated cameras)."""


@dataclass(frozen=True)
class PoseMeasurements:
    evidence: list[Evidence]
    absent: dict[str, str]
    """Difference key → why it has no evidence (every difference without evidence is here)."""


class PoseEvidence:
    """Measures differences for one method instance; the estimator is built on first need and shared."""

    def __init__(self, config: Config, client: ChatModel, cache: Optional[Cache]):
        self.config = config
        self.client = client
        self.cache = cache
        self._estimator: Optional[PoseEstimator] = None
        self._lock = threading.Lock()

    @property
    def wanted(self) -> bool:
        """Whether the VidDiff method measures at all (``pose.evidence``, ``differencer.pose_evidence`` or
        ``differencer.evidence: decide``)."""
        differencer = self.config.differencer
        return self.config.pose.evidence or differencer.pose_evidence or differencer.evidence == "decide"

    @property
    def needed_first(self) -> bool:
        """Whether the measurements must be known before the first verdict (for the prompt, or to decide)."""
        return self.config.differencer.pose_evidence or self.config.differencer.evidence == "decide"

    def settle(self, prediction: Prediction, evidence: Optional[Evidence], mode: Mode) -> Prediction:
        """The VLM's verdict beside the measured one, answered by ``differencer.evidence``
        (:func:`viddiff.pose.agreement.settle`); describe mode allows ``c`` (its similarities)."""
        differencer = self.config.differencer
        return settle(
            prediction, evidence, self.config.pose.margins.model_dump(), mode=differencer.evidence,
            options="abc" if mode == "describe" else differencer.options,
        )

    def mapping_call(self) -> ModelCallConfig:
        """The proposer's model and endpoint, at temperature 0: a mapping is a lookup, not a creative answer."""
        return ModelCallConfig(**{**self.config.proposer.model_dump(include=set(ModelCallConfig.model_fields)), "temperature": 0.0})

    def estimator(self) -> PoseEstimator:
        with self._lock:
            if self._estimator is None:
                self._estimator = build_pose_estimator(self.config.pose)
            return self._estimator

    def sampling(self, ref: VideoRef) -> Sampling:
        """How the pose reads a video: over its whole trim, at the rate :func:`pose_rate` picks for it, no larger
        than ``pose.max_side``. The method reads its own frames and these in one decode (docs/pose.md, "Cost")."""
        return self._sampling_and_count(ref)[0]

    def shared_sampling(self, ref: VideoRef) -> Optional[Sampling]:
        """:meth:`sampling`, where the pose frames of ``ref`` are few enough to decode with the method's before the
        mapping call has said a body is measured at all; ``None`` for a long clip (a 10-min clip at 15 fps: 9000
        frames, about 14 GB at 960 pixels), whose pose frames are read only once they are known to be needed."""
        sampling, n_frames = self._sampling_and_count(ref)
        return sampling if n_frames <= SHARED_READ_MAX_FRAMES else None

    def _sampling_and_count(self, ref: VideoRef) -> tuple[Sampling, float]:
        """:meth:`sampling` and how many frames of the trim it reads (one probe of the file)."""
        cfg = self.config.pose
        info = probe_video(ref.path, ref.fps_original, self.config.data.video_backend)
        start, end = resolve_trim(ref.frames_trim, info.n_frames, ref.path)
        rate = pose_rate(end - start, info.fps, cfg.fps, cfg.native_up_to_frames)
        n_frames = end - start if rate is None or info.fps <= 0 else (end - start) * rate / info.fps
        return Sampling(target_fps=rate, max_side=self.config.data.max_side, shrink=pose_shrink(cfg.max_side)), n_frames

    def begin(
        self, sample: Sample, proposal: Proposal, meter: Optional[UsageMeter] = None, main_frames: Optional[MainPoseFrames] = None
    ) -> "asyncio.Future[Prepared]":
        """Start mapping the differences and, when a measurement needs it, estimating the pose, now."""
        return asyncio.ensure_future(self.prepare(sample, proposal, meter, main_frames))

    async def prepare(
        self, sample: Sample, proposal: Proposal, meter: Optional[UsageMeter] = None, main_frames: Optional[MainPoseFrames] = None
    ) -> Prepared:
        """The mapping call, then (only when some measurement needs a body) both videos' pose at ``pose.fps``.
        ``main_frames``: both main videos' pose frames as the method read them (else they are read here).

        A mapping answer that stays invalid (or a request the endpoint keeps refusing) costs the evidence, not
        the verdicts: every difference is then absent with the reason."""
        try:
            mapped = await map_differences(
                self.client, self.mapping_call(), sample.action_description, proposal.stages, proposal.differences, meter
            )
        except (InvalidAnswerError, EndpointError) as exc:
            if isinstance(exc, EndpointError) and exc.fatal:
                raise
            why = f"the pose mapping call failed ({exc}); no measurement was made"
            return Prepared(absent={d.key: why for d in proposal.differences})
        prepared = Prepared(
            specs={key: spec for key, spec in mapped.items() if spec is not None},
            absent={key: NO_MEASUREMENT for key, spec in mapped.items() if spec is None},
        )
        if any(QUANTITIES[spec.quantity].needs_pose for spec in prepared.specs.values()):
            prepared.frames = await self._pose_frames(sample, None if main_frames is None else await main_frames())
            try:
                prepared.tracks = await asyncio.to_thread(self._tracks, sample, prepared.frames)
            except SyncError as exc:  # absent, not guessed: the verdicts and the durations go on without it
                why = f"the pose was not measured: {exc}"
                prepared.absent.update({k: why for k, spec in prepared.specs.items() if QUANTITIES[spec.quantity].needs_pose})
                prepared.specs = {k: spec for k, spec in prepared.specs.items() if k not in prepared.absent}
        return prepared

    async def measure(
        self,
        sample: Sample,
        proposal: Proposal,
        localization: Localization,
        videos: tuple[VideoFrames, VideoFrames],
        meter: Optional[UsageMeter] = None,
        *,
        prepared: Optional["asyncio.Future[Prepared]"] = None,
    ) -> PoseMeasurements:
        """Evidence for every difference of ``proposal`` that a measurement fits, in the proposal's order, and
        why the others have none. ``videos`` are the frames the segmentation was made on; ``prepared`` is
        :meth:`begin`'s future (started here when not given)."""
        ready = await (prepared if prepared is not None else self.prepare(sample, proposal, meter))
        cfg = self.config.pose
        tracks = _levelled(ready.tracks)
        kinematics = [
            track.kinematics(min_confidence=cfg.min_confidence, smoothing_frames=cfg.smoothing_frames, fix_sides=cfg.fix_side_swaps)
            if track is not None else None
            for track in tracks
        ]
        label = _estimator_label(ready.tracks)
        subjects = [track.subject_info(kin) if track is not None else None for track, kin in zip(tracks, kinematics)]
        keyframes = {k.key: k for k in localization.keyframes}
        settings = Settings(
            min_coverage=cfg.min_coverage, min_frames=cfg.min_frames, min_seconds=cfg.min_seconds,
            robust_window_s=cfg.robust_window_s, smoothing_frames=cfg.smoothing_frames,
            noise_floors=cfg.noise_floors.model_dump(), alignment=cfg.alignment,
            views_differ=functools.partial(_views_differ, tolerance_deg=cfg.view_tolerance_deg),
            view_errors=cfg.view_errors.model_dump(), plane_tolerance_deg=cfg.plane_tolerance_deg,
            view_difference_errors=cfg.view_difference_errors.model_dump(),
        )
        stage_names = [s.name for s in proposal.stages]
        evidence = []
        for diff in proposal.differences:
            spec = ready.specs.get(diff.key)
            if spec is None:
                continue
            kf = keyframes.get(diff.key)
            sides = []
            for i, (segmentation, video, track, kin) in enumerate(zip(localization.segmentations, videos, tracks, kinematics)):
                windows = stage_windows(segmentation.spans, video.times_s, video.duration_s)
                view = _view(track, windows, spec) if track is not None and QUANTITIES[spec.quantity].needs_pose else None
                sides.append(VideoMeasures(
                    windows=windows, frame_indices=video.frame_indices, times_s=video.times_s, kinematics=kin,
                    keyframes=None if kf is None else (kf.a, kf.b)[i], frame_step_s=1.0 / video.fps_original,
                    view=view, subject=subjects[i] if view is not None else None,
                    triangulation_errors=track.triangulation_errors if isinstance(track, PerformancePose) else None,
                    calibration_errors=track.calibration_errors if isinstance(track, PerformancePose) else None,
                    skeleton=track.skeleton if isinstance(track, PerformancePose) else None,
                ))
            evidence.append(measure(diff.key, spec, *sides, stage_names, estimator=label, settings=settings))
        absent = {d.key: ready.absent.get(d.key, NO_MEASUREMENT) for d in proposal.differences if d.key not in ready.specs}
        return PoseMeasurements(evidence=evidence, absent=absent)

    async def _pose_frames(
        self, sample: Sample, main: Optional[tuple[VideoFrames, VideoFrames]] = None
    ) -> tuple[tuple[VideoFrames, ...], tuple[VideoFrames, ...]]:
        """Both sides' videos read for their pose (:meth:`sampling`), whatever rate the method's own frames have;
        a side filmed by several cameras reads each of its views at its main video's rate. ``main``: both main
        videos' frames, already read so; only the other views are read then."""
        backend = self.config.data.video_backend

        def read(ref: VideoRef, given: Optional[VideoFrames]) -> tuple[VideoFrames, ...]:
            if given is not None and not ref.views:
                return (given,)
            sampling = self.sampling(ref)
            first = given if given is not None else read_video_ref_sampled(ref, (sampling,), backend)[0]
            return (first, *(read_video_ref_sampled(view, (sampling,), backend)[0] for view in ref.views))

        a, b = sample.videos
        given_a, given_b = main if main is not None else (None, None)
        if a == b:
            frames = await asyncio.to_thread(read, a, given_a)
            return frames, frames
        first, second = await asyncio.gather(asyncio.to_thread(read, a, given_a), asyncio.to_thread(read, b, given_b))
        return first, second

    def _tracks(
        self, sample: Sample, videos: tuple[tuple[VideoFrames, ...], tuple[VideoFrames, ...]]
    ) -> tuple[BodyPose, BodyPose]:
        """Both sides' pose: one video's keypoints, or a performance triangulated from its calibrated views; one
        estimate at a time (a CPU-bound model, and a tracker's state per video)."""
        estimator = self.estimator()
        with self._lock:
            first = self._side_pose(sample.videos[0], videos[0], estimator, "video A")
            second = first if videos[1] is videos[0] else self._side_pose(sample.videos[1], videos[1], estimator, "video B")
        return first, second

    def _side_pose(self, ref: VideoRef, frames: Sequence[VideoFrames], estimator: PoseEstimator, which: str) -> BodyPose:
        subject = self.config.pose.subject
        if not ref.views:
            return estimate_track(frames[0], estimator, self.cache, subject)
        try:
            return estimate_performance(
                frames, performance_cameras(ref, which), estimator, self.cache, subject, sources=performance_paths(ref)
            )
        except SyncError as exc:
            raise SyncError(f"{which}'s views could not be aligned in time ({exc})") from None
        except CalibrationError as exc:  # a camera that does not fit its video: say whose
            raise CalibrationError(f"{which}: {exc}") from None


def _levelled(tracks: Optional[tuple[BodyPose, BodyPose]]) -> tuple[Optional[BodyPose], Optional[BodyPose]]:
    """Both sides' pose, a picture turned relative to the other's turned back (:func:`level_pair`); a 3D
    performance is the body's own, whatever way its pictures stand, so a pair with one is left as it is."""
    if tracks is None:
        return None, None
    a, b = tracks
    if isinstance(a, PoseTrack) and isinstance(b, PoseTrack):
        return level_pair(a, b)
    return a, b


def _estimator_label(tracks: Optional[tuple[BodyPose, BodyPose]]) -> Optional[str]:
    """What estimated the pose: A's (one-view pairs, as always, and pairs measured alike), else each side's."""
    if tracks is None:
        return None
    a, b = (track.estimator for track in tracks)
    mixed = a != b and any(isinstance(track, PerformancePose) for track in tracks)
    return f"A: {a}; B: {b}" if mixed else a


def _view(track: BodyPose, windows: np.ndarray, spec: MeasurementSpec) -> CameraView:
    """The camera's view of the body over the pose frames of the measured stage (or the whole action); a 3D
    performance's view is marked as triangulated (comparable with any other 3D view)."""
    start, end = (windows[0, 0], windows[-1, 1]) if spec.stage is None else windows[spec.stage]
    rows = inside(track.times_s, float(start), float(end))
    return track.view(rows) if isinstance(track, PerformancePose) else estimate_view(track, rows)


def _views_differ(a: CameraView, b: CameraView, spec: MeasurementSpec, *, tolerance_deg: float) -> Optional[str]:
    return comparable_views(a, b, tolerance_deg, spec)
