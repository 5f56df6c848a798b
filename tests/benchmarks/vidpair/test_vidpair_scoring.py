"""From rows and answers to the numbers: entries and question groups built from the published layout, scored
as released (hand-computed), with invalid answers, a skipped entry and fragile readings counted, and ours apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from viddiff.benchmarks.vidpair.data import load_vidpair
from viddiff.benchmarks.vidpair.scoring import evaluate_vidpair
from viddiff.errors import PredictionFormatError


@pytest.fixture
def scored(vidpair_dir: Path, config_for):
    cfg = config_for(vidpair_dir, "data.limit=3", "vidpair.judge_open=false")  # color, number, location pairs
    data = load_vidpair(cfg)
    q = data.questions
    answers = {
        "b-color_0001-pos-1": "Yes.", "b-color_0001-adv-1": "I do not know",  # read as no: right, fragile
        "b-color_0001-pos-2": "No", "b-color_0001-adv-2": "Unclear",  # unreadable: left out
        "b-number_0002-pos-1": "No", "b-number_0002-adv-1": "No",
        "b-number_0002-pos-2": "Yes", "b-number_0002-adv-2": "Yes",  # two false yeses
        "m-color_0001-pos-1": q["m-color_0001-pos-1"].answer,
        "m-color_0001-adv-1": f"Answer: {q['m-color_0001-adv-1'].answer}",  # wrong by form only
        "m-number_0002-pos-1": "A", "m-number_0002-adv-1": "A",  # the adversarial video has two discs: B
        "o-color_0001-pos-1": "A disc.",
    }  # the location pair has no answer at all (its samples failed): skipped
    predictions = [{"id": s.sample_key, "response": answers.get(s.sample_key)} for s in data]
    return evaluate_vidpair(data, predictions, cfg)


def test_the_release_numbers_by_hand(scored) -> None:
    b = scored.overall.binary
    # color: question pairs 2/2, video pairs 1/1 (the video with an unreadable answer is no unit);
    # number: 0/2 and 0/2; location skipped.
    c = b.counts
    assert (c.vid_pair_correct, c.vid_pair_total, c.text_pair_correct, c.text_pair_total) == (2, 4, 1, 3)
    assert b.weighted_acc == pytest.approx(3 / 7)
    assert (c.total_qa, c.model_yes, c.gt_yes, c.fp) == (7, 3, 2, 2)
    assert b.fp_rate == pytest.approx(2 / 7) and b.pct_diff == pytest.approx(1 / 7)
    m = scored.overall.mcq
    assert (m.counts.tp, m.counts.fp, m.f1, m.pair_acc) == (2, 2, 0.5, 0.0)
    aspects = {g.name: g for g in scored.by_aspect}
    assert aspects["color"].binary.weighted_acc == 1.0 and aspects["number"].binary.weighted_acc == 0.0
    assert aspects["location"].binary.weighted_acc is None and aspects["location"].binary.counts.skipped_entries == 1
    assert [g.name for g in scored.by_dimension] == ["spatial"] and scored.dimension_assumed


def test_left_out_answers_skips_and_fragile_readings_are_counted(scored) -> None:
    assert scored.invalid_answers == {"binary": 1, "multiple_choice": 0, "open_ended": 0}
    assert scored.no_response == {"binary": 4, "multiple_choice": 2, "open_ended": 5}
    assert {(e.entry, e.question_type) for e in scored.skipped_entries} == {
        ("P0003/location", "binary"), ("P0003/location", "multiple_choice")
    }
    assert scored.fragile.yes_no == 1 and scored.fragile.by_word == {"not": 1} and scored.fragile.mcq_form_only == 1
    record = next(r for r in scored.records if r.sample_key == "b-color_0001-adv-2")
    assert (record.status, record.reading, record.correct) == ("invalid", "unknown", None)
    assert next(r for r in scored.records if r.sample_key == "m-color_0001-adv-1").fragile == "form"


def test_our_numbers_stand_apart(scored) -> None:
    assert scored.strict_accuracy["binary"].count == 4 and scored.strict_accuracy["binary"].n == 12
    c = scored.consistency
    assert c.n_questions == 6
    assert (c.answer_flip_rate.count, c.answer_flip_rate.n) == (1, 2)
    assert (c.steady_rate.count, c.steady_rate.n) == (1, 1)
    assert (c.pair_accuracy.count, c.pair_accuracy.n) == (1, 6)
    assert (c.yes_share.count, c.yes_share.n, c.gt_yes_share) == (3, 7, pytest.approx(2 / 7))
    assert (c.false_yes_rate.count, c.false_yes_rate.n) == (2, 5)
    assert (c.adversarial_false_yes_rate.count, c.adversarial_false_yes_rate.n) == (1, 3)
    assert scored.overall.open is None and scored.judge_model is None  # judge_open=false: nothing judged
    assert {r.status for r in scored.records if r.question_type == "open_ended"} == {"not_judged"}


def test_the_clipqa_scorer_is_a_named_option(vidpair_dir: Path, config_for) -> None:
    cfg = config_for(vidpair_dir, "data.limit=1", "vidpair.binary_scorer=clipqa", "vidpair.question_types=[binary]")
    data = load_vidpair(cfg)
    metrics = evaluate_vidpair(data, {s.sample_key: "yes" for s in data}, cfg)
    assert metrics.binary_scorer == "clipqa" and metrics.overall.binary.counts.gt_yes == 1  # over valid answers


def test_bad_prediction_files_list_every_problem(vidpair_dir: Path, config_for) -> None:
    cfg = config_for(vidpair_dir, "data.limit=1", "vidpair.question_types=[binary]")
    data = load_vidpair(cfg)
    bad = [{"id": s.sample_key, "response": 3} for s in data][:-1]
    with pytest.raises(PredictionFormatError, match=r"(?s)has 3 items but the selection has 4.*must be a string or null"):
        evaluate_vidpair(data, bad, cfg)
    with pytest.raises(PredictionFormatError, match="'nope' is not a question"):
        evaluate_vidpair(data, {"nope": "yes"}, cfg)
