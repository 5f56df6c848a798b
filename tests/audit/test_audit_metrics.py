"""Audit metrics on hand-built answers whose numbers are known exactly."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest

from viddiff.audit.metrics import AuditRecord, audit_stats, proportion, score_audit

FLIP = {"a": "b", "b": "a"}


def record(i: int, gt, original, swapped, same, *, split="easy", action="fitness_1", key=None) -> AuditRecord:
    return AuditRecord(
        sample_key=f"s{i}",
        split=split,
        action=action,
        action_name=action,
        key=key or str(i % 3),
        description=f"difference {key or i % 3}",
        gt=gt,
        original=original,
        swapped=swapped,
        same=same,
    )


GT = ["a", "b", "a", "a", "b", "b", "a", "b"]


def test_always_a_is_a_perfect_position_bias():
    stats = audit_stats([record(i, gt, "a", "a", "a") for i, gt in enumerate(GT)])
    assert stats.swap_flip_rate.value == 0.0
    assert stats.same_video_decisive_rate.value == 1.0
    assert stats.same_video_a_share.value == 1.0
    assert stats.a_share.value == 1.0
    assert stats.gt_a_share == 0.5
    assert stats.a_share_diff.value == 0.5
    assert stats.accuracy_original.value == 0.5  # the share of "a" in the ground truth
    assert stats.accuracy_swapped.value == 0.5
    assert stats.pair_accuracy.value == 0.0  # never right in both orders


def test_content_based_answers_are_consistent():
    stats = audit_stats([record(i, gt, gt, FLIP[gt], "c") for i, gt in enumerate(GT)])
    assert stats.swap_flip_rate.value == 1.0
    assert stats.same_video_decisive_rate.value == 0.0
    assert stats.a_share_diff.value == 0.0
    assert stats.accuracy_original.value == stats.accuracy_swapped.value == 1.0
    assert stats.accuracy_debiased.value == 1.0
    assert stats.pair_accuracy.value == 1.0


def test_invalid_answers_never_make_the_method_look_better():
    records = [record(0, "a", "a", None, None), record(1, "b", None, "a", "c"), record(2, "a", "c", "b", "b")]
    stats = audit_stats(records)
    # only record 0 was answered a/b in the original order, and its swapped answer is invalid: not a flip
    assert (stats.swap_flip_rate.count, stats.swap_flip_rate.n) == (0, 1)
    # identical videos: record 0 got no valid answer, which is no evidence of seeing no difference, so it is
    # left out rather than counted as a "c"; of the two answered, record 2 invented a difference
    assert (stats.same_video_decisive_rate.count, stats.same_video_decisive_rate.n) == (1, 2)
    assert stats.unanswered.model_dump() == {"original": 1, "swapped": 1, "same": 1}
    assert (stats.accuracy_original.count, stats.accuracy_original.n) == (1, 3)
    assert (stats.accuracy_swapped.count, stats.accuracy_swapped.n) == (2, 3)
    assert (stats.pair_accuracy.count, stats.pair_accuracy.n) == (0, 3)
    assert stats.accuracy_debiased.value == pytest.approx(0.5)


def test_gt_a_share_is_taken_over_the_statements_a_share_counts():
    # "a" whenever the truth is a, "c" whenever it is b: its a/b answers are all a, but not by position
    stats = audit_stats([record(i, gt, "a" if gt == "a" else "c", None, "c") for i, gt in enumerate(GT)])
    assert stats.a_share.value == 1.0 and stats.gt_a_share == 1.0 and stats.a_share_diff.value == 0.0


def test_unlabelled_statements_have_no_accuracy_but_have_consistency():
    stats = audit_stats([record(i, None, "a" if i % 2 else "b", "b" if i % 2 else "a", "c") for i in range(6)])
    assert stats.gt_a_share is None and stats.a_share_diff.value is None
    assert stats.accuracy_original.value is None and stats.pair_accuracy.n == 0
    assert stats.swap_flip_rate.value == 1.0 and stats.a_share.value == 0.5


def test_intervals_are_exact_binomial_and_contain_the_value():
    rate = proportion(7, 10)
    assert rate.ci_low == pytest.approx(0.3475, abs=1e-4) and rate.ci_high == pytest.approx(0.9333, abs=1e-4)
    for count, n in [(0, 5), (3, 7), (5, 5)]:
        ci = binomtest(count, n).proportion_ci(confidence_level=0.95, method="exact")
        assert (proportion(count, n).ci_low, proportion(count, n).ci_high) == pytest.approx((ci.low, ci.high))
    assert proportion(0, 0).value is None
    with pytest.raises(ValueError):
        proportion(6, 5)


def test_debiased_interval_is_never_a_point():
    # right in both orders every time: the interval must still say how few statements that was
    perfect = audit_stats([record(i, gt, gt, FLIP[gt], "c") for i, gt in enumerate(GT)]).accuracy_debiased
    assert perfect.value == 1.0 and perfect.ci_high == 1.0 and perfect.ci_low == pytest.approx(proportion(8, 8).ci_low)
    # scores 1, ½, ½, 0: value ½, interval between the binomial ones of 1 and 3 correct out of 4
    half = audit_stats([record(0, "a", "a", "b", "c"), record(1, "a", "a", "a", "c"), record(2, "b", "b", "b", "c"),
                        record(3, "b", "a", "b", "c")]).accuracy_debiased
    assert half.value == 0.5 and half.count == 2.0
    assert proportion(1, 4).ci_low < half.ci_low < half.value < half.ci_high < proportion(3, 4).ci_high


def test_groups_are_sorted_worst_first_per_split_action_and_difference():
    good = [record(i, gt, gt, FLIP[gt], "c", action="fitness_1", key="0") for i, gt in enumerate(GT)]
    biased = [record(i + 10, gt, "a", "a", "a", action="fitness_2", key="0") for i, gt in enumerate(GT)]
    hard = [record(i + 20, gt, gt, FLIP[gt], "c", split="hard", action="diving_1", key="1") for i, gt in enumerate(GT)]
    metrics = score_audit(good + biased + hard, "closed")
    assert list(metrics.splits) == ["easy", "hard"]
    assert metrics.splits["easy"].n_differences == 16 and metrics.splits["hard"].pair_accuracy.value == 1.0
    assert [row.action for row in metrics.by_action] == ["fitness_2", "fitness_1", "diving_1"]
    assert metrics.by_difference[0].action == "fitness_2" and metrics.by_difference[0].stats.pair_accuracy.value == 0.0
    assert metrics.overall.n_differences == 24
