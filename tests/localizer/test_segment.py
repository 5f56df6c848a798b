"""Ablation segmenters: coverage, order, the K > T fallback, and the oracle mapping."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viddiff.errors import DatasetError
from viddiff.localizer.segment import (
    released_window_length,
    segment_argmax,
    segment_best_window,
    segment_from_boundaries,
    segment_random,
    segment_uniform,
)

SIZES = st.tuples(st.integers(1, 60), st.integers(1, 8))


def assert_consecutive_cover(spans, n_frames, n_stages):
    assert len(spans) == n_stages
    reached = spans[: min(n_frames, n_stages)]
    assert reached[0][0] == 0 and reached[-1][1] == n_frames
    for (s0, e0), (s1, e1) in zip(reached, reached[1:]):
        assert s0 < e0 == s1 < e1
    assert all(span == (n_frames - 1, n_frames) for span in spans[n_frames:])


@settings(max_examples=100, deadline=None)
@given(SIZES)
def test_uniform_covers_all_frames_in_order_with_equal_lengths(sizes):
    n_frames, n_stages = sizes
    spans = segment_uniform(n_frames, n_stages)
    assert_consecutive_cover(spans, n_frames, n_stages)
    if n_stages <= n_frames:
        lengths = [e - s for s, e in spans]
        assert max(lengths) - min(lengths) <= 1


@settings(max_examples=100, deadline=None)
@given(SIZES, st.integers(0, 2**32 - 1))
def test_random_covers_all_frames_in_order(sizes, seed):
    n_frames, n_stages = sizes
    spans = segment_random(n_frames, n_stages, np.random.default_rng(seed))
    assert_consecutive_cover(spans, n_frames, n_stages)
    assert spans == segment_random(n_frames, n_stages, np.random.default_rng(seed))


def test_random_varies_with_the_generator():
    layouts = {tuple(segment_random(50, 4, np.random.default_rng(seed))) for seed in range(10)}
    assert len(layouts) > 1


def test_argmax_finds_each_stage_window_even_out_of_order():
    scores = np.zeros((2, 10))
    scores[0, 6:9] = 1.0
    scores[1, 1:4] = 1.0
    # windows of 10 // 2 = 5 frames; stage 0's best windows start at 4 or 5, the earliest wins
    assert segment_argmax(scores) == [(4, 9), (0, 5)]


def test_argmax_window_is_one_frame_when_stages_outnumber_frames():
    scores = np.array([[0.0, 1.0], [1.0, 0.0], [0.2, 0.1]])
    assert segment_argmax(scores) == [(1, 2), (0, 1), (0, 1)]


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 40), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_argmax_spans_lie_inside_the_video(n_frames, n_stages, seed):
    scores = np.random.default_rng(seed).random((n_stages, n_frames))
    for start, end in segment_argmax(scores):
        assert 0 <= start < end <= n_frames


def test_oracle_maps_source_frames_to_sampled_positions():
    frame_indices = np.arange(100, 160, 4)  # 15 sampled frames: 100, 104, ..., 156
    spans = segment_from_boundaries(frame_indices, [100, 121, 140], 157, 3)
    assert spans == [(0, 6), (6, 10), (10, 15)]  # 121 -> first sampled frame 124 at position 6


def test_oracle_gives_a_short_stage_its_next_sampled_frame():
    frame_indices = np.arange(0, 40, 10)  # 0, 10, 20, 30
    spans = segment_from_boundaries(frame_indices, [0, 11, 13, 35], 38, 4)
    assert spans == [(0, 2), (2, 3), (2, 4), (3, 4)]  # [11, 13) and [35, 38) hold no sampled frame


def test_oracle_stage_after_the_last_sampled_frame_gets_the_last_frame():
    spans = segment_from_boundaries(np.array([0, 10, 20]), [0, 15, 25], 30, 3)
    assert spans == [(0, 2), (2, 3), (2, 3)]


@pytest.mark.parametrize(
    "starts, end, n_stages",
    [([0, 10], 30, 3), ([0, 20, 10], 30, 3), ([0, 10, 20], 20, 3)],
)
def test_oracle_rejects_inconsistent_annotations(starts, end, n_stages):
    with pytest.raises(DatasetError, match="retrieval_frames"):
        segment_from_boundaries(np.arange(0, 40, 5), starts, end, n_stages)


@pytest.mark.parametrize("n_frames, n_stages", [(0, 3), (5, 0)])
def test_counts_must_be_positive(n_frames, n_stages):
    with pytest.raises(ValueError):
        segment_uniform(n_frames, n_stages)


# ---------------------------------------------------------------- the paper's no-Viterbi ablation


@settings(max_examples=200, deadline=None)
@given(SIZES, st.integers(0, 2**32 - 1))
def test_best_window_spans_are_inside_the_video_and_never_empty(sizes, seed):
    n_frames, n_stages = sizes
    scores = np.random.default_rng(seed).random((n_stages, n_frames))
    spans = segment_best_window(scores)
    length = int(1.3 * n_frames / n_stages)
    length += 1 - length % 2
    assert len(spans) == n_stages
    for start, end in spans:
        assert 0 <= start < end <= n_frames
        assert end - start == min(length, n_frames)  # odd windows of ~1.3 T/K frames, cut to the video


def test_best_window_is_centred_on_the_best_match_and_ignores_order():
    t = np.arange(60)
    bump = lambda centre: np.exp(-((t - centre) ** 2) / (2 * 6.0**2))  # noqa: E731
    scores = np.stack([bump(30), bump(45), bump(10)])  # stage 2 matches first: nothing reorders the stages
    # window int(1.3 * 60 / 3) = 26 -> 27 frames (odd), half 13; a centre nearer the end than 13 is moved in
    assert segment_best_window(scores) == [(17, 44), (32, 59), (0, 27)]
    ramps = np.stack([np.linspace(0, 1, 40), np.linspace(1, 0, 40)])
    assert segment_best_window(ramps) == [(13, 40), (0, 27)]  # best at the very ends: moved inside


def test_released_window_is_set_by_the_stage_count_not_the_video():
    # int(1.3 * 5 / K), made odd: the release takes the length of a 5-field video record
    assert [released_window_length(k) for k in range(1, 6)] == [7, 3, 3, 1, 1]
    t = np.arange(200)
    scores = np.stack([np.exp(-((t - c) ** 2) / 50.0) for c in (40, 90, 150, 170)])
    spans = segment_best_window(scores, length=released_window_length(4))
    assert spans == [(40, 41), (90, 91), (150, 151), (170, 171)]  # K = 4: one frame, the best match itself
    assert segment_best_window(scores[:2], length=released_window_length(2)) == [(39, 42), (89, 92)]
    with pytest.raises(ValueError, match="odd"):
        segment_best_window(scores, length=4)


def test_best_window_rejects_bad_input():
    with pytest.raises(ValueError, match="non-empty"):
        segment_best_window(np.zeros((0, 5)))
    with pytest.raises(ValueError, match="growth"):
        segment_best_window(np.zeros((1, 5)), growth=0)
