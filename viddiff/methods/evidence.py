"""Body-pose evidence for a method's differences: the mapping call, the pose when a measurement needs one,
and one :class:`~viddiff.schema.Evidence` per difference a measurement fits (docs/pose.md).

Shared by the VidDiff method (``pose.evidence``, ``differencer.pose_evidence``) and the ``pose`` method. The
pose wing does the work; this module only composes it with the proposal, the localizer's segmentation and
keyframes, the frames, the chat client and the cache.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Optional

from viddiff.backends.chat import ChatModel
from viddiff.backends.usage import UsageMeter
from viddiff.cache import Cache
from viddiff.config import Config, ModelCallConfig
from viddiff.localizer.localize import Localization
from viddiff.pose.align import stage_windows
from viddiff.pose.estimators import PoseEstimator, build_pose_estimator
from viddiff.pose.mapping import map_differences
from viddiff.pose.measure import Settings, VideoMeasures, measure
from viddiff.pose.track import PoseTrack, estimate_track
from viddiff.pose.vocabulary import QUANTITIES
from viddiff.schema import Evidence, Proposal, Sample
from viddiff.video import VideoFrames, read_pair, unshrunk


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
        """Whether the VidDiff method measures at all (``pose.evidence`` or ``differencer.pose_evidence``)."""
        return self.config.pose.evidence or self.config.differencer.pose_evidence

    def mapping_call(self) -> ModelCallConfig:
        """The proposer's model and endpoint, at temperature 0: a mapping is a lookup, not a creative answer."""
        return ModelCallConfig(**{**self.config.proposer.model_dump(include=set(ModelCallConfig.model_fields)), "temperature": 0.0})

    def estimator(self) -> PoseEstimator:
        with self._lock:
            if self._estimator is None:
                self._estimator = build_pose_estimator(self.config.pose)
            return self._estimator

    async def measure(
        self,
        sample: Sample,
        proposal: Proposal,
        localization: Localization,
        videos: tuple[VideoFrames, VideoFrames],
        meter: Optional[UsageMeter] = None,
        *,
        pose_videos: Optional[tuple[VideoFrames, VideoFrames]] = None,
    ) -> list[Evidence]:
        """Evidence for every difference of ``proposal`` that a measurement fits, in the proposal's order.

        ``videos`` are the frames the segmentation was made on; the pose is estimated on ``pose_videos``,
        by default those same frames, or the videos read again at ``pose.fps`` when that is set.
        """
        specs = await map_differences(
            self.client, self.mapping_call(), sample.action_description, proposal.stages, proposal.differences, meter
        )
        wanted = {key: spec for key, spec in specs.items() if spec is not None}
        if not wanted:
            return []
        tracks: tuple[Optional[PoseTrack], Optional[PoseTrack]] = (None, None)
        label = None
        if any(QUANTITIES[spec.quantity].needs_pose for spec in wanted.values()):
            frames = pose_videos or await self._pose_frames(sample, videos)
            tracks = await asyncio.to_thread(self._tracks, frames)
            label = tracks[0].estimator
        cfg = self.config.pose
        kinematics = [
            track.kinematics(min_confidence=cfg.min_confidence, smoothing_frames=cfg.smoothing_frames, fix_sides=cfg.fix_side_swaps)
            if track is not None else None
            for track in tracks
        ]
        keyframes = {k.key: k for k in localization.keyframes}
        settings = Settings(min_coverage=cfg.min_coverage, points_per_stage=cfg.curve_points, alignment=cfg.alignment)
        stage_names = [s.name for s in proposal.stages]
        evidence = []
        for diff in proposal.differences:
            spec = wanted.get(diff.key)
            if spec is None:
                continue
            kf = keyframes.get(diff.key)
            sides = [
                VideoMeasures(
                    windows=stage_windows(segmentation.spans, video.times_s, clip_end_s(video)),
                    frame_indices=video.frame_indices,
                    times_s=video.times_s, kinematics=kin, keyframes=None if kf is None else (kf.a, kf.b)[i],
                )
                for i, (segmentation, video, kin) in enumerate(zip(localization.segmentations, videos, kinematics))
            ]
            evidence.append(measure(diff.key, spec, *sides, stage_names, estimator=label, settings=settings))
        return evidence

    async def _pose_frames(
        self, sample: Sample, videos: tuple[VideoFrames, VideoFrames]
    ) -> tuple[VideoFrames, VideoFrames]:
        fps = self.config.pose.fps
        if fps is None:  # the method's frames, whole (it keeps them shrunk for CLIP)
            if videos[0] is videos[1]:
                both = await asyncio.to_thread(unshrunk, videos[0])
                return both, both
            a, b = await asyncio.gather(*(asyncio.to_thread(unshrunk, v) for v in videos))
            return a, b
        data = self.config.data
        return await read_pair(sample.videos, fps, data.max_side, data.video_backend)

    def _tracks(self, videos: tuple[VideoFrames, VideoFrames]) -> tuple[PoseTrack, PoseTrack]:
        """Both videos' keypoints; one estimate at a time (a CPU-bound model, and a tracker's state per video)."""
        estimator = self.estimator()
        with self._lock:
            track_a = estimate_track(videos[0], estimator, self.cache)
            track_b = track_a if videos[1] is videos[0] else estimate_track(videos[1], estimator, self.cache)
        return track_a, track_b


def clip_end_s(video: VideoFrames) -> float:
    """When the clip ends, in its own seconds: the end of its last frame (the trim's end), not its last sampled one."""
    if video.frame_times_s is None:
        return (video.end - video.start) / video.fps_original
    return float(video.frame_times_s[-1]) + 1.0 / video.fps_original
