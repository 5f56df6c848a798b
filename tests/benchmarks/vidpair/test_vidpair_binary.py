"""Binary scoring as released, hand-computed: units, weighted accuracy, FP rate and Pct_Diff with their
denominators, invalid answers left out, skipped entries, and where the two released scorers part ways."""

from __future__ import annotations

import pytest

from viddiff.benchmarks.vidpair.binary import BinaryCounts, BinaryItem, binary_scores, score_entries


def item(entry: str, group: str, video: str, expected: str, response) -> BinaryItem:
    return BinaryItem(key=f"{entry}-{group}-{video}", entry=entry, group=group, video=video, expected=expected, response=response)


ITEMS = [
    # E1: Q1 right on both (the adversarial answer "I do not know" reads as no), Q2 right on p, invalid on a.
    item("E1", "Q1", "p", "yes", "Yes."), item("E1", "Q1", "a", "no", "I do not know"),
    item("E1", "Q2", "p", "no", "No"), item("E1", "Q2", "a", "no", "Unclear"),
    # E2: wrong on p for both questions (one of them a false yes), right on a.
    item("E2", "Q3", "p", "yes", "No"), item("E2", "Q3", "a", "no", "No"),
    item("E2", "Q4", "p", "no", "Yes"), item("E2", "Q4", "a", "yes", "Yes"),
    # E3: Q5 never answered (samples failed), Q6 once validly: skipped by both scorers.
    item("E3", "Q5", "p", "yes", None), item("E3", "Q5", "a", "no", None),
    item("E3", "Q6", "p", "no", "No"), item("E3", "Q6", "a", "no", "error"),
]


def total(results) -> BinaryCounts:
    return sum((r.counts for r in results.values()), BinaryCounts())


@pytest.mark.parametrize("scorer", ["videoqa", "clipqa"])
def test_hand_computed_counts_with_an_invalid_answer_and_a_skipped_entry(scorer: str) -> None:
    results = score_entries(ITEMS, scorer)
    assert results["E3"].skip_reason is not None and results["E1"].skip_reason is None
    c = total(results)
    # E1: question pairs Q1 (p, a right) and Q2 (only p valid, right): 2 of 2; video pairs: p right, a has an
    # invalid answer so it is no unit: 1 of 1. E2: Q3 and Q4 wrong on p: 0 of 2; video p wrong, a right: 1 of 2.
    assert (c.vid_pair_correct, c.vid_pair_total, c.text_pair_correct, c.text_pair_total) == (2, 4, 2, 3)
    assert (c.total_qa, c.model_yes, c.fp, c.skipped_entries, c.entries) == (7, 3, 1, 1, 3)
    assert c.gt_yes == 3  # E1's Q1p, E2's Q3p and Q4a; the skipped E3 adds nothing
    s = binary_scores(c, overall=True)
    assert s.question_pair_acc == 0.5 and s.video_pair_acc == pytest.approx(2 / 3)
    assert s.weighted_acc == pytest.approx(4 / 7)  # (2 + 2) / (4 + 3), pooled by unit counts
    assert s.fp_rate == pytest.approx(1 / 7)  # FP over valid answers, not over GT-no answers (5)
    assert s.pct_diff == 0.0  # (3 - 3) / 7


def test_videoqa_skip_reasons_follow_its_rules() -> None:
    one_question = [item("E", "Q", "p", "yes", "yes"), item("E", "Q", "a", "no", "no")]
    one_video = [item("E", "Q1", "p", "yes", "yes"), item("E", "Q2", "p", "no", "no")]
    too_few = [item("E", "Q1", "p", "yes", "yes"), item("E", "Q1", "a", "no", ""), item("E", "Q2", "p", "no", "unknown"),
               item("E", "Q2", "a", "no", "file not found")]
    reasons = {name: score_entries(items, "videoqa")["E"].skip_reason for name, items in
               (("one_question", one_question), ("one_video", one_video), ("too_few", too_few))}
    assert "fewer than two questions" in reasons["one_question"]
    assert "fewer than two videos" in reasons["one_video"]
    assert "fewer than two answers" in reasons["too_few"]
    # clipqa has no question or video rule: the same one-question entry is scored
    assert score_entries(one_question, "clipqa")["E"].skip_reason is None


def test_the_two_released_scorers_differ_on_ground_truth_case_and_gt_yes() -> None:
    items = [
        item("E", "Q1", "p", "Yes", "yes"), item("E", "Q1", "a", "no", "no"),
        item("E", "Q2", "p", "no", "no"), item("E", "Q2", "a", "yes", "maybe"),  # invalid on a GT-yes question
    ]
    v = total(score_entries(items, "videoqa"))
    c = total(score_entries(items, "clipqa"))
    # videoqa reads "Yes" as yes: everything valid is right; gt_yes counts both GT-yes questions, answered or not.
    assert (v.vid_pair_correct, v.vid_pair_total, v.text_pair_correct, v.text_pair_total, v.gt_yes) == (2, 2, 1, 1, 2)
    assert binary_scores(v, overall=True).pct_diff == pytest.approx((1 - 2) / 3)
    # clipqa compares "Yes" as written with the reading "yes": wrong; gt_yes counts only validly answered raw "yes".
    assert (c.vid_pair_correct, c.vid_pair_total, c.text_pair_correct, c.text_pair_total, c.gt_yes) == (1, 2, 0, 1, 0)
    assert binary_scores(c, overall=True).pct_diff == pytest.approx((1 - 0) / 3)
    outcomes = score_entries(items, "clipqa")["E"].outcomes
    assert outcomes["E-Q1-p"].correct is False and outcomes["E-Q2-a"].status == "invalid"


def test_clipqa_counts_a_video_pair_on_two_valid_answers_of_three_questions() -> None:
    items = [item("E", f"Q{k}", v, "no", "no") for k in (1, 2, 3) for v in ("p", "a")]
    items[-1] = item("E", "Q3", "a", "no", "unclear")
    v, c = total(score_entries(items, "videoqa")), total(score_entries(items, "clipqa"))
    assert (c.text_pair_total, c.text_pair_correct) == (2, 2)  # a: 2 valid of 3 questions is enough for clipqa
    assert (v.text_pair_total, v.text_pair_correct) == (1, 1)  # videoqa needs every question valid on the video


def test_overall_weighted_accuracy_needs_both_units_but_a_group_does_not() -> None:
    only_questions = BinaryCounts(entries=1, vid_pair_total=2, vid_pair_correct=1, total_qa=2)
    assert binary_scores(only_questions, overall=True).weighted_acc is None
    assert binary_scores(only_questions, overall=False).weighted_acc == 0.5
    assert binary_scores(BinaryCounts(), overall=False).fp_rate is None
