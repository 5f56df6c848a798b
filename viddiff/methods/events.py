"""What the VidDiff method reports while it answers one sample, in order: the proposal, the localisation,
each verdict the moment it is decided, then the result.

:meth:`viddiff.methods.viddiff.VidDiffMethod.aevents` yields them; ``aprocess`` (what ``viddiff run``
drives) keeps only the result, and the app API (``viddiff.api.VidDiff.astream``) turns them into the
events an app sees.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

from viddiff.localizer.localize import Localization
from viddiff.schema import Evidence, Prediction, Proposal, SampleResult
from viddiff.video import VideoFrames


@dataclass(frozen=True)
class Proposed:
    """The differences to check, the stages and their links."""

    proposal: Proposal

    @property
    def stage(self) -> Optional[str]:
        return "proposer"


@dataclass(frozen=True)
class Localized:
    """Both videos segmented into the proposal's stages, and the keyframes of every difference."""

    localization: Localization

    @property
    def stage(self) -> Optional[str]:
        return "localizer"


@dataclass(frozen=True)
class Judged:
    """One difference's verdict (verdicts come in the order they are decided, not the proposal's)."""

    prediction: Prediction
    evidence: Optional[Evidence] = None
    """Its body-pose measurement when it was measured before the judging (``differencer.pose_evidence``);
    with ``pose.evidence`` alone the measuring runs beside the judging and only the result carries it."""
    evidence_absent: Optional[str] = None
    """Why it has no measurement, when that was known before the judging (as ``evidence``)."""

    @property
    def stage(self) -> Optional[str]:
        return None


@dataclass(frozen=True)
class Finished:
    """The sample's result (predictions in the proposal's order) and the frames it was computed from."""

    result: SampleResult
    videos: Optional[tuple[VideoFrames, VideoFrames]]
    """``None`` when the sample had nothing to check (its videos were not read)."""

    @property
    def stage(self) -> Optional[str]:
        return "differencer" if self.videos is not None else None


SampleEvent = Union[Proposed, Localized, Judged, Finished]
"""``stage`` names the method stage an event completes (``aprocess``'s ``on_stage`` argument), if any."""
