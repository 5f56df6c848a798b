"""VidPair-Halluc: a binary question answered on no video. We skip its entry; ``vidpair.unanswered_question=
score_entry`` scores it as the release does: its inference script records a failed call as ``API_ERROR``, and
``videoqa.py`` scores an entry whose question key is there without valid answers. The synthetic benchmark and
a predictions file on disk; the numbers worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from viddiff.benchmarks.vidpair.data import load_vidpair
from viddiff.benchmarks.vidpair.scoring import VidPairMetrics, evaluate_vidpair
from viddiff.config import Config, load_config

REPO = Path(__file__).resolve().parents[3]
ANSWERS = {
    # color: every answer right (truths: pos-1 yes, the rest no)
    "b-color_0001-pos-1": "Yes", "b-color_0001-adv-1": "No", "b-color_0001-pos-2": "No", "b-color_0001-adv-2": "No",
    # number: question 2 right on the positive video, a false yes on the adversarial one; question 1 (truth yes on
    # the positive video) has no answer on either video: its keys are not in the file
    "b-number_0002-pos-2": "No", "b-number_0002-adv-2": "Yes",
}


def _score(vidpair_dir: Path, tmp_path: Path, *sets: str, answers: dict[str, str] = ANSWERS) -> VidPairMetrics:
    cfg = Config().with_overrides(["data.benchmark=vidpair-halluc", f"data.dataset={vidpair_dir}", "data.limit=2",
                                   "vidpair.question_types=[binary]", "vidpair.judge_open=false", *sets])
    path = tmp_path / "predictions.json"
    path.write_text(json.dumps(answers), encoding="utf-8")
    return evaluate_vidpair(load_vidpair(cfg), path, cfg)


def test_an_unanswered_question_skips_its_entry_unless_scored_as_released(vidpair_dir: Path, tmp_path: Path) -> None:
    ours = _score(vidpair_dir, tmp_path)
    # the number entry is skipped: color alone, question pairs 2/2 and video pairs 2/2
    c = ours.overall.binary.counts
    assert (c.vid_pair_correct, c.vid_pair_total, c.text_pair_correct, c.text_pair_total) == (2, 2, 2, 2)
    assert ours.overall.binary.weighted_acc == pytest.approx(1.0) and (c.total_qa, c.gt_yes, c.fp) == (4, 1, 0)
    assert [(e.entry, "no answer on any video" in e.reason) for e in ours.skipped_entries] == [("P0002/number", True)]
    released = _score(vidpair_dir, tmp_path, "vidpair.unanswered_question=score_entry")
    # number is scored: question 2 is a question pair, wrong (0/1); question 1 forms no unit, and no video is
    # answered on both questions, so no video pair: weighted (2 + 2 + 0) / (3 + 2)
    c = released.overall.binary.counts
    assert (c.vid_pair_correct, c.vid_pair_total, c.text_pair_correct, c.text_pair_total) == (2, 3, 2, 2)
    assert released.overall.binary.question_pair_acc == pytest.approx(2 / 3)
    assert released.overall.binary.weighted_acc == pytest.approx(4 / 5)
    # gt_yes counts every question of a kept entry, the unanswered one too; FP over the 6 valid answers
    assert (c.total_qa, c.gt_yes, c.model_yes, c.fp) == (6, 2, 2, 1) and released.overall.binary.fp_rate == pytest.approx(1 / 6)
    assert released.skipped_entries == [] and released.unanswered_question == "score_entry"


def test_score_entry_counts_failed_calls_as_the_releases_api_error(vidpair_dir: Path, tmp_path: Path) -> None:
    """The release's pairing check counts ``API_ERROR`` (not one of its failure strings) among the >= 2 answers an
    entry needs, and an entry whose every call failed still has its keys: scored, with its ground truth in
    ``gt_yes``. Here the number entry has one answer (question 2 on the positive video, right): skipped with fewer
    than two answers before, scored as released now; then with no answer at all, scored with no unit."""
    one_answer = {k: v for k, v in ANSWERS.items() if k != "b-number_0002-adv-2"}
    released = _score(vidpair_dir, tmp_path, "vidpair.unanswered_question=score_entry", answers=one_answer)
    c = released.overall.binary.counts
    # number: question 2 a right question pair (1/1), question 1 no unit, no video answered on both questions
    assert (c.vid_pair_correct, c.vid_pair_total, c.text_pair_correct, c.text_pair_total) == (3, 3, 2, 2)
    assert (c.total_qa, c.gt_yes, c.model_yes, c.fp) == (5, 2, 1, 0) and released.skipped_entries == []
    ours = _score(vidpair_dir, tmp_path, answers=one_answer)
    assert [e.entry for e in ours.skipped_entries] == ["P0002/number"] and ours.overall.binary.counts.gt_yes == 1
    color_only = {k: v for k, v in ANSWERS.items() if "number" not in k}
    released = _score(vidpair_dir, tmp_path, "vidpair.unanswered_question=score_entry", answers=color_only)
    c = released.overall.binary.counts
    # every call of number failed: scored, no unit, its yes truth in gt_yes (Pct_Diff (1 - 2) / 4)
    assert (c.vid_pair_total, c.text_pair_total, c.total_qa, c.gt_yes) == (2, 2, 4, 2) and released.skipped_entries == []


def test_the_release_config_switches_it_on() -> None:
    release = load_config(REPO / "configs" / "vidpair-gpt4o.yaml").vidpair
    assert release.unanswered_question == "score_entry" and Config().vidpair.unanswered_question == "skip_entry"
