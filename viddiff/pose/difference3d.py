"""How far B − A between two 3D performances may lie from the body's B − A: the triangulation part of a
*difference*, which a verdict between two triangulated sides weighs instead of both values' own triangulation
parts (:func:`viddiff.pose.measure.decide`).

A 3D value's interval carries a triangulation part that covers the value's own error against the 4-view truth
(:data:`viddiff.pose.multiview.TRIANGULATION_ERRORS`, one per quantity). Adding both sides' parts to judge a
difference was measured on the Pose2Sim take (``bench/pose_accuracy.py --two-view``) to cover about 99% of the
differences' errors, and to lose most clear differences: a statistic's error depends on the statistic (a mean is
within a few degrees; a range or an extreme read over a series with gaps misses more), which one part per
quantity cannot tell. These parts are per quantity *and* statistic, calibrated on the same take's statements
(its halves and thirds against each other from one pair of cameras, and the same part of the take from two
different pairs) to cover 98.5% of |measured B − A − true B − A| beside both intervals without their
triangulation parts.
"""

from __future__ import annotations

import math
from typing import Mapping, Optional

TRIANGULATION_DIFFERENCE_ERRORS: dict[str, dict[str, float]] = {
    "knee_angle": {"mean": 14.6, "min": 19.9, "max": 20.2, "range": 21.6},
    "hip_angle": {"mean": 8.7, "min": 18.3, "max": 17.8, "range": 22},
    "elbow_angle": {"mean": 14.8, "min": 47.6, "max": 39.2, "range": 56.8},
    "shoulder_angle": {"mean": 9.8, "min": 13.2, "max": 14.8, "range": 24.4},
    "ankle_angle": {"mean": 21.1, "min": 15.2, "max": 31.4, "range": 33.3},
    "trunk_lean": {"mean": 9, "min": 6.8, "max": 3.9, "range": 10.4},
    "stance_width": {"mean": 0.76, "min": 1.07, "max": 0.95, "range": 0.8},
    "grip_width": {"mean": 0, "min": 0.85, "max": 0, "range": 0.93},
    "hip_height": {"mean": 0.11, "min": 0.1, "max": 0.21, "range": 0.15},
    "wrist_height": {"mean": 0.45, "min": 0.82, "max": 0.15, "range": 0.81},
}
"""Quantity → statistic → degrees or body units (``bench/pose_accuracy.py --two-view``, 98.5%)."""


def triangulation_difference(
    quantity: str, statistic: str, calibration_a: Optional[Mapping[str, float]] = None,
    calibration_b: Optional[Mapping[str, float]] = None,
) -> float:
    """The triangulation part of B − A for ``quantity``'s ``statistic``, with each side's calibration part (its
    cameras' reported error; :attr:`viddiff.pose.multiview.PerformancePose.calibration_errors`), which two setups
    do not share. A statistic without its own part (``start``, ``end``) gets the quantity's largest."""
    parts = TRIANGULATION_DIFFERENCE_ERRORS.get(quantity, {})
    part = parts.get(statistic, max(parts.values(), default=0.0))
    calibration = [float((c or {}).get(quantity, 0.0)) for c in (calibration_a, calibration_b)]
    return math.hypot(part, *calibration)


__all__ = ["TRIANGULATION_DIFFERENCE_ERRORS", "triangulation_difference"]
