"""Measurements over real time, with intervals, frame counts and seconds, and the verdicts numbers alone support."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from viddiff.pose.align import stage_windows
from viddiff.pose.kinematics import compute_kinematics
from viddiff.pose.measure import Settings, VideoMeasures, decide, describe_evidence, measure
from viddiff.pose.skeleton import INDEX
from viddiff.pose.statistics import frame_noise, running_median
from viddiff.schema import CameraView, Evidence, MeasurementSpec, VideoKeyframes
from viddiff.testing.pose_figures import Figure, track_of

STAGES = ["standing", "descent", "bottom"]
MARGINS = {"angle_deg": 5.0, "length": 0.1, "speed_ratio": 1.15, "duration_ratio": 1.1}
FPS = 30.0
SQUAT_A = [175, 175, 174, 174, 160, 140, 120, 100, 90, 88, 90, 95]
SQUAT_B = [175, 175, 174, 174, 165, 150, 135, 120, 110, 108, 109, 112]
"""Knee angles every 0.1 s; a track samples them at 30 fps (1.2 s, 36 frames), 12 frames per stage."""


def dense(knees: list[float], fps: float = FPS) -> np.ndarray:
    return np.interp(np.arange(round(len(knees) * fps / 10)) / fps, np.arange(len(knees)) / 10, knees)


def video(knees, fps: float = FPS, spans=None, confidence=None, keyframes=None, view=None, segment_fps: float = 10.0):
    """A squat-like track (knee and hip angles per frame) at ``fps``; stages as spans of the 10-fps frames the
    segmentation was made on (the method's own frames), by default four each."""
    n = len(knees)
    times = np.arange(n) / fps
    xy = track_of([Figure(knee=k, hip=k + 10) for k in knees])
    confidence = np.ones(xy.shape[:2]) if confidence is None else confidence
    kin = compute_kinematics(xy, confidence, times, np.arange(n) * 2, width=1000, height=1000, smoothing_frames=1)
    segment_times = np.arange(round(n / fps * segment_fps)) / segment_fps
    spans = spans or ((0, 4), (4, 8), (8, len(segment_times)))
    return VideoMeasures(
        windows=stage_windows(list(spans), segment_times, end_s=n / fps),
        frame_indices=np.arange(len(segment_times)) * 6, times_s=segment_times, kinematics=kin, keyframes=keyframes,
        frame_step_s=1 / 60, view=view,
    )


SETTINGS = Settings(smoothing_frames=1)


def spec(**kwargs) -> MeasurementSpec:
    base = dict(quantity="knee_angle", side="both", statistic="min", stage=2, direction="smaller")
    return MeasurementSpec(**{**base, **kwargs})


def test_minimum_knee_angle_in_a_stage_with_its_interval_frames_and_seconds() -> None:
    evidence = measure("0", spec(), video(dense(SQUAT_A)), video(dense(SQUAT_B)), STAGES, estimator="fig", settings=SETTINGS)
    assert evidence.status == "measured" and evidence.unit == "°" and evidence.stage == "bottom"
    assert evidence.value_a == pytest.approx(88.0, abs=1.0) and evidence.value_b == pytest.approx(108.0, abs=1.0)
    assert evidence.label == "minimum left and right knee angle during 'bottom'"
    interval = evidence.interval_a
    assert interval.frames == 12 and interval.seconds == pytest.approx(0.4) and len(evidence.frames_a) == 12
    assert interval.boundaries == 0  # the minimum lies well inside the stage
    start = measure("0", spec(statistic="start", stage=1), video(dense(SQUAT_A)), video(dense(SQUAT_B)), STAGES, estimator="f", settings=SETTINGS)
    assert start.interval_a.boundaries > 1  # the stage may have begun up to one segmentation step earlier
    assert interval.half_width == pytest.approx(np.sqrt(interval.frame_noise**2 + interval.sampling**2 + interval.boundaries**2), abs=1e-3)
    assert 0.8 < interval.at_s < 1.0 and 2.0 < interval.at_stage_time < 3.0
    letter, why = decide(evidence, MARGINS)
    assert letter == "a" and "beyond noise" in why  # A's knees bend further: "the squat is deeper" is more true of A
    line = describe_evidence(evidence)
    assert line.startswith("minimum left and right knee angle during 'bottom': video A 88") and "12 frames, 0.4 s" in line


def test_the_extreme_lies_on_the_curve_and_one_glitch_frame_is_not_an_extreme() -> None:
    knees = dense(SQUAT_A)
    glitch = knees.copy()
    glitch[30] = 20.0  # one frame where the estimator lost the leg
    evidence = measure("0", spec(), video(glitch), video(knees), STAGES, estimator="f", settings=SETTINGS)
    assert evidence.value_a == pytest.approx(evidence.value_b, abs=1.0)  # the glitch is not the minimum
    curve, at = evidence.curve, evidence.interval_a.at_stage_time
    on_curve = [v for t, v in zip(curve.stage_time_a, curve.a) if t == pytest.approx(at, abs=1e-4)]
    assert on_curve == [pytest.approx(evidence.value_a, abs=1e-4)]  # the quoted value is a point of the drawn curve
    assert min(v for v in curve.a if v is not None) == pytest.approx(evidence.value_a, abs=1e-4)


def test_whole_action_statistics_are_over_real_time_whatever_the_stages() -> None:
    knees = dense(SQUAT_A)
    whole = spec(stage=None, statistic="mean")
    values = {
        spans: measure("0", whole, video(knees, spans=spans), video(knees), STAGES, estimator="f", settings=SETTINGS).value_a
        for spans in (((0, 4), (4, 8), (8, 12)), ((0, 2), (2, 10), (10, 12)), ((0, 9), (9, 10), (10, 12)))
    }
    assert len(set(values.values())) == 1  # stage boundaries do not move a whole-action mean
    times = np.arange(len(knees)) / FPS
    weights = np.diff(np.concatenate([[0.0], (times[1:] + times[:-1]) / 2, [len(knees) / FPS]]))
    assert next(iter(values.values())) == pytest.approx(np.sum(weights * knees) / weights.sum(), abs=0.05)


def test_a_slower_copy_gives_the_same_shape_statistics() -> None:
    knees = dense(SQUAT_A)
    slow_times = np.arange(round(len(knees) * 1.5)) / FPS
    slowed = np.interp(slow_times / 1.5, np.arange(len(knees)) / FPS, knees)
    a = video(knees)
    b = video(slowed, spans=((0, 6), (6, 12), (12, 18)))
    for statistic in ("min", "max", "mean", "range", "start", "end"):
        for stage in (None, 0, 1, 2):
            e = measure("0", spec(statistic=statistic, stage=stage), a, b, STAGES, estimator="f", settings=SETTINGS)
            assert e.status == "measured", (statistic, stage, e.reason)
            assert decide(e, MARGINS)[0] == "c", (statistic, stage, e.value_a, e.value_b, decide(e, MARGINS)[1])


def test_a_statistic_on_too_few_frames_is_uncertain_and_says_how_many() -> None:
    sparse = video(dense(SQUAT_A, fps=4), fps=4)  # the method's 4-fps frames: 1-2 frames per stage
    evidence = measure("0", spec(), sparse, video(dense(SQUAT_B)), STAGES, estimator="f", settings=SETTINGS)
    assert evidence.status == "uncertain" and evidence.value_a is None
    assert "video A: too little to go on in 'bottom'" in evidence.reason and "raise pose.fps" in evidence.reason
    assert decide(evidence, MARGINS)[0] is None


def test_within_noise_is_c_and_says_so_below_the_margin_is_c_and_beyond_both_is_a_or_b() -> None:
    knees = dense(SQUAT_A)
    rng = np.random.default_rng(0)
    noisy = video(knees + rng.normal(0, 4.0, len(knees)))
    shifted = video(knees + 6 + rng.normal(0, 4.0, len(knees)))
    mean = spec(statistic="mean", stage=None)
    noisy_e = measure("0", mean, noisy, shifted, STAGES, estimator="f", settings=Settings(smoothing_frames=1, noise_floors={"knee_angle": 5.0}))
    letter, why = decide(noisy_e, MARGINS)
    assert letter == "c" and "within measurement noise (±" in why
    close = measure("0", mean, video(knees), video(knees + 3), STAGES, estimator="f", settings=SETTINGS)
    letter, why = decide(close, MARGINS)
    assert letter == "c" and "below the smallest meaningful difference (5°)" in why
    far = measure("0", mean, video(knees), video(knees + 8), STAGES, estimator="f", settings=SETTINGS)
    assert decide(far, MARGINS)[0] == "a"  # direction "smaller": the statement holds for A's smaller angle
    assert decide(far.model_copy(update={"measurement": mean.model_copy(update={"direction": "greater"})}), MARGINS)[0] == "b"


def test_the_noise_floor_widens_every_interval() -> None:
    a, b = video(dense(SQUAT_A)), video(dense(SQUAT_A) + 8)
    plain = measure("0", spec(stage=None), a, b, STAGES, estimator="f", settings=SETTINGS)
    floored = measure("0", spec(stage=None), a, b, STAGES, estimator="f", settings=Settings(smoothing_frames=1, noise_floors={"knee_angle": 6.0}))
    assert floored.interval_a.noise_floor == 6.0 and floored.interval_a.half_width >= 6.0 > plain.interval_a.half_width
    assert decide(plain, MARGINS)[0] is not None and decide(plain, MARGINS)[0] != "c"
    assert decide(floored, MARGINS)[0] == "c"  # 8° against ±8.5° combined: within noise


def test_frame_noise_is_estimated_from_the_series() -> None:
    t = np.arange(300) / 30
    motion = 120 + 40 * np.sin(2 * np.pi * 0.5 * t)
    rng = np.random.default_rng(1)
    assert frame_noise(motion) < 0.1
    assert frame_noise(motion + rng.normal(0, 2.0, len(t))) == pytest.approx(2.0, rel=0.2)
    smoothed = np.convolve(motion + rng.normal(0, 2.0, len(t)), np.ones(3) / 3, mode="same")[1:-1]
    assert frame_noise(smoothed, smoothing_frames=3) == pytest.approx(2.0 / np.sqrt(3), rel=0.25)
    spike = motion.copy()
    spike[100] += 50
    assert abs(running_median(spike, 3)[100] - motion[100]) < 3  # a neighbour's value, not the spike


def test_occlusion_in_one_video_means_no_number() -> None:
    knees = dense(SQUAT_B)
    confidence = np.ones((len(knees), 17))
    for side in ("left", "right"):
        confidence[26:36, INDEX[f"{side}_knee"]] = 0.1  # knees hidden for most of the bottom
    evidence = measure("0", spec(), video(dense(SQUAT_A)), video(knees, confidence=confidence), STAGES, estimator="f", settings=SETTINGS)
    assert evidence.status == "uncertain" and evidence.value_a is None and evidence.value_b is None
    assert "video B" in evidence.reason and "hidden or unclear" in evidence.reason and "10 of 12 frames" in evidence.reason
    letter, why = decide(evidence, MARGINS)
    assert letter is None and why.startswith("not measured")
    assert evidence.curve.b.count(None) > 0  # the curve shows the gap as a gap


def test_a_stage_too_short_for_the_pose_frame_rate_is_uncertain() -> None:
    a = video(dense(SQUAT_A), spans=((0, 4), (4, 12), (12, 12)))  # an empty last stage
    evidence = measure("0", spec(stage=2), a, video(dense(SQUAT_B)), STAGES, estimator="f", settings=SETTINGS)
    assert evidence.status == "uncertain" and "no pose frame falls in 'bottom'" in evidence.reason


def test_different_views_are_not_comparable_but_keep_their_numbers() -> None:
    side, front = CameraView(label="side", yaw_deg=90.0, frames=36), CameraView(label="front", yaw_deg=0.0, frames=36)

    def views_differ(a: CameraView, b: CameraView, spec):
        return None if a.label == b.label else f"A filmed from the {a.label}, B from the {b.label}"

    settings = Settings(smoothing_frames=1, views_differ=views_differ)
    a, b = video(dense(SQUAT_A), view=side), video(dense(SQUAT_B), view=front)
    evidence = measure("0", spec(), a, b, STAGES, estimator="f", settings=settings)
    assert evidence.status == "not_comparable" and evidence.reason == "A filmed from the side, B from the front"
    assert evidence.value_a is not None and evidence.view_a == side and evidence.view_b == front
    letter, why = decide(evidence, MARGINS)
    assert letter is None and "not compared: A filmed from the side" in why
    same = measure("0", spec(), a, video(dense(SQUAT_B), view=side), STAGES, estimator="f", settings=settings)
    assert same.status == "measured"
    tempo = measure("0", MeasurementSpec(quantity="duration", direction="greater"), a, b, STAGES, estimator=None, settings=settings)
    assert tempo.status == "measured"  # durations need no projection: always comparable


def test_durations_come_with_the_segmentation_step_as_their_interval() -> None:
    a = VideoMeasures(windows=np.array([[0.0, 1.0], [1.0, 3.0], [3.0, 3.5]]), frame_indices=np.arange(7) * 5,
                      times_s=np.arange(7) * 0.5, frame_step_s=0.02)
    b = VideoMeasures(windows=np.array([[0.0, 1.5], [1.5, 4.5], [4.5, 5.25]]), frame_indices=np.arange(11) * 5,
                      times_s=np.arange(11) * 0.5, frame_step_s=0.02)
    slower = MeasurementSpec(quantity="duration", stage=1, direction="greater", statistic="max", side="left")
    evidence = measure("t", slower, a, b, STAGES, estimator=None)
    assert (evidence.value_a, evidence.value_b) == (2.0, 3.0) and evidence.unit == "s"
    assert evidence.measurement.side == "none" and evidence.measurement.statistic == "mean"  # normalised
    assert evidence.interval_a.boundaries == pytest.approx(np.sqrt(2) * 0.25, abs=1e-3)  # two inner boundaries
    assert evidence.frames_a == [10, 15, 20, 25] and evidence.estimator is None and evidence.label == "duration of 'descent'"
    letter, why = decide(evidence, MARGINS)
    assert letter == "b" and "ratio 1.5" in why
    whole = measure("t", slower.model_copy(update={"stage": None}), a, b, STAGES, estimator=None)
    assert (whole.value_a, whole.value_b) == (3.5, 5.25)
    assert whole.interval_a.half_width == pytest.approx(np.sqrt(2) * 0.01, abs=1e-4)  # only the clip's own ends
    assert decide(measure("t", slower, a, a, STAGES, estimator=None), MARGINS)[0] == "c"


def test_keyframe_points_carry_the_value_and_the_pose() -> None:
    keyframes = VideoKeyframes(frame_indices=[54, 200], times_s=[0.9, 2.0])
    a = video(dense(SQUAT_A), keyframes=keyframes)
    evidence = measure("0", spec(), a, video(dense(SQUAT_B)), STAGES, estimator="f", settings=SETTINGS)
    point, outside = evidence.keyframes_a
    assert point.value == pytest.approx(88.0, abs=1.0) and point.pose_frame_index == 54 and point.stage_time == pytest.approx(2.25)
    assert len(point.keypoints) == 17 and all(k is not None and 0 < k[0] < 1 and 0 < k[1] < 1 for k in point.keypoints)
    assert outside.value is None and outside.pose_frame_index is None  # 2.0 s is past the last pose frame
    assert evidence.keyframes_b == []


def test_dtw_alignment_re_times_only_the_overlay_inside_stages() -> None:
    # B reaches its bottom later within the stage; per-stage DTW lines the curves up, statistics stay as they were.
    a = video(dense([175, 175, 175, 175, 170, 150, 120, 100, 90, 90, 90, 90]))
    b = video(dense([175, 175, 175, 175, 175, 174, 160, 110, 90, 90, 90, 90]))
    linear = measure("0", spec(stage=1, statistic="mean"), a, b, STAGES, estimator="f", settings=SETTINGS)
    warped = measure("0", spec(stage=1, statistic="mean"), a, b, STAGES, estimator="f",
                     settings=Settings(smoothing_frames=1, alignment="dtw"))

    def gap(e: Evidence) -> float:
        grid = np.linspace(1.0, 1.95, 20)
        ta, tb = np.array(e.curve.stage_time_a), np.array(e.curve.stage_time_b)
        return float(np.max(np.abs(np.interp(grid, ta, np.array(e.curve.a, float)) - np.interp(grid, tb, np.array(e.curve.b, float)))))

    assert gap(warped) < gap(linear) / 2
    assert (warped.value_a, warped.value_b) == (linear.value_a, linear.value_b)
    assert all(k <= t < k + 1 for k in range(3) for t, u in zip(warped.curve.stage_time_b, linear.curve.stage_time_b) if k <= u < k + 1)


def test_evidence_never_holds_a_number_it_did_not_measure() -> None:
    common = dict(key="0", measurement=spec(), label="x", unit="°")
    with pytest.raises(ValidationError):
        Evidence(**common, status="uncertain", value_a=1.0, value_b=2.0)
    with pytest.raises(ValidationError):
        Evidence(**common, status="measured", value_a=1.0)
    with pytest.raises(ValidationError):
        Evidence(**common, status="not_comparable", value_b=1.0)


def test_a_value_is_the_bodys_only_from_a_view_facing_its_plane_else_the_pictures_with_a_view_part() -> None:
    side, front = CameraView(label="side", yaw_deg=85.0, frames=36), CameraView(label="front", yaw_deg=5.0, frames=36)
    settings = Settings(smoothing_frames=1, plane_tolerance_deg=20.0, view_errors={"knee_angle": 30.0, "hip_angle": 25.0},
                        view_difference_errors={"knee_angle": 10.0, "hip_angle": 8.0})
    from_side = measure("0", spec(stage=None), video(dense(SQUAT_A), view=side), video(dense(SQUAT_B), view=side),
                        STAGES, estimator="f", settings=settings)
    assert not from_side.interval_a.in_picture and from_side.interval_a.view == 0 and from_side.view_difference == 0
    assert "as seen in the picture" not in describe_evidence(from_side)
    hips = measure("0", spec(quantity="hip_angle", stage=None), video(dense(SQUAT_A), view=side),
                   video(dense(SQUAT_B), view=side), STAGES, estimator="f", settings=settings)
    assert hips.interval_a.in_picture and hips.interval_a.view == 25.0  # hips leave any one plane: never the body's
    from_front = measure("0", spec(stage=None), video(dense(SQUAT_A), view=front), video(dense(SQUAT_B), view=front),
                         STAGES, estimator="f", settings=settings)
    interval = from_front.interval_a
    assert interval.in_picture and interval.view == 30.0 and interval.half_width >= 30.0
    assert from_front.view_difference == 10.0
    assert "as seen in the picture, filmed from the front, not the body's own" in describe_evidence(from_front)
    # 20° apart from one view: the view's error is shared, the difference known to about ±10°, so B's knees bend less
    letter, why = decide(from_front, MARGINS)
    assert letter == "a" and "the pictures' difference from comparable views" in why
    wider = from_front.model_copy(update={"view_difference": 25.0})
    assert decide(wider, MARGINS)[0] == "c"
