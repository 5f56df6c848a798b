"""Stick-figure geometry helpers: exact two-link joints, easing, drawing."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from viddiff.data.synth_figure import BACKGROUND, Disc, Limb, ease, polar, render, two_link

coords = st.floats(-50, 50)


@given(coords, coords, coords, coords, st.floats(5, 30), st.floats(5, 30), st.sampled_from([(1.0, 0.0), (-1.0, 0.0), (0.0, 1.0)]))
def test_two_link_keeps_segment_lengths(x0: float, y0: float, x1: float, y1: float, upper: float, lower: float, toward: tuple[float, float]) -> None:
    root, target = (x0, y0), (x1, y1)
    joint = two_link(root, target, upper, lower, toward)
    assert math.dist(root, joint) == pytest.approx(upper, abs=1e-6)
    if abs(upper - lower) < math.dist(root, target) < upper + lower:
        assert math.dist(joint, target) == pytest.approx(lower, abs=1e-6)


def test_two_link_bends_towards_the_requested_side() -> None:
    root, target = (0.0, 0.0), (0.0, 20.0)  # straight down
    assert two_link(root, target, 15, 15, toward=(1.0, 0.0))[0] > 0
    assert two_link(root, target, 15, 15, toward=(-1.0, 0.0))[0] < 0


def test_two_link_unreachable_target_gives_straight_chain() -> None:
    joint = two_link((0.0, 0.0), (100.0, 0.0), 10, 10, toward=(0.0, 1.0))
    assert joint == pytest.approx((10.0, 0.0), abs=1e-4)


def test_polar_and_ease() -> None:
    assert polar((0.0, 0.0), 10, 0) == pytest.approx((0.0, -10.0))  # up is -y
    assert polar((0.0, 0.0), 10, 90) == pytest.approx((10.0, 0.0))
    assert (ease(-1), ease(0), ease(0.5), ease(1), ease(2)) == pytest.approx((0, 0, 0.5, 1, 1))


def test_render_draws_shapes_on_background() -> None:
    blank = render([], 40, 30, floor_y=25)
    assert blank.shape == (30, 40, 3) and blank.dtype == np.uint8
    assert tuple(blank[5, 5]) == BACKGROUND and tuple(blank[25, 5]) != BACKGROUND
    drawn = render([Disc((10, 10), 4, (255, 0, 0)), Limb((20, 5), (35, 5), (0, 0, 255), 3)], 40, 30)
    assert tuple(drawn[10, 10]) == (255, 0, 0)
    assert tuple(drawn[5, 28]) == (0, 0, 255)
    assert tuple(drawn[20, 20]) == BACKGROUND
