"""Verdicts between two 3D performances, on the real Pose2Sim take filmed by cam01 and cam02: the first half of the
take against its second half (a known difference: the 4-view triangulation of the take, ``bench/pose_accuracy.py
--two-view``, says the right elbow's mean angle falls by 31° and the right hip's by 22°), and one half against
itself with the other camera as the main view (identical movement)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from viddiff.pose.agreement import agreement
from viddiff.pose.difference3d import TRIANGULATION_DIFFERENCE_ERRORS
from viddiff.pose.measure import VideoMeasures, decide, measure
from viddiff.pose.multiview import PerformancePose, triangulate_performance
from viddiff.pose.sync import SyncInfo, ViewOffset
from viddiff.schema import Evidence, MeasurementSpec

MARGINS = {"angle_deg": 5.0, "length": 0.1, "speed_ratio": 1.15, "duration_ratio": 1.1}
ALIGNED = SyncInfo(offsets=(ViewOffset(view=1, offset_s=0.0, uncertainty_s=0.0, method="given"),))


def part(track, start: int, end: int):
    """The frames [start, end) of ``track`` as their own clip (its clock restarts at the first kept frame)."""
    t = track.times_s[start:end]
    return replace(track, xy=track.xy[start:end], confidence=track.confidence[start:end], times_s=t - t[0],
                   frame_indices=track.frame_indices[start:end] - start)


def side(performance: PerformancePose) -> VideoMeasures:
    """What the product's evidence gives :func:`measure` for a 3D side measured over its whole clip."""
    step = float(np.median(np.diff(performance.times_s)))
    return VideoMeasures(
        windows=np.array([[0.0, float(performance.times_s[-1] + step)]]), frame_indices=performance.frame_indices,
        times_s=performance.times_s, kinematics=performance.kinematics(), frame_step_s=step, view=performance.view(),
        triangulation_errors=performance.triangulation_errors, calibration_errors=performance.calibration_errors,
    )


@pytest.fixture(scope="module")
def halves(two_view_tracks) -> tuple[VideoMeasures, VideoMeasures]:
    tracks, cameras = two_view_tracks
    return tuple(side(triangulate_performance([part(t, start, end) for t in tracks], cameras, ALIGNED))
                 for start, end in ((0, 50), (50, 100)))


@pytest.mark.parametrize("quantity, lost_before", [("elbow_angle", True), ("hip_angle", False)])
def test_a_clear_difference_between_two_halves_is_found_in_the_direction_of_the_truth(halves, quantity: str, lost_before: bool) -> None:
    spec = MeasurementSpec(quantity=quantity, side="right", statistic="mean", direction="greater")
    evidence = measure("d", spec, *halves, ["whole"], estimator="blazepose")
    assert evidence.status == "measured", evidence.reason
    assert evidence.view_difference == pytest.approx(TRIANGULATION_DIFFERENCE_ERRORS[quantity]["mean"], abs=1e-3)
    letter, why = decide(evidence, MARGINS)
    assert letter == "a", why  # the first half's angle is the greater one, as in the 4-view truth
    assert "the triangulations' difference" in why
    # the rule before (both intervals whole, each with its own triangulation part) called the elbows the same
    whole = math.hypot(evidence.interval_a.half_width, evidence.interval_b.half_width)
    assert (abs(evidence.value_b - evidence.value_a) <= whole) == lost_before


@pytest.fixture(scope="module")
def one_half_both_ways(two_view_tracks) -> list[Evidence]:
    """The first half against itself, B triangulated with cam02 as its main view instead of cam01."""
    tracks, cameras = two_view_tracks
    first = [part(t, 0, 50) for t in tracks]
    a = side(triangulate_performance(first, cameras, ALIGNED))
    b = side(triangulate_performance(first[::-1], cameras[::-1], ALIGNED))
    found = []
    for quantity, sides in (("knee_angle", ("left", "right")), ("hip_angle", ("left", "right")),
                            ("elbow_angle", ("left", "right")), ("stance_width", ("none",)), ("trunk_lean", ("none",))):
        for which in sides:
            for statistic in ("mean", "min", "max", "range"):
                spec = MeasurementSpec(quantity=quantity, side=which, statistic=statistic, direction="greater")
                found.append(measure("d", spec, a, b, ["whole"], estimator="blazepose"))
    return found


def test_one_half_against_itself_from_the_other_main_camera_always_compares(one_half_both_ways: list[Evidence]) -> None:
    assert all(e.status != "not_comparable" for e in one_half_both_ways)  # 3D compares whatever the main camera
    assert sum(e.status == "measured" for e in one_half_both_ways) >= 25


def test_one_half_against_itself_from_the_other_main_camera_is_never_called_different(one_half_both_ways: list[Evidence]) -> None:
    letters = {decide(e, MARGINS)[0] for e in one_half_both_ways if e.status == "measured"}
    assert letters == {"c"}


def test_the_measured_words_quote_the_noise_the_verdict_weighed(halves) -> None:
    spec = MeasurementSpec(quantity="knee_angle", side="both", statistic="mean", direction="greater")
    evidence = measure("d", spec, *halves, ["whole"], estimator="blazepose")
    agreed = agreement(None, evidence, MARGINS, has_vlm=False)
    reason_noise = agreed.measured_reason.split("noise ±", 1)[1].split("°", 1)[0] if "noise ±" in agreed.measured_reason \
        else agreed.measured_reason.split("(±", 1)[1].split("°", 1)[0]
    assert f"±{reason_noise}°" in agreed.measured_words
