"""Stage scores: shape, normalisation, constant rows, planted signal, costs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from viddiff.localizer.scores import normalise_scores, stage_costs, stage_scores


def unit_rows(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_shape_and_range():
    rng = np.random.default_rng(0)
    frames = unit_rows(rng.normal(size=(12, 16)))
    texts = [unit_rows(rng.normal(size=(n, 16))) for n in (1, 3, 5)]
    scores = stage_scores(frames, texts)
    assert scores.shape == (3, 12)
    np.testing.assert_allclose(scores.min(axis=1), 0.0)
    np.testing.assert_allclose(scores.max(axis=1), 1.0)


def test_score_is_the_mean_over_strings_before_normalising():
    frames = np.eye(3)
    texts = [np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])]
    # mean similarities per frame: 0.5, 0.5, 0.0
    np.testing.assert_allclose(stage_scores(frames, texts), [[1.0, 1.0, 0.0]])


def test_constant_stage_is_one_half_not_nan():
    frames = np.tile(unit_rows(np.ones((1, 4))), (6, 1))
    texts = [unit_rows(np.arange(8.0).reshape(2, 4) + 1)]
    scores = stage_scores(frames, texts)
    np.testing.assert_array_equal(scores, np.full((1, 6), 0.5))


def test_single_frame_is_constant():
    np.testing.assert_array_equal(stage_scores(np.eye(2)[:1], [np.eye(2), np.eye(2)[1:]]), [[0.5], [0.5]])


def test_planted_signal_is_recovered():
    rng = np.random.default_rng(1)
    dim, n_frames = 64, 40
    prototypes = unit_rows(rng.normal(size=(4, dim)))
    truth = np.repeat(np.arange(4), 10)
    frames = unit_rows(prototypes[truth] + 0.05 * rng.normal(size=(n_frames, dim)))
    texts = [unit_rows(p + 0.05 * rng.normal(size=(3, dim))) for p in prototypes]
    scores = stage_scores(frames, texts)
    for k in range(4):
        inside = scores[k, truth == k].mean()
        outside = scores[k, truth != k].mean()
        assert inside > outside + 0.3
    assert np.mean(scores.argmax(axis=0) == truth) > 0.9


@settings(max_examples=100, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 20)), elements=st.floats(-1e3, 1e3)))
def test_normalised_rows_are_in_unit_range_and_never_reorder(raw):
    scores = normalise_scores(raw)
    assert np.all(np.isfinite(scores))
    assert np.all((scores >= 0.0) & (scores <= 1.0))
    for row, out in zip(raw, scores):
        if np.ptp(row) > 1e-9:
            assert out.min() == 0.0 and out.max() == 1.0
            order = np.argsort(row, kind="stable")
            assert np.all(np.diff(out[order]) >= 0)


def test_costs_are_negative_log_with_eps():
    costs = stage_costs(np.array([[0.0, 1.0, 0.5]]), eps=1e-6)
    np.testing.assert_allclose(costs, [[-math.log(1e-6), -math.log(1 + 1e-6), -math.log(0.5 + 1e-6)]])
    assert np.all(np.isfinite(costs))


def test_released_floor_replaces_only_zeros_and_scores_a_constant_stage_zero():
    scores = np.array([[0.0, 1.0, 0.5, 1e-5], [0.5, 0.5, 0.5, 0.5]])  # row 2: a constant stage (normalise -> 0.5)
    released = stage_costs(scores, eps=1e-5, floor="replace_zeros")
    floor = -math.log(1e-5)
    np.testing.assert_allclose(released, [[floor, 0.0, -math.log(0.5), floor], [floor] * 4])
    ours = stage_costs(scores, eps=1e-5)
    # where the release leaves a score s > 0 alone, the two differ by log(1 + eps / s), not by less than eps
    np.testing.assert_allclose(released[0, 1:] - ours[0, 1:], np.log1p(1e-5 / scores[0, 1:]))
    assert released[0, 3] - ours[0, 3] == pytest.approx(math.log(2))
    assert ours[1, 0] == pytest.approx(-math.log(0.5 + 1e-5))  # a constant stage costs 0.69 here, 11.5 there
    with pytest.raises(ValueError, match="floor"):
        stage_costs(scores, eps=1e-5, floor="clip")


@pytest.mark.parametrize(
    "frames, texts",
    [
        (np.zeros((0, 4)), [np.ones((1, 4))]),
        (np.ones((3, 4)), []),
        (np.ones((3, 4)), [np.ones((1, 5))]),
        (np.ones((3, 4)), [np.ones((0, 4))]),
        (np.full((3, 4), np.nan), [np.ones((1, 4))]),
    ],
)
def test_stage_scores_rejects_bad_shapes(frames, texts):
    with pytest.raises(ValueError):
        stage_scores(frames, texts)


@pytest.mark.parametrize(
    "scores, eps", [(np.array([[0.5]]), 0.0), (np.array([[-0.1]]), 1e-6), (np.array([[np.nan]]), 1e-6)]
)
def test_stage_costs_rejects_bad_input(scores, eps):
    with pytest.raises(ValueError):
        stage_costs(scores, eps)
