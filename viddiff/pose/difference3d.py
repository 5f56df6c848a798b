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
    "knee_angle": {"mean": 15, "min": 15.5, "max": 19.5, "range": 19.5},
    "hip_angle": {"mean": 12.9, "min": 16.6, "max": 19.6, "range": 21.7},
    "elbow_angle": {"mean": 12.3, "min": 41.3, "max": 27.6, "range": 55},
    "shoulder_angle": {"mean": 9.2, "min": 29.8, "max": 21.5, "range": 34},
    "ankle_angle": {"mean": 19.5, "min": 38.6, "max": 31, "range": 37.7},
    "trunk_lean": {"mean": 7, "min": 6.8, "max": 4.4, "range": 10.1},
    "stance_width": {"mean": 0.49, "min": 0.36, "max": 1.07, "range": 1.1},
    "grip_width": {"mean": 0, "min": 0.13, "max": 0, "range": 0.58},
    "hip_height": {"mean": 0.12, "min": 0.11, "max": 0.21, "range": 0.15},
    "wrist_height": {"mean": 0.64, "min": 0.81, "max": 0.28, "range": 0.79},
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
