"""ViDiC-1K end to end, offline: synthetic ViDiC pairs → `viddiff run` / `viddiff baseline` → judged scores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from viddiff.cli import main
from viddiff.config import Config
from viddiff.benchmarks.vidic.data import CATEGORIES, load_vidic
from viddiff.benchmarks.vidic.synthetic import write_synthetic_vidic
from viddiff.store import ResultsStore

RUN_FILES = ("config.yaml", "run.json", "samples.jsonl", "predictions.json", "metrics.json", "report.md", "usage.json")


@pytest.fixture(scope="module")
def vidic_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("vidic-e2e")
    write_synthetic_vidic(out, pairs=3, seed=2)
    return out


def check_outputs(vidic_dir: Path, out: Path) -> None:
    """Every run file is there; one non-empty response per pair in dataset order; Avg/Diff/Sim scored."""
    for name in RUN_FILES:
        assert (out / name).is_file(), name
    cfg = Config()
    cfg.data.dataset = str(vidic_dir)
    dataset = load_vidic(cfg.data, cfg.vidic)
    predictions = json.loads((out / "predictions.json").read_text())
    assert [p["id"] for p in predictions] == [s.sample_key for s in dataset]
    assert all(p["response"].strip() for p in predictions)
    results = ResultsStore(out).load()
    assert {k: r.description for k, r in results.items()} == {p["id"]: p["response"] for p in predictions}
    saved = json.loads((out / "metrics.json").read_text())
    assert (saved["mode"], saved["benchmark"]) == ("describe", "vidic")
    metrics = saved["metrics"]
    n_items = sum(len(dataset.checklists[s.sample_key]) for s in dataset)
    overall = metrics["overall"]
    assert metrics["n_items"] == overall["avg"]["n"] == n_items
    assert overall["diff"]["n"] + overall["sim"]["n"] == n_items and overall["diff"]["n"] and overall["sim"]["n"]
    for key in ("avg", "diff", "sim"):
        assert 0.0 <= overall[key]["accuracy"] <= 1.0
    assert metrics["empty_responses"] == [] and metrics["judge_failures"] == []
    assert {c["category"] for c in overall["by_category"]} <= set(CATEGORIES)


def test_viddiff_run_on_vidic(vidic_dir, tmp_path, offline_sets):
    out = tmp_path / "run"
    code = main(["-q", "run", "--benchmark", "vidic", "--dataset", str(vidic_dir), "--output", str(out), *offline_sets])
    assert code == 0
    check_outputs(vidic_dir, out)
    for result in ResultsStore(out).load().values():
        assert result.mode == "describe" and result.method == "viddiff"
        assert {d.category for d in result.proposal.differences} == set(CATEGORIES)
        assert len(result.predictions) == len(result.proposal.differences) == Config().proposer.describe_n_differences


def test_viddiff_baseline_on_vidic(vidic_dir, tmp_path, offline_sets):
    out = tmp_path / "baseline"
    args = ["-q", "baseline", "--benchmark", "vidic", "--model", "fake-vlm", "--dataset", str(vidic_dir)]
    assert main([*args, "--output", str(out), *offline_sets]) == 0
    check_outputs(vidic_dir, out)
    for result in ResultsStore(out).load().values():
        assert result.method == "lmm:fake-vlm" and result.proposal is None
        assert "Playback technique:" in result.description
