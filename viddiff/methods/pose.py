"""The ``pose`` method: closed-mode verdicts from body-pose measurements alone, no VLM (docs/pose.md).

Stages and links come from the proposer and the segmentation from the localizer, exactly as in the VidDiff
method (on the method's own frames, ``data.default_fps``); then each difference is mapped to at most one
measurement (one cached call to the proposer's model), measured in both videos on the same stage from the pose
estimated at ``pose.fps``, and answered from the numbers: ``a``/``b`` when A and B differ by more than their
combined uncertainty and the quantity's smallest meaningful difference (``pose.margins``) in the direction
that makes the statement true, ``c`` within them, and no answer where no measurement fits, the measurement is
uncertain or the views are not comparable. Tempo statements ("B is slower in the descent") are stage
durations, which need no pose model at all.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any, Callable, Optional

from viddiff.backends.llm import UsageMeter
from viddiff.config import ModelCallConfig
from viddiff.errors import ViddiffError
from viddiff.methods.viddiff import VidDiffMethod, _frame_rate_notes, main_pose_frames
from viddiff.pose.mapping import STAGE as POSE_STAGE
from viddiff.pose.agreement import agreement
from viddiff.schema import Mode, Prediction, Sample, SampleResult
from viddiff.video import VideoFrames


class PoseMethod(VidDiffMethod):
    """A :class:`viddiff.methods.Method` (``pose``): proposer → localizer → measurements → verdicts."""

    name = "pose"
    stages = ("proposer", "localizer", POSE_STAGE)
    modes = ("closed",)

    def model_calls(self) -> dict[str, ModelCallConfig]:
        return {"proposer": self.config.proposer, POSE_STAGE: self.pose_evidence.mapping_call()}

    async def aprocess(
        self,
        sample: Sample,
        mode: Mode,
        *,
        index: int = 0,
        videos: Optional[tuple[VideoFrames, VideoFrames]] = None,
        fps: Optional[float] = None,
        on_stage: Optional[Callable[[str], Any]] = None,
        meter: Optional[UsageMeter] = None,
    ) -> SampleResult:
        """Answer one closed-mode sample from its measurements (see the module docstring)."""
        if mode != "closed":
            raise ViddiffError(f"the pose method answers closed mode only, not {mode}")
        meter = meter if meter is not None else UsageMeter()
        if sample.labels and not sample.closed_differences():
            return SampleResult(
                sample_key=sample.sample_key, index=index, mode=mode, method=self.name,
                notes=["no a/b-labelled differences: nothing to check"],
            )
        loaded = None if videos is not None else await self.load_videos_and_pose(sample, fps, pose=True)
        videos = videos or loaded.videos
        proposal = await self._proposal(sample, mode, meter)
        _notify(on_stage, "proposer")
        preparing = self.pose_evidence.begin(sample, proposal, meter, main_pose_frames(loaded))  # beside the localizer
        try:
            localization = await self._localize_now(sample, mode, proposal, videos)
        except BaseException:
            preparing.cancel()
            await asyncio.gather(preparing, return_exceptions=True)
            raise
        _notify(on_stage, "localizer")
        found = await self.pose_evidence.measure(sample, proposal, localization, videos, meter, prepared=preparing)
        by_key = {e.key: e for e in found.evidence}
        margins = self.config.pose.margins.model_dump()
        predictions = []
        for diff in proposal.differences:
            evidence = by_key.get(diff.key)
            if evidence is None:
                predictions.append(Prediction(key=diff.key, description=diff.description, prediction=None, rationale=found.absent[diff.key]))
                continue
            agreed = agreement(None, evidence, margins, has_vlm=False)
            predictions.append(Prediction(
                key=diff.key, description=diff.description, prediction=agreed.measured, rationale=agreed.measured_reason,
                agreement=agreed,
            ))
        _notify(on_stage, POSE_STAGE)
        count = Counter(e.status for e in found.evidence)
        notes = proposal.notes + localization.notes + _frame_rate_notes(videos) + [
            f"pose: {count['measured']} of {len(proposal.differences)} differences measured, "
            f"{count['uncertain']} uncertain, {count['not_comparable']} not comparable (different camera views), "
            f"{len(found.absent)} not measurable"
        ]
        return SampleResult(
            sample_key=sample.sample_key, index=index, mode=mode, method=self.name, proposal=proposal, notes=notes,
            segmentations=localization.segmentations, keyframes=localization.keyframes, predictions=predictions,
            usage=meter.by_stage(), evidence=found.evidence, evidence_absent=found.absent,
        )


def _notify(callback: Optional[Callable[[str], Any]], stage: str) -> None:
    if callback is not None:
        callback(stage)
