from typing import Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from viddiff.errors import PredictionFormatError
from viddiff.eval.closed import score_closed


@pytest.fixture
def dataset(make_sample):
    samples = [
        make_sample("s0", {"0": "a", "1": "b", "2": "c", "3": None}, action="fitness_0"),
        make_sample("s1", {"0": "b", "1": "b"}, action="fitness_0"),
        make_sample("s2", {"0": "a", "1": "a", "2": "b"}, action="fitness_1", action_name="lunge"),
        make_sample("s3", {"0": "a", "1": "b"}, split="hard", action="diving_0", action_name="dive"),
    ]
    predictions = [
        {"0": "a", "1": "a", "2": "b", "3": "a"},  # 1/2 counted correct; c/null ground truth ignored
        {"0": "b"},  # key 1 missing -> wrong
        {"0": "c", "1": None, "2": "b"},  # c and null -> wrong
        {"0": "a", "1": "b"},
    ]
    return samples, predictions


def test_split_accuracy_and_avg(dataset) -> None:
    m = score_closed(*dataset)
    assert list(m.splits) == ["easy", "hard"]
    assert (m.splits["easy"].correct, m.splits["easy"].n) == (3, 7)
    assert m.splits["hard"].accuracy == 1.0
    assert m.avg == pytest.approx((3 / 7 + 1.0) / 2)
    assert (m.overall.correct, m.overall.n) == (5, 9)
    assert m.splits["easy"].p_value == pytest.approx(binomtest(3, 7, 0.5).pvalue)
    assert m.n_samples == 4 and m.n_differences == 11


def test_per_action_and_per_difference(dataset) -> None:
    m = score_closed(*dataset)
    actions = {row.action: (row.stats.correct, row.stats.n) for row in m.by_action}
    assert actions == {"fitness_0": (2, 4), "fitness_1": (1, 3), "diving_0": (2, 2)}
    assert [row.action for row in m.by_action] == ["fitness_0", "fitness_1", "diving_0"]
    diffs = {(row.action, row.key): (row.stats.correct, row.stats.n) for row in m.by_difference}
    assert diffs[("fitness_0", "0")] == (2, 2)
    assert diffs[("fitness_0", "1")] == (0, 2)
    assert ("fitness_0", "2") not in diffs  # ground truth c only: nothing counted
    first = m.by_difference[0]
    assert (first.name, first.description) == ("diff0", "difference 0 of fitness_0")


def test_balance(dataset) -> None:
    b = score_closed(*dataset).balance
    assert (b.gt_a, b.gt_b) == (4, 5)
    assert (b.pred_a, b.pred_b, b.pred_c, b.pred_null, b.missing) == (3, 3, 1, 1, 1)
    assert b.pred_a_fraction == 0.5
    assert b.gt_a_fraction == pytest.approx(4 / 9)


def test_records_mark_missing_and_uncounted(dataset) -> None:
    records = {(r.sample_key, r.key): r for r in score_closed(*dataset).records}
    assert records[("s1", "1")].missing and not records[("s1", "1")].correct
    assert not records[("s2", "1")].missing and records[("s2", "1")].prediction is None
    assert not records[("s0", "2")].counted and not records[("s0", "2")].correct


def test_length_mismatch_rejected(dataset) -> None:
    samples, predictions = dataset
    with pytest.raises(PredictionFormatError):
        score_closed(samples, predictions[:-1])


LABEL = st.sampled_from(["a", "b", "c", None])
PRED = st.sampled_from(["a", "b", "c", None, "missing"])
SWAP = {"a": "b", "b": "a"}


@st.composite
def random_benchmark(draw):
    n = draw(st.integers(1, 8))
    rows = []
    for i in range(n):
        n_diff = draw(st.integers(0, 5))
        labels = {str(k): draw(LABEL) for k in range(n_diff)}
        preds = {k: draw(PRED) for k in labels}
        split = draw(st.sampled_from(["easy", "medium", "hard"]))
        rows.append((f"s{i}", split, labels, {k: v for k, v in preds.items() if v != "missing"}))
    return rows


def _swap(letter: Optional[str]) -> Optional[str]:
    return SWAP.get(letter, letter) if letter is not None else None


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=random_benchmark())
def test_accuracy_equals_brute_force_and_is_swap_invariant(make_sample, rows) -> None:
    samples = [make_sample(k, labels, split=split) for k, split, labels, _ in rows]
    predictions = [preds for *_, preds in rows]
    metrics = score_closed(samples, predictions)

    for split in ("easy", "medium", "hard"):
        pairs = [
            (labels[k], preds.get(k))
            for _, s, labels, preds in rows
            if s == split
            for k in labels
            if labels[k] in ("a", "b")
        ]
        if not pairs:
            assert split not in metrics.splits
            continue
        correct = sum(gt == p for gt, p in pairs)
        assert (metrics.splits[split].correct, metrics.splits[split].n) == (correct, len(pairs))

    swapped_samples = [make_sample(k, {d: _swap(v) for d, v in labels.items()}, split=split) for k, split, labels, _ in rows]
    swapped_preds = [{d: _swap(v) for d, v in preds.items()} for preds in predictions]
    swapped = score_closed(swapped_samples, swapped_preds)
    assert swapped.splits == metrics.splits
    assert swapped.avg == metrics.avg
