"""``viddiff eval`` end to end on the synthetic benchmark (``viddiff data synth``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from viddiff.cli import main
from viddiff.config import DataConfig
from viddiff.data.viddiffbench import load_dataset
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("synth") / "bench"
    assert main(["-q", "data", "synth", "--out", str(out), "--pairs", "6", "--seed", "3"]) == 0
    return out


@pytest.fixture(scope="module")
def samples(bench: Path):
    return load_dataset(DataConfig(dataset=str(bench))).samples


def test_closed_eval_prints_tables_and_writes_files(tmp_path: Path, bench: Path, samples, capsys) -> None:
    # right on even-indexed samples, always "b" on odd ones
    preds = [
        {k: (gt if i % 2 == 0 else "b") for k, gt in s.labels.items() if gt is not None}
        for i, s in enumerate(samples)
    ]
    counted = [(gt, p.get(k)) for s, p in zip(samples, preds) for k, gt in s.labels.items() if gt in ("a", "b")]
    expected = sum(gt == p for gt, p in counted) / len(counted)
    path = tmp_path / "predictions.json"
    path.write_text(json.dumps(preds))
    out = tmp_path / "report"

    rc = main(["-q", "eval", "--predictions", str(path), "--mode", "closed", "--dataset", str(bench), "--output", str(out)])

    assert rc == 0
    printed = capsys.readouterr().out
    assert printed.startswith("Closed accuracy") and "Per action" in printed
    data = json.loads((out / "metrics.json").read_text())
    assert data["metrics"]["overall"]["accuracy"] == pytest.approx(expected)
    assert data["counts"]["counted"] == len(counted)
    assert data["dataset"]["source"].endswith("dataset.jsonl")
    assert f"{100 * expected:.1f}" in printed
    assert (out / "differences.csv").is_file() and (out / "report.md").is_file()


def test_default_output_is_next_to_predictions(tmp_path: Path, bench: Path, samples, capsys) -> None:
    path = tmp_path / "preds.json"
    path.write_text(json.dumps([{} for _ in samples]))
    assert main(["-q", "eval", "--predictions", str(path), "--mode", "closed", "--dataset", str(bench)]) == 0
    assert json.loads((tmp_path / "metrics.json").read_text())["metrics"]["overall"]["accuracy"] == 0.0


def test_split_filter_and_bad_predictions_exit_2(tmp_path: Path, bench: Path, samples, capsys) -> None:
    path = tmp_path / "preds.json"
    path.write_text(json.dumps([{"0": "z"} for _ in samples]))
    rc = main(["-q", "eval", "--predictions", str(path), "--mode", "closed", "--dataset", str(bench), "--split", "easy"])
    assert rc == 2
    err = capsys.readouterr().err
    easy = sum(s.split == "easy" for s in samples)
    assert f"has {len(samples)} items but the dataset selection has {easy} samples" in err
    assert "prediction 'z' is not one of" in err


def _judge(req: ChatRequest) -> str:
    """Matches identical statements; never calls a pair opposite."""
    text = req.messages[1]["content"]
    if "Pairs:\n" in text:
        pairs = json.loads(text[text.index("Pairs:\n") + 7 : text.index("\n\nAnswer with")])
        return json.dumps({"results": [int(p["first"] != p["second"]) for p in pairs]})
    gt = json.loads(text[text.index("G (ground truth):\n") + 18 : text.index("\n\nP (predicted):")])
    pred = json.loads(text[text.index("P (predicted):\n") + 15 : text.index("\n\nFor each")])
    by_desc = {d: k for k, d in pred.items()}
    return json.dumps({"matches": {k: by_desc.get(d) for k, d in gt.items()}})


def test_open_eval_through_fake_server(tmp_path: Path, bench: Path, samples, capsys, monkeypatch) -> None:
    monkeypatch.setenv("VIDDIFF_TEST_KEY", "dummy")
    preds = [
        {k: {"description": s.differences[k].description, "prediction": gt} for k, gt in s.labels.items() if gt in ("a", "b")}
        for s in samples
    ]
    path = tmp_path / "open.json"
    path.write_text(json.dumps(preds))
    with FakeOpenAIServer(_judge) as server:
        rc = main([
            "-q", "eval", "--predictions", str(path), "--mode", "open", "--dataset", str(bench),
            "--set", f"endpoints.default.base_url={server.base_url}",
            "--set", "endpoints.default.api_key_env=VIDDIFF_TEST_KEY",
            "--set", f"cache.path={tmp_path / 'cache.sqlite'}",
        ])
    assert rc == 0
    assert {r.model for r in server.requests} == {"gpt-4o-2024-08-06", "gpt-4o-mini"}
    printed = capsys.readouterr().out
    assert printed.startswith("Open recall@N_diff (judge gpt-4o-2024-08-06, flip gpt-4o-mini")
    data = json.loads((tmp_path / "metrics.json").read_text())
    assert data["metrics"]["overall"]["recall"] == 1.0
    assert data["judge"]["model"] == "gpt-4o-2024-08-06" and data["prompt_version"]


def test_open_eval_whose_judge_never_answers_validly_exits_1_and_says_incomplete(
    tmp_path: Path, bench: Path, samples, capsys, monkeypatch
) -> None:
    """Issue 22: a judge that answers every sample with something that is no matching gives recall 0.0 by
    default; the command must not pass that off as a score."""
    monkeypatch.setenv("VIDDIFF_TEST_KEY", "dummy")
    preds = [
        {k: {"description": s.differences[k].description, "prediction": gt} for k, gt in s.labels.items() if gt in ("a", "b")}
        for s in samples
    ]
    path = tmp_path / "open.json"
    path.write_text(json.dumps(preds))
    with FakeOpenAIServer(lambda req: '{"verdict": "they match"}') as server:
        rc = main([
            "-q", "eval", "--predictions", str(path), "--mode", "open", "--dataset", str(bench),
            "--set", f"endpoints.default.base_url={server.base_url}",
            "--set", "endpoints.default.api_key_env=VIDDIFF_TEST_KEY",
            "--set", f"cache.path={tmp_path / 'cache.sqlite'}", "--set", "eval.max_reasks=1",
        ])
    captured = capsys.readouterr()
    assert rc == 1
    judged = [s for s, p in zip(samples, preds) if p and any(v is not None for v in s.labels.values())]
    n_gt = sum(1 for s in judged for v in s.labels.values() if v is not None)
    assert captured.out.rstrip().splitlines()[-1] == (
        f"viddiff: the scores are incomplete: the judge's answers stayed invalid for {len(judged)} of {len(samples)} "
        f"samples ({n_gt} ground-truth differences could not be judged and count as not found); see judge_issues in "
        f"{tmp_path / 'metrics.json'}, then score again with more re-asks (--set eval.max_reasks=N) or another "
        "judge (--set eval.judge.model=...)"
    )
    data = json.loads((tmp_path / "metrics.json").read_text())
    assert data["counts"]["judge_issues"] == len(judged)
