"""Tests for viddiff.video.timing: constant-rate detection and sampling by presentation time."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from viddiff.video.timing import is_constant_rate, mean_rate, nearest_to_grid


def burst_then_gaps() -> np.ndarray:
    """0.7 s at 30 fps, then a frame every 0.5 s: what a phone writes in low light or under load."""
    return np.array([i / 30 for i in range(21)] + [0.7 + 0.5 * k for k in range(1, 8)])


@pytest.mark.parametrize(
    ("times", "constant"),
    [
        (np.arange(90) / 30, True),
        (np.round(np.arange(300) * 1001 / 30000, 3), True),  # 29.97 fps in whole milliseconds (Matroska)
        (np.arange(100) / 25 + np.random.default_rng(0).uniform(-0.004, 0.004, 100), True),  # 4 ms jitter at 25 fps
        (np.delete(np.arange(90) / 30, 45), False),  # one dropped frame
        (burst_then_gaps(), False),
        (np.array([0.0, 0.5]), True),
        (np.array([0.0, 0.0, 0.0]), False),
    ],
)
def test_is_constant_rate(times: np.ndarray, constant: bool) -> None:
    assert is_constant_rate(times) is constant


def test_nearest_to_grid_on_a_burst_with_gaps() -> None:
    times = burst_then_gaps()
    positions = nearest_to_grid(times, 1.0)
    # grid 0, 1, 2, 3, 4 s: the nearest frames are at 0, 1.2, 2.2, 3.2, 4.2 s
    assert times[positions].round(3).tolist() == [0.0, 1.2, 2.2, 3.2, 4.2]
    assert nearest_to_grid(times, None).tolist() == list(range(len(times)))
    # faster than the gaps: each gap frame once, positions strictly increasing
    dense = nearest_to_grid(times, 10.0)
    assert np.all(np.diff(dense) > 0) and dense[-1] == len(times) - 1


def test_nearest_to_grid_on_constant_rate_equals_the_stride() -> None:
    times = np.arange(90) / 30
    assert nearest_to_grid(times, 2.0).tolist() == list(range(0, 90, 15))


def test_ties_go_to_the_earlier_frame() -> None:
    assert nearest_to_grid(np.array([0.0, 0.4, 0.6, 1.0]), 2.0).tolist() == [0, 1, 3]


@given(
    gaps=st.lists(st.floats(0.001, 2.0), min_size=1, max_size=60),
    target=st.floats(0.05, 60.0),
)
def test_each_grid_point_gets_its_nearest_frame(gaps: list[float], target: float) -> None:
    times = np.concatenate([[0.0], np.cumsum(gaps)])
    positions = nearest_to_grid(times, target)
    assert np.all(np.diff(positions) > 0) and positions[0] == 0
    grid = np.arange(int(np.floor(times[-1] * target + 1e-9)) + 1) / target
    nearest = {int(np.argmin(np.abs(times - t))) for t in grid}  # argmin: the earliest of equals
    assert set(positions.tolist()) == nearest


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        nearest_to_grid(np.array([]), 1.0)
    with pytest.raises(ValueError):
        nearest_to_grid(np.array([0.0, 1.0]), 0.0)


def test_mean_rate() -> None:
    assert mean_rate(np.array([0.0, 0.5, 1.0])) == pytest.approx(2.0)
    assert mean_rate(np.array([0.0])) is None
    assert mean_rate(np.array([1.0, 1.0])) is None
