"""The triangulation part of a 3D value's interval grows with how badly the views are placed and with how much of
the take they failed to triangulate (real Qualisys cameras of the Pose2Sim demo, tests/data/pose2sim)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from viddiff.pose.calibration import read_qca
from viddiff.pose.skeleton import INDEX, JOINTS
from viddiff.pose.triangulation_part import (
    LIMB_JOINTS, MIN_SINE, TRIANGULATION_ERRORS, PartScale, part_scale, scaled_parts, sight_angle,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "pose2sim"


@pytest.fixture(scope="module")
def cameras():
    return {c.name: c for c in read_qca(DATA / "Calib.qca.txt")}


@pytest.fixture(scope="module")
def body() -> np.ndarray:
    """(30, J, 3) a body standing where the demo's athlete stands, every joint triangulated."""
    rng = np.random.default_rng(0)
    return np.array([-1.1, 0.0, 0.9]) + rng.uniform(-0.4, 0.4, (30, len(JOINTS), 3))


def test_views_nearly_opposite_get_a_wider_part_than_views_at_right_angles(cameras, body) -> None:
    near_right = part_scale([cameras["cam01"], cameras["cam04"]], body)
    opposite = part_scale([cameras["cam02"], cameras["cam04"]], body)
    assert 95 < near_right.sight_deg < 125 and 135 < opposite.sight_deg < 160  # docs: 109° and 146° at the athlete
    assert near_right.limb_share == 1.0
    assert near_right.factor == pytest.approx(1 / math.sin(math.radians(near_right.sight_deg)))
    assert opposite.factor > 1.4 * near_right.factor


def test_the_best_placed_pair_of_three_views_sets_the_angle(cameras, body) -> None:
    three = part_scale([cameras["cam02"], cameras["cam04"], cameras["cam01"]], body)
    assert three.factor == pytest.approx(min(part_scale(pair, body).factor for pair in (
        [cameras["cam02"], cameras["cam04"]], [cameras["cam02"], cameras["cam01"]], [cameras["cam04"], cameras["cam01"]])))


def test_a_take_with_fewer_limb_joints_triangulated_gets_a_wider_part(cameras, body) -> None:
    pair = [cameras["cam01"], cameras["cam04"]]
    gappy = body.copy()
    gappy[::2][:, list(LIMB_JOINTS)] = np.nan  # half the frames lose their limbs (a second person in the way)
    full, half = part_scale(pair, body), part_scale(pair, gappy)
    assert half.limb_share == pytest.approx(0.5)
    assert half.factor == pytest.approx(full.factor * math.sqrt(2), rel=0.02)
    parts = scaled_parts(TRIANGULATION_ERRORS, half)
    assert parts["knee_angle"] == pytest.approx(TRIANGULATION_ERRORS["knee_angle"] * half.factor, abs=1e-3)


def test_without_hips_the_angle_is_unknown_and_the_part_is_the_widest(cameras, body) -> None:
    hipless = body.copy()
    hipless[:, [INDEX["left_hip"], INDEX["right_hip"]]] = np.nan
    scale = part_scale([cameras["cam01"], cameras["cam04"]], hipless)
    assert math.isnan(scale.sight_deg) and scale.limb_share == pytest.approx(10 / 12)
    assert scale.factor == pytest.approx(1 / MIN_SINE / math.sqrt(10 / 12))
    assert PartScale(sight_deg=5.0, limb_share=1.0).factor == pytest.approx(1 / MIN_SINE)  # nearly parallel: floored


def test_sight_angle_of_two_cameras_facing_each_other(cameras) -> None:
    a, b = cameras["cam01"], cameras["cam03"]
    assert sight_angle(a, b, (a.centre + b.centre) / 2) == pytest.approx(180.0, abs=1e-3)
    assert PartScale(sight_deg=180.0, limb_share=1.0).factor == pytest.approx(1 / MIN_SINE)
