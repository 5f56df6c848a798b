"""Kinematics pinned exactly on stick-figure tracks whose angles, widths, heights and speeds are known."""

from __future__ import annotations

import numpy as np
import pytest

from viddiff.pose.kinematics import (
    LOW_CONFIDENCE,
    NO_PERSON,
    NOT_ESTIMATED,
    OK,
    OUT_OF_FRAME,
    SIDE_VIEW,
    compute_kinematics,
    fix_side_swaps,
    joint_angle,
    smooth,
)
from viddiff.pose.skeleton import INDEX, JOINTS, SWAP
from viddiff.testing.pose_figures import Figure, pose_of, track_of

W = H = 1000


def kinematics(xy: np.ndarray, confidence=None, times=None, **kwargs):
    n = len(xy)
    confidence = np.ones(xy.shape[:2]) if confidence is None else confidence
    times = np.arange(n) / 10 if times is None else times
    kwargs.setdefault("smoothing_frames", 1)
    return compute_kinematics(xy, confidence, times, np.arange(n) * 3, width=W, height=H, **kwargs)


def test_joint_angles_and_lean_are_the_figures_own() -> None:
    figures = [
        Figure(knee=90 + 5 * i, hip=100 + 4 * i, elbow=70 + 6 * i, shoulder=15 + 7 * i, ankle=85 + 2 * i, lean=3 * i)
        for i in range(12)
    ]
    k = kinematics(track_of(figures))
    for name, expected in (
        ("knee", [f.knee for f in figures]), ("hip", [f.hip for f in figures]), ("elbow", [f.elbow for f in figures]),
        ("shoulder", [f.shoulder for f in figures]), ("ankle", [f.ankle for f in figures]),
    ):
        for side in ("left", "right"):
            np.testing.assert_allclose(k.values[f"{side}_{name}_angle"], expected, atol=1e-9, err_msg=f"{side} {name}")
            assert (k.reasons[f"{side}_{name}_angle"] == OK).all()
    np.testing.assert_allclose(k.values["trunk_lean"], [f.lean for f in figures], atol=1e-9)
    np.testing.assert_allclose(k.values["trunk_lean"][4], 12.0, atol=1e-9)  # a 12° lean reads 12°, not 168°


def test_widths_and_heights_in_body_units() -> None:
    figure = Figure(hip_width=40, shoulder_width=40, torso=100, leg_spread=10, elbow=180, shoulder=90)
    xy = track_of([figure] * 3)
    k = kinematics(xy)
    at = {name: xy[0, INDEX[name]] for name in JOINTS}
    stance = np.linalg.norm(at["left_ankle"] - at["right_ankle"]) / 40
    grip = np.linalg.norm(at["left_wrist"] - at["right_wrist"]) / 40
    np.testing.assert_allclose(k.values["stance_width"], stance, rtol=1e-12)
    np.testing.assert_allclose(k.values["grip_width"], grip, rtol=1e-12)
    # Arms straight out sideways (shoulder angle 90° to a vertical trunk line, elbows straight): wrists level
    # with the shoulders.
    np.testing.assert_allclose(k.values["left_wrist_height"], 0.0, atol=1e-9)
    np.testing.assert_allclose(k.values["right_wrist_height"], 0.0, atol=1e-9)
    hip_above_ankles = (xy[0, [INDEX["left_ankle"], INDEX["right_ankle"]], 1].mean() - figure.hip_y) / 100
    np.testing.assert_allclose(k.values["hip_height"], hip_above_ankles, rtol=1e-12)
    assert stance > 1.5 and grip > 3  # the spread legs and outstretched arms are wide


def test_speed_is_torso_lengths_per_second_with_true_times() -> None:
    # A posture gliding 30 px per frame, on uneven frame times (a variable-frame-rate clip).
    times = np.array([0.0, 0.1, 0.25, 0.3, 0.5, 0.6])
    xy = track_of([Figure(hip_x=100 + 30 * i, torso=120) for i in range(6)])
    k = kinematics(xy, times=times)
    steps = np.diff(times)
    expected = np.empty(6)
    expected[0], expected[-1] = 30 / steps[0], 30 / steps[-1]
    expected[1:-1] = 60 / (times[2:] - times[:-2])
    for name in ("head_speed", "left_wrist_speed", "right_ankle_speed", "left_hip_speed"):
        np.testing.assert_allclose(k.values[name], expected / 120, rtol=1e-12, err_msg=name)


def test_gaps_carry_their_reasons_and_never_values() -> None:
    xy = track_of([Figure(hip_x=300 + i) for i in range(6)])
    confidence = np.ones(xy.shape[:2])
    confidence[1, INDEX["left_knee"]] = 0.2  # occluded knee
    xy[2, INDEX["left_ankle"]] = (W + 50, 500)  # ankle out of the picture
    confidence[3] = 0.0  # nobody found
    k = kinematics(xy, confidence, min_confidence=0.5, estimated=np.array([n not in ("left_toe", "right_toe") for n in JOINTS]))
    knee = k.values["left_knee_angle"]
    assert np.isnan(knee[[1, 2, 3]]).all() and np.isfinite(knee[[0, 4, 5]]).all()
    assert list(k.reasons["left_knee_angle"]) == [OK, LOW_CONFIDENCE, OUT_OF_FRAME, NO_PERSON, OK, OK]
    assert np.isfinite(k.values["right_knee_angle"][[0, 1, 2, 4, 5]]).all()  # the other leg is unaffected
    assert np.isnan(k.values["left_ankle_angle"]).all()
    assert (k.reasons["left_ankle_angle"] == NOT_ESTIMATED).all()  # no toes from this estimator, ever


def test_side_view_makes_widths_gaps_not_numbers() -> None:
    frontal = pose_of(Figure(hip_width=40, shoulder_width=60))
    side = pose_of(Figure(hip_width=5, shoulder_width=6, leg_spread=20))  # hips seen edge-on
    k = kinematics(np.stack([frontal, side, frontal]))
    assert np.isfinite(k.values["stance_width"][[0, 2]]).all()
    assert np.isnan(k.values["stance_width"][1]) and k.reasons["stance_width"][1] == SIDE_VIEW
    assert np.isnan(k.values["grip_width"][1]) and k.reasons["grip_width"][1] == SIDE_VIEW
    assert np.isfinite(k.values["left_knee_angle"]).all()  # angles do not need a frontal view


def walking(n: int) -> np.ndarray:
    """Legs and arms swinging in opposition, the person facing the camera and drifting right."""
    phase = np.sin(np.linspace(0, 3 * np.pi, n))
    return track_of([Figure(knee=150 + 20 * p, hip=160 + 12 * p, elbow=150 - 20 * p, shoulder=25 + 15 * p,
                            leg_spread=8 + 6 * p, hip_x=300 + 4 * i) for i, p in enumerate(phase)])


def test_side_swaps_are_relabelled_from_continuity() -> None:
    truth = walking(40)
    labelled = truth.copy()
    legs = [INDEX[f"{s}_{j}"] for j in ("hip", "knee", "ankle", "heel", "toe") for s in ("left", "right")]
    arms = [INDEX[f"{s}_{j}"] for j in ("shoulder", "elbow", "wrist") for s in ("left", "right")]
    legs_swapped, arms_swapped = [3, 4, 17, 30], [9, 25]  # about one frame in ten, as BlazePose does
    for t in legs_swapped:
        labelled[t, legs] = truth[t][list(SWAP)][legs]
    for t in arms_swapped:
        labelled[t, arms] = truth[t][list(SWAP)][arms]
    fixed, swapped = fix_side_swaps(labelled)
    np.testing.assert_array_equal(fixed, truth)
    assert list(np.flatnonzero(swapped[:, 1])) == legs_swapped and list(np.flatnonzero(swapped[:, 0])) == arms_swapped
    raw = kinematics(labelled, fix_sides=False).values["left_hip_angle"]
    assert not np.allclose(raw, kinematics(truth).values["left_hip_angle"])
    np.testing.assert_allclose(kinematics(labelled).values["left_hip_angle"], kinematics(truth).values["left_hip_angle"])


def test_side_fixing_keeps_a_track_without_swaps_and_a_mirrored_one_as_labelled() -> None:
    truth = walking(30)
    fixed, swapped = fix_side_swaps(truth)
    np.testing.assert_array_equal(fixed, truth)
    assert not swapped.any()
    mirrored = truth[:, list(SWAP)]  # every frame relabelled: a mirrored video's anatomy; the majority stands
    fixed, swapped = fix_side_swaps(mirrored)
    np.testing.assert_array_equal(fixed, mirrored)
    assert not swapped.any()


def test_smoothing_averages_neighbours_and_keeps_gaps() -> None:
    values = np.array([0.0, 3.0, 6.0, np.nan, 12.0, 30.0])
    np.testing.assert_allclose(smooth(values, 3), [1.5, 3.0, 4.5, np.nan, 21.0, 21.0])
    np.testing.assert_array_equal(smooth(values, 1), values)
    line = np.arange(10.0)[:, None] * [2.0, -1.0]
    np.testing.assert_allclose(smooth(line, 3)[1:-1], line[1:-1])  # a straight motion is left where it is


@pytest.mark.parametrize("degrees", [0.0, 1.0, 45.0, 90.0, 135.0, 179.0, 180.0])
def test_joint_angle(degrees: float) -> None:
    b = np.array([[10.0, 20.0]])
    a = b + [[50.0, 0.0]]
    c = b + 30 * np.array([[np.cos(np.radians(degrees)), np.sin(np.radians(degrees))]])
    np.testing.assert_allclose(joint_angle(a, b, c), [degrees], atol=1e-6)
    assert np.isnan(joint_angle(b, b, c)).all()  # a zero-length segment has no angle
