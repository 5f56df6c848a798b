"""VidPair-Halluc: a binary question answered on no video. We skip its entry (reading it as the question's key
missing from the release's predictions file, an assumption); ``vidpair.unanswered_question=score_entry`` is
the release's ``videoqa.py`` reading when the key is there without answers. The synthetic benchmark and a
predictions file on disk; the numbers worked out by hand."""

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


def _score(vidpair_dir: Path, tmp_path: Path, *sets: str) -> VidPairMetrics:
    cfg = Config().with_overrides(["data.benchmark=vidpair-halluc", f"data.dataset={vidpair_dir}", "data.limit=2",
                                   "vidpair.question_types=[binary]", "vidpair.judge_open=false", *sets])
    path = tmp_path / "predictions.json"
    path.write_text(json.dumps(ANSWERS), encoding="utf-8")
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


def test_the_release_config_switches_it_on() -> None:
    release = load_config(REPO / "configs" / "vidpair-gpt4o.yaml").vidpair
    assert release.unanswered_question == "score_entry" and Config().vidpair.unanswered_question == "skip_entry"
