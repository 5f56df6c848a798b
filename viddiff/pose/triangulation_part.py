"""How far a 3D value from a few calibrated views may be from the body's: the triangulation part of its interval,
grown by how the views stand and how much of the take they could triangulate.

Two views fix a point's depth badly where their lines of sight to the body are nearly parallel or nearly
opposite (the error along the line joining them grows as one over the sine of the angle between them), and a
take whose keypoints the views often disagree on or are unsure of (another person in the way, a limb hidden)
keeps fewer triangulated joints, and its remaining ones are worse. So a performance's part for a quantity is its
per-quantity constant (:data:`TRIANGULATION_ERRORS`, the part for views 90° apart that triangulate every limb
joint) times :func:`part_scale`, ``1 / (sin(sight angle) * sqrt(limb share))``. ``bench/pose_3d.py`` fits the
constants on one Pose2Sim take's view pairs and checks the coverage on the other take's (docs/pose.md, "Two
phones (3D)"): fitted to cover 90% on the single-person take, a constant part covered 79% of the two-person
take's statistics, one scaled by the sight angle alone 80%, one scaled by this scale 89% (and 94% fitted to 95%).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from viddiff.pose.calibration import Camera
from viddiff.pose.skeleton import INDEX

TRIANGULATION_ERRORS: dict[str, float] = {
    "knee_angle": 10.2, "hip_angle": 6.8, "elbow_angle": 18.4, "shoulder_angle": 8.0, "ankle_angle": 16.5,
    "trunk_lean": 5.5, "stance_width": 0.47, "grip_width": 0.0, "hip_height": 0.05, "wrist_height": 0.17,
}
"""Per quantity (degrees or body units), the triangulation part of a 3D value's interval for two views whose
lines of sight meet at 90° and that triangulate every limb joint of the take; a performance's own part is this
times :func:`part_scale`. Calibrated by ``bench/pose_3d.py`` on the six view pairs of both Pose2Sim takes to
cover 95% of the statistics of two truths (our 4-view triangulation of BlazePose Full, Pose2Sim's of BlazePose
Heavy; the larger fit per quantity), the least target whose coverage across takes (fitted on one, checked on the
other) was at least 90% both ways against both (94% and 95%). ``grip_width`` needs none: its other parts
already cover it."""
LIMB_JOINTS = tuple(INDEX[f"{side}_{joint}"] for side in ("left", "right")
                    for joint in ("shoulder", "elbow", "wrist", "hip", "knee", "ankle"))
MIN_SHARE = 0.1
"""Below this share of limb joints triangulated the scale stops growing (few values are measured then anyway)."""
MIN_SINE = 0.2
"""The sight angle's sine is floored here (views under 12° apart: the part stops growing, the depth is lost)."""


@dataclass(frozen=True)
class PartScale:
    """What widens a performance's triangulation part, and by how much."""

    sight_deg: float
    """The angle between the lines of sight to the body of the two best-placed views (nearest 90°), degrees."""
    limb_share: float
    """The share of limb joints (shoulders to ankles) triangulated over the take's frames."""

    @property
    def factor(self) -> float:
        sine = max(MIN_SINE, math.sin(math.radians(self.sight_deg))) if math.isfinite(self.sight_deg) else MIN_SINE
        return 1.0 / (sine * math.sqrt(max(MIN_SHARE, self.limb_share)))


def sight_angle(a: Camera, b: Camera, centre: np.ndarray) -> float:
    """Degrees between two cameras' lines of sight to ``centre`` (3,)."""
    u, v = centre - a.centre, centre - b.centre
    return math.degrees(math.acos(float(np.clip(u @ v / np.linalg.norm(u) / np.linalg.norm(v), -1.0, 1.0))))


def part_scale(cameras: Sequence[Camera], points: np.ndarray) -> PartScale:
    """The scale of a performance triangulated into ``points`` (T, J, 3) from ``cameras``: the sight angle is taken
    at the median hip centre over the take; NaN (the floor's scale) when no hip was triangulated."""
    with np.errstate(invalid="ignore"):
        hips = (points[:, INDEX["left_hip"]] + points[:, INDEX["right_hip"]]) / 2
    hips = hips[np.isfinite(hips).all(-1)]
    share = float(np.isfinite(points[:, LIMB_JOINTS]).all(-1).mean()) if len(points) else 0.0
    if not len(hips):
        return PartScale(sight_deg=math.nan, limb_share=share)
    centre = np.median(hips, axis=0)
    angles = [sight_angle(a, b, centre) for a, b in itertools.combinations(cameras, 2)]
    return PartScale(sight_deg=max(angles, key=lambda d: math.sin(math.radians(d))), limb_share=share)


def scaled_parts(base: Mapping[str, float], scale: PartScale) -> dict[str, float]:
    """Each quantity's part in ``base`` times the performance's scale."""
    return {q: round(float(v) * scale.factor, 3) for q, v in base.items()}


__all__ = ["LIMB_JOINTS", "MIN_SHARE", "MIN_SINE", "TRIANGULATION_ERRORS", "PartScale", "part_scale", "scaled_parts", "sight_angle"]
