"""Viterbi against brute-force enumeration of every monotone stage path."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viddiff.localizer.viterbi import stage_spans, viterbi_segment

PROBS = st.sampled_from([0.05, 0.25, 0.5, 0.75, 0.95])


def all_paths(n_stages: int, n_frames: int):
    """Every path starting in stage 0, ending in the last, advancing by one at K-1 distinct frames."""
    for entries in itertools.combinations(range(1, n_frames), n_stages - 1):
        path = np.zeros(n_frames, dtype=int)
        for entry in entries:
            path[entry:] += 1
        yield path


def cost_of(costs: np.ndarray, path: np.ndarray, stay_logp: float, advance_logp: float) -> float:
    total = 0.0
    for t, k in enumerate(path):
        total += costs[k, t]
        if t > 0:
            total -= advance_logp if k != path[t - 1] else stay_logp
    return total


def brute_force(
    costs: np.ndarray, stay_logp: float, advance_logp: float, ties: str = "earliest"
) -> tuple[np.ndarray, float]:
    """Optimum with the documented tie rule, stage by stage from the last one: ``earliest`` is the
    lexicographically largest path read from the last frame backwards (each stage starts as early as
    possible), ``latest`` the smallest (as late as possible)."""
    scored = [(cost_of(costs, p, stay_logp, advance_logp), p) for p in all_paths(*costs.shape)]
    best = min(c for c, _ in scored)
    optimal = [p for c, p in scored if c <= best + 1e-9]
    pick = max if ties == "earliest" else min
    return pick(optimal, key=lambda p: tuple(p[::-1])), best


@st.composite
def problems(draw, integer_costs: bool):
    n_frames = draw(st.integers(1, 8))
    n_stages = draw(st.integers(1, min(4, n_frames)))
    values = st.integers(0, 3).map(float) if integer_costs else st.floats(0.0, 20.0)
    costs = np.array(draw(st.lists(values, min_size=n_stages * n_frames, max_size=n_stages * n_frames)))
    return costs.reshape(n_stages, n_frames), math.log(draw(PROBS)), math.log(draw(PROBS))


@settings(max_examples=300, deadline=None)
@given(problems(integer_costs=False))
def test_matches_brute_force_on_continuous_costs(problem):
    costs, stay_logp, advance_logp = problem
    path, total = viterbi_segment(costs, stay_logp, advance_logp)
    expected_path, expected_total = brute_force(costs, stay_logp, advance_logp)
    assert total == pytest.approx(expected_total, rel=1e-12, abs=1e-12)
    assert cost_of(costs, path, stay_logp, advance_logp) == pytest.approx(expected_total, rel=1e-12, abs=1e-12)
    # With continuous costs, two paths can tie up to rounding (hypothesis finds such cases); the path
    # itself is only pinned down when the optimum wins by a margin. Exact ties are covered below.
    runner_up = min(
        (cost_of(costs, p, stay_logp, advance_logp) for p in all_paths(*costs.shape) if not np.array_equal(p, expected_path)),
        default=math.inf,
    )
    if runner_up - expected_total > 1e-6:
        np.testing.assert_array_equal(path, expected_path)


@settings(max_examples=300, deadline=None)
@given(problems(integer_costs=True), st.sampled_from(["earliest", "latest"]))
def test_tie_rule_matches_brute_force_when_ties_are_frequent(problem, ties):
    costs, stay_logp, advance_logp = problem
    path, total = viterbi_segment(costs, stay_logp, advance_logp, ties)
    expected_path, expected_total = brute_force(costs, stay_logp, advance_logp, ties)
    assert total == pytest.approx(expected_total, rel=1e-12, abs=1e-12)
    np.testing.assert_array_equal(path, expected_path)


# Paths the authors' released Viterbi returns (run on these inputs; their costs are -log of the normalised
# scores with zeros replaced by 1e-5): on ties it starts every stage as late as possible.
RELEASED_TIES = [
    (np.full((2, 6), -math.log(1e-5)), [0, 0, 0, 0, 0, 1]),  # every stage constant: scored 0 -> 1e-5
    (np.full((3, 7), -math.log(1e-5)), [0, 0, 0, 0, 0, 1, 2]),
    (np.full((3, 8), -math.log(0.5)), [0, 0, 0, 0, 0, 0, 1, 2]),
    # frames 2-4 fit both stages equally well: the second stage starts at frame 5
    (np.array([[0, 0, 1, 1, 1, 5, 5], [5, 5, 1, 1, 1, 0, 0]], dtype=float), [0, 0, 0, 0, 0, 1, 1]),
]


@pytest.mark.parametrize("costs, released", RELEASED_TIES)
def test_latest_ties_reproduce_the_release_and_earliest_is_the_default(costs, released):
    latest, total_latest = viterbi_segment(costs, math.log(0.5), math.log(0.5), "latest")
    earliest, total_earliest = viterbi_segment(costs, math.log(0.5), math.log(0.5))
    assert latest.tolist() == released
    assert total_latest == pytest.approx(total_earliest)  # equally good paths ...
    assert earliest.tolist() != released  # ... and the default picks the other end of the tie
    starts = lambda path: (np.flatnonzero(np.diff(path)) + 1).tolist()  # noqa: E731
    assert all(e <= l for e, l in zip(starts(earliest), starts(latest)))


def test_unknown_tie_rule_is_refused():
    with pytest.raises(ValueError, match="ties"):
        viterbi_segment(np.zeros((2, 3)), math.log(0.5), math.log(0.5), "middle")


@settings(max_examples=100, deadline=None)
@given(problems(integer_costs=False), PROBS, PROBS)
def test_transition_probabilities_never_change_the_path(problem, stay_p, advance_p):
    costs, stay_logp, advance_logp = problem
    path_a, _ = viterbi_segment(costs, stay_logp, advance_logp)
    path_b, _ = viterbi_segment(costs, math.log(stay_p), math.log(advance_p))
    np.testing.assert_array_equal(path_a, path_b)


def test_single_frame_is_stage_zero():
    path, total = viterbi_segment(np.array([[2.0], [5.0], [7.0]]), math.log(0.5), math.log(0.5))
    np.testing.assert_array_equal(path, [0])
    assert total == 2.0
    assert stage_spans(path, 3) == [(0, 1), (0, 1), (0, 1)]


def test_stages_equal_to_frames_is_identity():
    costs = np.random.default_rng(0).random((5, 5))
    path, total = viterbi_segment(costs, math.log(0.9), math.log(0.1))
    np.testing.assert_array_equal(path, np.arange(5))
    assert total == pytest.approx(np.trace(costs) - 4 * math.log(0.1))


def test_more_stages_than_frames_does_not_crash():
    costs = np.random.default_rng(1).random((5, 3))
    path, total = viterbi_segment(costs, math.log(0.5), math.log(0.5))
    np.testing.assert_array_equal(path, [0, 1, 2])
    assert total == pytest.approx(costs[0, 0] + costs[1, 1] + costs[2, 2] - 2 * math.log(0.5))
    assert stage_spans(path, 5) == [(0, 1), (1, 2), (2, 3), (2, 3), (2, 3)]


def test_flat_costs_follow_the_tie_rule():
    path, total = viterbi_segment(np.full((3, 7), 1.5), math.log(0.5), math.log(0.5))
    np.testing.assert_array_equal(path, [0, 1, 2, 2, 2, 2, 2])
    assert total == pytest.approx(7 * 1.5 - 6 * math.log(0.5))


def test_single_stage_covers_every_frame():
    costs = np.random.default_rng(2).random((1, 6))
    path, total = viterbi_segment(costs, math.log(0.5), math.log(0.5))
    np.testing.assert_array_equal(path, np.zeros(6))
    assert total == pytest.approx(costs.sum() - 5 * math.log(0.5))
    assert stage_spans(path, 1) == [(0, 6)]


def test_planted_segmentation_is_recovered_on_a_long_video():
    rng = np.random.default_rng(3)
    truth = np.repeat(np.arange(5), [300, 1200, 50, 2000, 450])
    costs = rng.random((5, truth.size)) + 3.0
    costs[truth, np.arange(truth.size)] -= 3.0
    path, _ = viterbi_segment(costs, math.log(0.5), math.log(0.5))
    np.testing.assert_array_equal(path, truth)


def test_stage_spans_of_a_regular_path():
    assert stage_spans(np.array([0, 0, 1, 1, 1, 2]), 3) == [(0, 2), (2, 5), (5, 6)]


@pytest.mark.parametrize(
    "path, n_stages",
    [([1, 1, 2], 3), ([0, 2, 2], 3), ([0, 1, 0], 2), ([0, 1, 2], 2), ([], 1)],
)
def test_stage_spans_rejects_non_monotone_paths(path, n_stages):
    with pytest.raises(ValueError):
        stage_spans(np.array(path, dtype=int), n_stages)


@pytest.mark.parametrize(
    "costs, stay, advance",
    [
        (np.zeros((0, 3)), -1.0, -1.0),
        (np.zeros(3), -1.0, -1.0),
        (np.array([[0.0, np.inf]]), -1.0, -1.0),
        (np.array([[0.0, np.nan]]), -1.0, -1.0),
        (np.zeros((2, 3)), 0.5, -1.0),
        (np.zeros((2, 3)), -1.0, -np.inf),
    ],
)
def test_rejects_invalid_inputs(costs, stay, advance):
    with pytest.raises(ValueError):
        viterbi_segment(costs, stay, advance)
