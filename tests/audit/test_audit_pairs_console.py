"""``viddiff audit --benchmark vidpair-halluc`` on the console: an aligned table, not report.md's raw Markdown, and the
stand-in notice under it (the console, metrics.json and report.md all say who answered)."""

from __future__ import annotations

import json
from pathlib import Path

from viddiff.benchmarks.vidpair.synthetic import write_synthetic_vidpair
from viddiff.cli import main


def test_pair_audit_prints_a_table_and_the_stand_ins(tmp_path: Path, offline_sets: list[str], capsys) -> None:
    data = write_synthetic_vidpair(tmp_path / "vidpair", pairs=2, seed=3)
    out = tmp_path / "audit"
    args = ["-q", "audit", "--benchmark", "vidpair-halluc", "--dataset", str(data), "--output", str(out),
            "--set", "vidpair.question_types=[binary]", *offline_sets]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "|---" not in printed and "| source |" not in printed and "# VidPair" not in printed
    header = next(line for line in printed.splitlines() if line.startswith("source"))
    assert header.split() == ["source", "metric", "(x100)", "single", "video", "(paper)", "pair-aware", "(beyond", "the",
                              "paper)", "change"]
    assert "NOTE: stand-ins, not models, produced these results" in printed and "scripted stand-in server" in printed
    assert "\n|---|---|" in (out / "report.md").read_text()  # the file keeps its Markdown, with the notice
    assert "NOTE: stand-ins" in (out / "report.md").read_text()
    assert json.loads((out / "metrics.json").read_text())["stand_ins"]
