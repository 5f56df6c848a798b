import csv
import json
from pathlib import Path

import pytest

from viddiff.config import Config
from viddiff.eval import format_table, score_closed, write_report
from viddiff.eval.groups import ActionRow
from viddiff.eval.open import JudgeIssue, OpenMetrics, OpenRecord, OpenStats, Truncation


@pytest.fixture
def closed_metrics(make_sample):
    samples = [
        make_sample("s0", {"0": "a", "1": "b", "2": "c"}, descriptions={"0": "hips | knees"}),
        make_sample("s1", {"0": "b"}, split="hard", action="diving_0", action_name="dive"),
    ]
    return score_closed(samples, [{"0": "a", "1": "a"}, {"0": "b"}])


def _stats(n: int, found: int) -> OpenStats:
    return OpenStats(
        n=n, found=found, wrong_letter=n - found, not_matched=0, flip_unverified=0,
        recall=found / n, matched_rate=1.0, wrong_letter_rate=(n - found) / n, not_matched_rate=0.0, flip_unverified_rate=0.0,
    )


@pytest.fixture
def open_metrics() -> OpenMetrics:
    record = OpenRecord(
        index=0, sample_key="s0", split="easy", action="fitness_0", action_name="squat", key="0", name="depth",
        description="deeper", gt="a", counted=True, pred_key="3", pred_description="shallower", pred_letter="b",
        flipped=True, final_letter="a", outcome="found", correct=True,
    )
    return OpenMetrics(
        splits={"easy": _stats(1, 1)}, avg=1.0, overall=_stats(1, 1),
        by_action=[ActionRow[OpenStats](split="easy", action="fitness_0", action_name="squat", stats=_stats(1, 1))],
        by_difference=[], n_samples=1, n_differences=1, n_predictions=2, unmatched_predictions=1,
        judge_model="judge-x", flip_model="flip-y",
        judge_issues=[JudgeIssue(index=0, sample_key="s0", stage="flip", gt_keys=["1"], problem="bad batch")],
        truncations=[Truncation(index=0, sample_key="s0", allowed=1, given=2, dropped_keys=["9"])],
        records=[record],
    )


def test_closed_report_files(tmp_path: Path, closed_metrics) -> None:
    cfg = Config().with_overrides(["run.seed=7"])
    write_report(tmp_path / "out", closed_metrics, cfg=cfg, dataset_source="local.jsonl", dataset_revision=None)
    data = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert data["mode"] == "closed" and data["seed"] == 7
    assert data["dataset"] == {"source": "local.jsonl", "revision": None, "splits": ["easy", "hard"]}
    assert data["counts"] == {"samples": 2, "differences": 4, "counted": 3}
    assert data["judge"] is None and data["timestamp"]
    assert data["metrics"]["splits"]["hard"]["accuracy"] == 1.0
    assert "records" not in data["metrics"]

    with (tmp_path / "out" / "differences.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 4
    assert rows[0]["description"] == "hips | knees" and rows[0]["correct"] == "True"

    md = (tmp_path / "out" / "report.md").read_text()
    assert "| easy | 2 | 1 | 50.0 |" in md
    assert "| Avg |  |  | 75.0 |" in md
    assert "hips \\| knees" in md  # pipes in descriptions cannot break the table
    assert "## Per action" in md and "## Per difference" in md


def test_closed_console_table(closed_metrics) -> None:
    text = format_table(closed_metrics)
    lines = text.splitlines()
    assert lines[0].startswith("Closed accuracy")
    assert any(line.split()[:4] == ["easy", "2", "1", "50.0"] for line in lines)
    assert any(line.split() == ["Avg", "75.0"] for line in lines)
    assert "'a' in 66.7% of a/b predictions vs 33.3% of ground truth" in text
    assert "Per action" in text and "diving_0" in text


def test_open_report_records_judge_provenance(tmp_path: Path, open_metrics) -> None:
    cfg = Config().with_overrides(["eval.judge.model=judge-x", "eval.flip.model=flip-y"])
    write_report(tmp_path, open_metrics, cfg=cfg, dataset_source="hf:x/y@abc", dataset_revision="abc")
    data = json.loads((tmp_path / "metrics.json").read_text())
    assert data["judge"]["model"] == "judge-x" and data["judge"]["temperature"] == 0.0
    assert data["flip"]["model"] == "flip-y"
    assert data["prompt_version"] == open_metrics.prompt_version
    assert data["eval_settings"]["flip_batch_size"] == 6
    assert data["counts"]["judge_issues"] == 1 and data["counts"]["truncated_samples"] == 1
    with (tmp_path / "differences.csv").open() as fh:
        [row] = list(csv.DictReader(fh))
    assert (row["pred_description"], row["flipped"], row["outcome"]) == ("shallower", "True", "found")
    md = (tmp_path / "report.md").read_text()
    assert "judge: judge-x; flip check: flip-y" in md
    assert "## Judge issues" in md and "keys 1: bad batch" in md
    assert "dropped keys 9" in md
    text = format_table(open_metrics)
    assert text.startswith("Open recall@N_diff (judge judge-x, flip flip-y")
    assert "1 judge answer(s) stayed invalid" in text
