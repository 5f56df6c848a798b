"""Measurements on stage-aligned kinematics, their honest uncertainty, and the verdicts numbers alone support."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from viddiff.pose.align import stage_windows
from viddiff.pose.kinematics import compute_kinematics
from viddiff.pose.measure import Settings, VideoMeasures, decide, describe_evidence, measure
from viddiff.pose.skeleton import INDEX
from viddiff.schema import Evidence, MeasurementSpec, VideoKeyframes
from viddiff.testing.pose_figures import Figure, track_of

STAGES = ["standing", "descent", "bottom"]
MARGINS = {"angle_deg": 5.0, "length": 0.1, "speed_ratio": 1.15, "duration_ratio": 1.1}


def video(knees: list[float], fps: float = 10.0, spans=((0, 4), (4, 8), (8, 12)), confidence=None, keyframes=None):
    """A squat-like track: knee (and hip) angles per frame; stages by position."""
    n = len(knees)
    times = np.arange(n) / fps
    xy = track_of([Figure(knee=k, hip=k + 10) for k in knees])
    confidence = np.ones(xy.shape[:2]) if confidence is None else confidence
    kin = compute_kinematics(xy, confidence, times, np.arange(n) * 2, width=1000, height=1000, smoothing_frames=1)
    return VideoMeasures(
        windows=stage_windows(list(spans), times, end_s=n / fps), frame_indices=np.arange(n) * 2, times_s=times,
        kinematics=kin, keyframes=keyframes,
    )


def spec(**kwargs) -> MeasurementSpec:
    base = dict(quantity="knee_angle", side="both", statistic="min", stage=2, direction="smaller")
    return MeasurementSpec(**{**base, **kwargs})


SQUAT_A = [175, 175, 174, 174, 160, 140, 120, 100, 90, 88, 90, 95]
SQUAT_B = [175, 175, 174, 174, 165, 150, 135, 120, 110, 108, 109, 112]


def test_minimum_knee_angle_in_a_stage() -> None:
    evidence = measure("0", spec(), video(SQUAT_A), video(SQUAT_B), STAGES, estimator="figure")
    assert evidence.status == "measured" and evidence.unit == "°" and evidence.stage == "bottom"
    assert evidence.value_a == pytest.approx(88.0) and evidence.value_b == pytest.approx(108.0)
    assert evidence.label == "minimum left and right knee angle during 'bottom'"
    assert evidence.frames_a == [16, 18, 20, 22] and evidence.frames_b == [16, 18, 20, 22]
    assert decide(evidence, MARGINS)[0] == "a"  # A's knees bend further: "the squat is deeper" is more true of A
    letter, why = decide(evidence.model_copy(update={"measurement": spec(direction="greater")}), MARGINS)
    assert letter == "b" and "B − A = +20°" in why
    assert describe_evidence(evidence) == "minimum left and right knee angle during 'bottom': video A 88°, video B 108°"


def test_statistics_over_the_whole_action_and_one_side() -> None:
    a, b = video(SQUAT_A), video(SQUAT_B)
    for statistic, expected_a in (("max", 175.0), ("range", 87.0), ("start", 175.0), ("end", 95.0)):
        e = measure("0", spec(statistic=statistic, stage=None, side="left"), a, b, STAGES, estimator="figure")
        assert e.value_a == pytest.approx(expected_a), statistic
    # The mean is over stage time: the stage runs until the next one starts (0.4 s), where the knee reads 160°.
    mean = measure("0", spec(statistic="mean", stage=0), a, b, STAGES, estimator="figure").value_a
    expected = np.mean(np.interp(np.linspace(0.0, 0.4, 20), np.arange(12) / 10, SQUAT_A))
    assert mean == pytest.approx(expected, abs=1e-3)


def test_within_the_margin_is_c_and_the_same_video_is_c() -> None:
    near = [k + 3 for k in SQUAT_A]
    assert decide(measure("0", spec(), video(SQUAT_A), video(near), STAGES, estimator="f"), MARGINS)[0] == "c"
    same = video(SQUAT_A)
    letter, why = decide(measure("0", spec(), same, same, STAGES, estimator="f"), MARGINS)
    assert letter == "c" and "within the margin" in why


def test_occlusion_in_one_video_means_no_number() -> None:
    confidence = np.ones((12, 17))
    for side in ("left", "right"):
        confidence[8:11, INDEX[f"{side}_knee"]] = 0.1  # knees hidden for most of the bottom
    evidence = measure("0", spec(), video(SQUAT_A), video(SQUAT_B, confidence=confidence), STAGES, estimator="f")
    assert evidence.status == "uncertain" and evidence.value_a is None and evidence.value_b is None
    assert "video B" in evidence.reason and "hidden or unclear" in evidence.reason and "3 of 4 frames" in evidence.reason
    letter, why = decide(evidence, MARGINS)
    assert letter is None and why.startswith("not measured")
    assert evidence.curve is not None and evidence.curve.b.count(None) > 0  # the curve shows the gap as a gap


def test_a_stage_too_short_for_the_pose_frame_rate_is_uncertain() -> None:
    spans = ((0, 4), (4, 12), (12, 12))  # an empty last stage
    a = video(SQUAT_A, spans=spans)
    evidence = measure("0", spec(stage=2), a, video(SQUAT_B), STAGES, estimator="f")
    assert evidence.status == "uncertain" and "no pose frame falls in 'bottom'" in evidence.reason


def test_durations_need_no_pose_and_give_tempo() -> None:
    a = VideoMeasures(windows=np.array([[0.0, 1.0], [1.0, 3.0], [3.0, 3.5]]), frame_indices=np.arange(7) * 5,
                      times_s=np.arange(7) * 0.5)
    b = VideoMeasures(windows=np.array([[0.0, 1.5], [1.5, 4.5], [4.5, 5.25]]), frame_indices=np.arange(11) * 5,
                      times_s=np.arange(11) * 0.5)
    slower = MeasurementSpec(quantity="duration", stage=1, direction="greater", statistic="max", side="left")
    evidence = measure("t", slower, a, b, STAGES, estimator=None)
    assert (evidence.value_a, evidence.value_b) == (2.0, 3.0) and evidence.unit == "s"
    assert evidence.measurement.side == "none" and evidence.measurement.statistic == "mean"  # normalised
    assert evidence.frames_a == [10, 15, 20, 25] and evidence.estimator is None and evidence.label == "duration of 'descent'"
    letter, why = decide(evidence, MARGINS)
    assert letter == "b" and "ratio 1.5" in why
    whole = measure("t", slower.model_copy(update={"stage": None}), a, b, STAGES, estimator=None)
    assert (whole.value_a, whole.value_b) == (3.5, 5.25)
    assert decide(measure("t", slower, a, a, STAGES, estimator=None), MARGINS)[0] == "c"


def test_keyframe_points_carry_the_value_and_the_pose() -> None:
    keyframes = VideoKeyframes(frame_indices=[18, 40], times_s=[0.9, 2.0])
    a = video(SQUAT_A, keyframes=keyframes)
    evidence = measure("0", spec(), a, video(SQUAT_B), STAGES, estimator="f")
    point, outside = evidence.keyframes_a
    assert point.value == pytest.approx(88.0) and point.pose_frame_index == 18 and point.stage_time == pytest.approx(2.25)
    assert len(point.keypoints) == 17 and all(k is not None and 0 < k[0] < 1 and 0 < k[1] < 1 for k in point.keypoints)
    assert outside.value is None and outside.pose_frame_index is None  # 2.0 s is past the last pose frame
    assert evidence.keyframes_b == []


def test_dtw_alignment_warps_only_inside_stages() -> None:
    # B reaches its bottom later within the stage; per-stage DTW lines the curves up.
    a = video([175, 175, 175, 175, 170, 150, 120, 100, 90, 90, 90, 90])
    b = video([175, 175, 175, 175, 175, 174, 160, 110, 90, 90, 90, 90])
    linear = measure("0", spec(stage=1, statistic="mean"), a, b, STAGES, estimator="f")
    warped = measure("0", spec(stage=1, statistic="mean"), a, b, STAGES, estimator="f", settings=Settings(alignment="dtw"))
    gap = lambda e: np.nanmax(np.abs(np.array(e.curve.a[20:40], float) - np.array(e.curve.b[20:40], float)))
    assert gap(warped) < gap(linear)
    assert warped.value_a == linear.value_a  # A is the reference; only B moves


def test_evidence_never_holds_a_number_it_did_not_measure() -> None:
    common = dict(key="0", measurement=spec(), label="x", unit="°")
    with pytest.raises(ValidationError):
        Evidence(**common, status="uncertain", value_a=1.0, value_b=2.0)
    with pytest.raises(ValidationError):
        Evidence(**common, status="measured", value_a=1.0)
