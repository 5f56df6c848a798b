"""Coarse-to-fine Viterbi: exact where it must be, and the frames it embeds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viddiff.localizer.coarse_to_fine import coarse_grid, coarse_to_fine_segment
from viddiff.localizer.scores import normalise_scores, stage_costs
from viddiff.localizer.viterbi import viterbi_segment

EPS = 1e-6
LOG_HALF = math.log(0.5)


def full_rate_path(raw: np.ndarray) -> np.ndarray:
    path, _ = viterbi_segment(stage_costs(normalise_scores(raw), EPS), LOG_HALF, LOG_HALF)
    return path


class Recorder:
    """``similarity_at`` over a fixed raw matrix that remembers every position it was asked for."""

    def __init__(self, raw: np.ndarray):
        self.raw = raw
        self.calls: list[np.ndarray] = []

    def __call__(self, positions: np.ndarray) -> np.ndarray:
        self.calls.append(np.array(positions))
        return self.raw[:, positions]

    @property
    def asked(self) -> np.ndarray:
        return np.concatenate(self.calls)


def decode(raw: np.ndarray, stride: int, radius: int, recorder: Recorder | None = None):
    recorder = recorder or Recorder(raw)
    result = coarse_to_fine_segment(
        raw.shape[1], raw.shape[0], recorder, coarse_stride=stride, refine_radius=radius,
        stay_logp=LOG_HALF, advance_logp=LOG_HALF, eps=EPS,
    )
    return result, recorder


def one_hot(stage_lengths: list[int]) -> np.ndarray:
    truth = np.repeat(np.arange(len(stage_lengths)), stage_lengths)
    return (np.arange(len(stage_lengths))[:, None] == truth[None, :]).astype(float)


@st.composite
def raw_scores(draw, min_frames: int = 1):
    n_frames = draw(st.integers(min_frames, 60))
    n_stages = draw(st.integers(1, 6))
    seed = draw(st.integers(0, 2**32 - 1))
    return np.random.default_rng(seed).normal(size=(n_stages, n_frames))


@settings(max_examples=150, deadline=None)
@given(raw_scores())
def test_stride_one_is_full_rate_viterbi(raw):
    result, recorder = decode(raw, stride=1, radius=0)
    np.testing.assert_array_equal(result.path, full_rate_path(raw))
    np.testing.assert_array_equal(result.embedded, np.arange(raw.shape[1]))
    assert result.rounds == 1 and len(recorder.calls) == 1


@settings(max_examples=150, deadline=None)
@given(raw_scores(min_frames=2), st.integers(2, 9))
def test_refinement_covering_every_frame_is_full_rate_viterbi(raw, stride):
    n_stages, n_frames = raw.shape
    result, _ = decode(raw, stride=stride, radius=n_frames)
    np.testing.assert_array_equal(result.path, full_rate_path(raw))
    if n_stages > 1:  # a single stage has no boundary to refine around
        np.testing.assert_array_equal(result.embedded, np.arange(n_frames))


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 10), st.integers(0, 3), st.data())
def test_noise_free_stages_give_the_full_rate_path(stride, radius, data):
    """Piecewise-constant scores (each stage at least a coarse step long): no frame is left to chance."""
    n_stages = data.draw(st.integers(2, 5))
    lengths = data.draw(st.lists(st.integers(stride, 4 * stride), min_size=n_stages, max_size=n_stages))
    raw = one_hot(lengths)
    result, _ = decode(raw, stride, radius)
    np.testing.assert_array_equal(result.path, full_rate_path(raw))
    np.testing.assert_array_equal(result.path, np.repeat(np.arange(n_stages), lengths))


@settings(max_examples=150, deadline=None)
@given(raw_scores(), st.integers(1, 9), st.integers(0, 3))
def test_every_frame_is_embedded_at_most_once_and_boundaries_end_refined(raw, stride, radius):
    n_stages, n_frames = raw.shape
    result, recorder = decode(raw, stride, radius)
    asked = recorder.asked
    assert asked.size == np.unique(asked).size == result.embedded.size
    np.testing.assert_array_equal(np.sort(asked), result.embedded)
    assert len(recorder.calls) == result.rounds
    assert set(coarse_grid(n_frames, stride)) <= set(result.embedded.tolist())
    embedded = set(result.embedded.tolist())
    for b in np.flatnonzero(np.diff(result.path)) + 1:
        window = range(max(0, b - 1 - radius), min(n_frames, b + radius + 1))
        assert embedded.issuperset(window)


def test_forwards_of_a_worked_example():
    """33 frames, stage 1 starts at frame 20; stride 8 embeds 0, 8, 16, 24, 32.

    Interpolating between 16 (stage 0) and 24 (stage 1), the costs cross at 20 (a tie, which goes to the
    earlier start), so the first decode already puts the boundary at 20 and the refinement embeds the
    frames around it: 18-21 with radius 1 (9 forwards), 19-20 with radius 0 (7 forwards).
    """
    raw = one_hot([20, 13])
    result, recorder = decode(raw, stride=8, radius=1)
    assert [c.tolist() for c in recorder.calls] == [[0, 8, 16, 24, 32], [18, 19, 20, 21]]
    assert result.embedded.size == 9 and result.rounds == 2
    np.testing.assert_array_equal(result.path, np.repeat([0, 1], [20, 13]))

    result, recorder = decode(raw, stride=8, radius=0)
    assert [c.tolist() for c in recorder.calls] == [[0, 8, 16, 24, 32], [19, 20]]
    assert result.embedded.size == 7


def test_long_video_saves_most_forwards():
    """Stages start at 60, 148, 188 and 300, each halfway between two coarse frames, where the
    interpolated costs cross: one refinement round of 4 frames per boundary settles all of them."""
    raw = one_hot([60, 88, 40, 112, 100])
    result, _ = decode(raw, stride=8, radius=1)
    np.testing.assert_array_equal(result.path, full_rate_path(raw))
    # 51 coarse frames (every 8th of 400, plus the last) and 4 frames around each of the 4 boundaries
    assert result.embedded.size == 51 + 4 * 4 and result.rounds == 2
    # A boundary off the crossing point takes more rounds, still far fewer than 400 forwards.
    shifted, _ = decode(one_hot([60, 90, 40, 110, 100]), stride=8, radius=1)
    assert 67 < shifted.embedded.size < 400 / 5


def test_more_stages_than_frames_embeds_everything():
    raw = np.random.default_rng(0).normal(size=(5, 3))
    result, _ = decode(raw, stride=4, radius=1)
    np.testing.assert_array_equal(result.path, [0, 1, 2])
    np.testing.assert_array_equal(result.embedded, [0, 1, 2])


def test_coarse_grid_ends_on_the_last_frame():
    assert coarse_grid(10, 4).tolist() == [0, 4, 8, 9]
    assert coarse_grid(9, 4).tolist() == [0, 4, 8]
    assert coarse_grid(1, 4).tolist() == [0]


@pytest.mark.parametrize(
    "kwargs, message",
    [({"refine_radius": -1}, "refine_radius"), ({"coarse_stride": 0}, "stride")],
)
def test_bad_parameters(kwargs, message):
    params = {"coarse_stride": 4, "refine_radius": 1, "stay_logp": LOG_HALF, "advance_logp": LOG_HALF, "eps": EPS}
    params.update(kwargs)
    with pytest.raises(ValueError, match=message):
        coarse_to_fine_segment(20, 3, lambda p: np.zeros((3, p.size)), **params)


def test_wrong_similarity_shape_is_reported():
    with pytest.raises(ValueError, match="similarity_at returned shape"):
        coarse_to_fine_segment(
            20, 3, lambda p: np.zeros((2, p.size)), coarse_stride=4, refine_radius=1,
            stay_logp=LOG_HALF, advance_logp=LOG_HALF, eps=EPS,
        )
