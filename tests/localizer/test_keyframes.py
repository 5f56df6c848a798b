"""Keyframe selection: inside the video, sorted, distinct, centred, never negative."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from viddiff.localizer.keyframes import burst_step, random_keyframes, select_keyframes


@st.composite
def layouts(draw):
    """A video of n_total sampled frames split into consecutive stage spans, and linked stages."""
    n_total = draw(st.integers(1, 80))
    n_stages = draw(st.integers(1, min(5, n_total)))
    cut_points = st.integers(1, max(1, n_total - 1))
    cuts = sorted(draw(st.lists(cut_points, min_size=n_stages - 1, max_size=n_stages - 1, unique=True)))
    bounds = [0, *cuts, n_total]
    spans = list(zip(bounds, bounds[1:]))
    linked = draw(st.lists(st.integers(0, n_stages - 1), min_size=1, max_size=3, unique=True))
    return spans, linked, n_total


FPS = st.sampled_from([1.0, 2.0, 4.0, 5.0, 6.0, 30.0])


def gt_1(spans, linked, n_total, fps, n_frames=3, frame_sep_s=0.35):
    return select_keyframes(spans, linked, "gt_1", n_frames=n_frames, fps=fps, frame_sep_s=frame_sep_s, n_total=n_total)


@settings(max_examples=300, deadline=None)
@given(layouts(), FPS, st.integers(1, 5), st.floats(0.05, 3.0))
def test_burst_is_inside_sorted_distinct(layout, fps, n_frames, frame_sep_s):
    spans, linked, n_total = layout
    frames = gt_1(spans, linked, n_total, fps, n_frames, frame_sep_s)
    assert all(0 <= f < n_total for f in frames)
    assert frames == sorted(set(frames))
    assert len(frames) == min(n_frames, n_total)


@settings(max_examples=300, deadline=None)
@given(layouts(), FPS)
def test_burst_is_centred_on_the_linked_span_when_it_fits(layout, fps):
    spans, linked, n_total = layout
    start = min(spans[k][0] for k in linked)
    end = max(spans[k][1] for k in linked)
    middle = (start + end - 1) / 2
    step = max(1, math.floor(0.35 * fps + 0.5))
    assume(middle - step >= 0 and middle + step <= n_total - 1)
    frames = gt_1(spans, linked, n_total, fps)
    assert abs(frames[1] - middle) <= 1
    assert frames[1] - frames[0] == frames[2] - frames[1] == step


@settings(max_examples=300, deadline=None)
@given(layouts())
def test_single_frame_is_the_middle_of_the_first_linked_stage(layout):
    spans, linked, n_total = layout
    [frame] = select_keyframes(spans, linked, "1", n_frames=3, fps=4.0, frame_sep_s=0.35, n_total=n_total)
    start, end = spans[linked[0]]
    assert start <= frame < end
    assert abs(frame - (start + end - 1) / 2) <= 0.5


def test_low_fps_gives_three_distinct_adjacent_frames():
    # span (10, 20): middle position 14 (lower middle); 0.35 s at 1 fps rounds to 0, kept at 1
    assert gt_1([(0, 10), (10, 20)], [1], 20, fps=1.0) == [13, 14, 15]


def test_as_released_low_fps_repeats_one_frame():
    # the release rounds 0.35 s at 1 fps to 0 frames: the middle frame three times
    spans = [(0, 10), (10, 20)]
    assert select_keyframes(
        spans, [1], "gt_1", n_frames=3, fps=1.0, frame_sep_s=0.35, n_total=20, step_rule="as_released"
    ) == [14, 14, 14]
    # also in a video no longer than the burst, where the distinct rule sends every frame
    assert select_keyframes([(0, 3)], [0], "gt_1", n_frames=3, fps=1.0, frame_sep_s=0.35, n_total=3,
                            step_rule="as_released") == [1, 1, 1]
    rng = np.random.default_rng(0)
    drawn = random_keyframes("gt_1", n_frames=3, fps=1.0, frame_sep_s=0.35, n_total=20, rng=rng, step_rule="as_released")
    assert len(set(drawn)) == 1 and len(drawn) == 3


@pytest.mark.parametrize("fps, distinct, released", [(1.0, 1, 0), (5.0, 2, 2), (6.0, 2, 2), (8.0, 3, 3), (30.0, 11, 10)])
def test_burst_step_rounding(fps, distinct, released):
    # the method's fps (8, 5, 6) agree; 1 fps and exact halves (0.35 * 30 = 10.5, half to even) do not
    assert burst_step(3, fps, 0.35, 1000) == distinct
    assert burst_step(3, fps, 0.35, 1000, "as_released") == released
    with pytest.raises(ValueError, match="step_rule"):
        burst_step(3, fps, 0.35, 1000, "nearest")


def test_spacing_follows_frame_sep_at_higher_fps():
    # 0.35 s at 30 fps is 10.5 -> 11 sampled frames
    assert gt_1([(0, 100)], [0], 100, fps=30.0) == [38, 49, 60]


def test_burst_is_shifted_not_clipped_at_the_start():
    assert gt_1([(0, 2), (2, 30)], [0], 30, fps=6.0) == [0, 2, 4]


def test_burst_is_shifted_not_clipped_at_the_end():
    assert gt_1([(0, 28), (28, 30)], [1], 30, fps=6.0) == [25, 27, 29]


def test_spacing_shrinks_when_the_video_is_shorter_than_the_burst():
    assert gt_1([(0, 5)], [0], 5, fps=30.0) == [0, 2, 4]


def test_tiny_video_gives_all_its_frames():
    assert gt_1([(0, 1), (1, 2)], [0, 1], 2, fps=4.0) == [0, 1]
    assert gt_1([(0, 1)], [0], 1, fps=4.0) == [0]


def test_union_of_linked_stages_sets_the_centre():
    spans = [(0, 10), (10, 20), (20, 30), (30, 40)]
    assert gt_1(spans, [1, 2], 40, fps=2.0) == [18, 19, 20]


def test_shared_last_frame_when_stages_outnumber_frames():
    spans = [(0, 1), (1, 2), (1, 2), (1, 2)]
    assert select_keyframes(spans, [3], "1", n_frames=3, fps=2.0, frame_sep_s=0.35, n_total=2) == [1]


@pytest.mark.parametrize(
    "spans, linked, num_frames, n_total",
    [
        ([(0, 5)], [], "1", 5),
        ([(0, 5)], [1], "1", 5),
        ([(0, 5)], [-1], "1", 5),
        ([(0, 6)], [0], "1", 5),
        ([(-1, 3)], [0], "1", 5),
        ([(3, 3)], [0], "1", 5),
        ([(0, 5)], [0], "3", 5),
    ],
)
def test_rejects_invalid_input(spans, linked, num_frames, n_total):
    with pytest.raises(ValueError):
        select_keyframes(spans, linked, num_frames, n_frames=3, fps=4.0, frame_sep_s=0.35, n_total=n_total)


# ---------------------------------------------------------------- the paper's random ablation


@settings(max_examples=300, deadline=None)
@given(
    n_total=st.integers(1, 300),
    n_frames=st.integers(1, 6),
    fps=st.sampled_from([1.0, 2.0, 4.0, 6.0, 8.0, 30.0]),
    num_frames=st.sampled_from(["1", "gt_1"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_keyframes_have_the_count_and_spacing_of_the_localised_ones(n_total, n_frames, fps, num_frames, seed):
    rng = np.random.default_rng(seed)
    kwargs = dict(n_frames=n_frames, fps=fps, frame_sep_s=0.35, n_total=n_total)
    drawn = random_keyframes(num_frames, rng=rng, **kwargs)
    localised = select_keyframes([(0, n_total)], [0], num_frames, **kwargs)
    assert drawn == sorted(set(drawn)) and all(0 <= p < n_total for p in drawn)
    assert len(drawn) == len(localised)
    assert np.diff(drawn).tolist() == np.diff(localised).tolist()  # same spacing, another place


def test_random_keyframes_cover_every_admissible_start_uniformly():
    rng = np.random.default_rng(0)
    starts = [random_keyframes("gt_1", n_frames=3, fps=10.0, frame_sep_s=0.3, n_total=20, rng=rng)[0] for _ in range(4000)]
    # step 3, width 6: the first frame is uniform over 0..13 (the release draws the middle over 3..16)
    counts = np.bincount(starts, minlength=14)
    assert len(counts) == 14 and counts.min() > 200
    singles = [random_keyframes("1", n_frames=3, fps=10.0, frame_sep_s=0.3, n_total=20, rng=rng)[0] for _ in range(2000)]
    assert set(singles) == set(range(20))


def test_random_keyframes_reject_bad_input():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="n_total"):
        random_keyframes("1", n_frames=3, fps=4.0, frame_sep_s=0.35, n_total=0, rng=rng)
    with pytest.raises(ValueError, match="num_frames"):
        random_keyframes("2", n_frames=3, fps=4.0, frame_sep_s=0.35, n_total=10, rng=rng)
