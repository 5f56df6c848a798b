"""The ``pose`` method: closed-mode verdicts from body-pose measurements alone, no VLM (docs/pose.md).

Stages and links come from the proposer and the segmentation from the localizer, exactly as in the VidDiff
method; then each difference is mapped to at most one measurement (one cached call to the proposer's model),
measured in both videos on the same stage, and answered from the numbers: ``a``/``b`` when A and B differ
by more than the quantity's margin (``pose.margins``) in the direction that makes the statement true, ``c``
within the margin, and no answer where no measurement fits or the measurement is uncertain. Tempo
statements ("B is slower in the descent") are stage durations, which need no pose model at all.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from viddiff.backends.llm import UsageMeter
from viddiff.config import ModelCallConfig
from viddiff.errors import ViddiffError
from viddiff.methods.viddiff import VidDiffMethod, _frame_rate_notes
from viddiff.pose.mapping import STAGE as POSE_STAGE
from viddiff.pose.measure import decide
from viddiff.schema import Mode, Prediction, Sample, SampleResult
from viddiff.video import VideoFrames, read_pair


class PoseMethod(VidDiffMethod):
    """A :class:`viddiff.methods.Method` (``pose``): proposer → localizer → measurements → verdicts."""

    name = "pose"
    stages = ("proposer", "localizer", POSE_STAGE)
    modes = ("closed",)

    def model_calls(self) -> dict[str, ModelCallConfig]:
        return {"proposer": self.config.proposer, POSE_STAGE: self.pose_evidence.mapping_call()}

    async def load_videos(self, sample: Sample, fps: Optional[float] = None) -> tuple[VideoFrames, VideoFrames]:
        """Both videos at ``pose.fps`` when set (segmented and measured on the same frames), else the domain's fps."""
        data = self.config.data
        target = fps or self.config.pose.fps or data.fps_for(sample.domain)
        return await read_pair(sample.videos, target, data.max_side, data.video_backend)

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
        videos = videos or await self.load_videos(sample, fps)
        proposal = await self._proposal(sample, mode, meter)
        _notify(on_stage, "proposer")
        localization = await self._localize_now(sample, mode, proposal, videos)
        _notify(on_stage, "localizer")
        evidence = await self.pose_evidence.measure(sample, proposal, localization, videos, meter, pose_videos=videos)
        by_key = {e.key: e for e in evidence}
        margins = self.config.pose.margins.model_dump()
        predictions = []
        for diff in proposal.differences:
            found = by_key.get(diff.key)
            letter, why = decide(found, margins) if found is not None else (None, "no measurement fits this difference")
            predictions.append(Prediction(key=diff.key, description=diff.description, prediction=letter, rationale=why))
        _notify(on_stage, POSE_STAGE)
        n_measured = sum(e.status == "measured" for e in evidence)
        notes = proposal.notes + localization.notes + _frame_rate_notes(videos) + [
            f"pose: {n_measured} of {len(proposal.differences)} differences measured, "
            f"{len(evidence) - n_measured} uncertain, {len(proposal.differences) - len(evidence)} not measurable"
        ]
        return SampleResult(
            sample_key=sample.sample_key, index=index, mode=mode, method=self.name, proposal=proposal, notes=notes,
            segmentations=localization.segmentations, keyframes=localization.keyframes, predictions=predictions,
            usage=meter.by_stage(), evidence=evidence,
        )


def _notify(callback: Optional[Callable[[str], Any]], stage: str) -> None:
    if callback is not None:
        callback(stage)
