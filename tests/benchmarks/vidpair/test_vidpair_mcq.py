"""Multiple choice as released: exact letter sequences, "F1" = exact-match accuracy, missing answers dropped,
pair accuracy on the published pairs, and answers wrong by form alone counted."""

from __future__ import annotations

from viddiff.benchmarks.vidpair.mcq import ChoiceItem, MCQCounts, mcq_scores, score_choice_entries


def choice(entry: str, group: str, role: str, expected: str, response) -> ChoiceItem:
    return ChoiceItem(key=f"{entry}-{group}-{role}", entry=entry, group=group, role=role, expected=expected,
                      response=response, letters=("A", "B", "C", "D"))


def test_letter_sequences_order_and_form_count_and_f1_is_accuracy() -> None:
    items = [
        choice("E1", "Q1", "positive", "AC", "a c"),  # right: case and spaces are removed
        choice("E1", "Q1", "adversarial", "CA", "AC"),  # wrong: order counts
        choice("E2", "Q2", "positive", "AC", "A, C"),  # wrong by form only
        choice("E2", "Q2", "adversarial", "B", "B"),  # right
        choice("E3", "Q3", "positive", "D", "Answer: D"),  # wrong by form only
        choice("E3", "Q3", "adversarial", "A", None),  # no answer: dropped, not wrong
        choice("E4", "Q4", "positive", "A", None), choice("E4", "Q4", "adversarial", "B", None),  # entry skipped
    ]
    results = score_choice_entries(items)
    counts = sum((c for c, _ in results.values()), MCQCounts())
    assert (counts.tp, counts.fp, counts.skipped_entries, counts.form_only_misses) == (2, 3, 1, 2)
    scores = mcq_scores(counts)
    assert scores.f1 == 2 / 5  # precision = recall = TP / (TP + FP): the release's F1 is exact-match accuracy
    # pairs: Q1 (right, wrong), Q2 (wrong, right): 0 of 2; Q3 lacks an adversarial answer: no pair
    assert (counts.pair_total, counts.pair_correct, scores.pair_acc) == (2, 0, 0.0)
    assert results["E3"][1]["E3-Q3-adversarial"].status == "no_response"


def test_nothing_answered_gives_no_f1() -> None:
    assert mcq_scores(MCQCounts()).f1 is None and mcq_scores(MCQCounts()).pair_acc is None
