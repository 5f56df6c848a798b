"""`viddiff run` end to end, offline: synthetic videos, the scripted fake server, random-weight tiny CLIP."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from viddiff.cli import main
from viddiff.data.viddiffbench import load_dataset
from viddiff.config import DataConfig
from viddiff.schema import SampleResult
from viddiff.store import ResultsStore
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel

RUN_FILES = ("config.yaml", "run.json", "samples.jsonl", "predictions.json", "metrics.json", "report.md", "usage.json")


def _run(synth_dir: Path, out: Path, offline_sets: list[str], *extra: str, mode: str = "closed") -> int:
    return main(["-q", "run", "--dataset", str(synth_dir), "--mode", mode, "--output", str(out), *offline_sets, *extra])


def _predictions(out: Path) -> list[dict]:
    return json.loads((out / "predictions.json").read_text())


def test_closed_run_writes_every_file(synth_dir, tmp_path, offline_sets, capsys):
    out = tmp_path / "run"
    assert _run(synth_dir, out, offline_sets) == 0
    for name in RUN_FILES:
        assert (out / name).is_file(), name
    dataset = load_dataset(DataConfig(dataset=str(synth_dir)))
    predictions = _predictions(out)
    assert len(predictions) == len(dataset)
    for sample, pred in zip(dataset, predictions):
        # Closed-mode input is the a/b-labelled differences only: nothing else may be predicted.
        assert set(pred) == {d.key for d in sample.closed_differences()}
        assert set(pred.values()) <= {"a", "b", "c", None}
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["mode"] == "closed"
    results = ResultsStore(out).load()
    assert len(results) == len(dataset)
    for result in results.values():
        assert result.proposal is not None and result.segmentations is not None
        for kf in result.keyframes:
            assert kf.a.frame_indices and kf.b.frame_indices
    assert "Closed accuracy" in capsys.readouterr().out


def test_open_run_respects_n_diff(synth_dir, tmp_path, offline_sets):
    out = tmp_path / "run"
    assert _run(synth_dir, out, offline_sets, mode="open") == 0
    dataset = load_dataset(DataConfig(dataset=str(synth_dir)))
    for sample, pred in zip(dataset, _predictions(out)):
        assert 0 < len(pred) <= sample.n_differences_open
        for item in pred.values():
            assert item["prediction"] in ("a", "b") and item["description"]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["mode"] == "open"


def test_second_identical_run_makes_no_model_calls(synth_dir, tmp_path, offline_sets, scripted_server):
    assert _run(synth_dir, tmp_path / "first", offline_sets, "--split", "easy") == 0
    calls_after_first = len(scripted_server.requests)
    assert _run(synth_dir, tmp_path / "second", offline_sets, "--split", "easy") == 0
    assert len(scripted_server.requests) == calls_after_first
    usage = json.loads((tmp_path / "second" / "usage.json").read_text())
    assert usage["clip"]["image_forward"] == 0 and usage["clip"]["text_forward"] == 0
    assert usage["clip"]["image_cache_hits"] > 0
    assert all(stage["calls"] == 0 and stage["cache_hits"] > 0 for stage in usage["by_stage"].values())
    assert _predictions(tmp_path / "first") == _predictions(tmp_path / "second")


def test_swap_videos_flips_and_same_video_says_c(synth_dir, tmp_path, offline_sets):
    assert _run(synth_dir, tmp_path / "plain", offline_sets) == 0
    assert _run(synth_dir, tmp_path / "swap", offline_sets, "--swap-videos") == 0
    assert _run(synth_dir, tmp_path / "same", offline_sets, "--same-video") == 0
    flip = {"a": "b", "b": "a", "c": "c", None: None}
    plain, swapped, same = (_predictions(tmp_path / d) for d in ("plain", "swap", "same"))
    assert any(v in ("a", "b") for p in plain for v in p.values())
    # The scripted VLM answers from the images it is sent, so swapping A and B must flip every a/b answer.
    assert swapped == [{k: flip[v] for k, v in p.items()} for p in plain]
    assert all(v == "c" for p in same for v in p.values())


def test_save_visuals_writes_pngs(synth_dir, tmp_path, offline_sets):
    out = tmp_path / "run"
    assert _run(synth_dir, out, offline_sets, "--split", "easy", "--save-visuals") == 0
    pngs = sorted((out / "visuals").rglob("*.png"))
    assert any(p.name == "segmentation.png" for p in pngs)
    assert any(p.name.startswith("keyframes_") for p in pngs)


def test_existing_results_need_resume_and_same_config(synth_dir, tmp_path, offline_sets, capsys):
    out = tmp_path / "run"
    assert _run(synth_dir, out, offline_sets, "--split", "easy") == 0
    before = (out / "samples.jsonl").read_bytes()
    assert _run(synth_dir, out, offline_sets, "--split", "easy") == 2
    assert "--resume" in capsys.readouterr().err
    assert _run(synth_dir, out, offline_sets, "--split", "easy", "--resume", "--set", "localizer.method=uniform") == 2
    assert "localizer.method" in capsys.readouterr().err
    assert (out / "samples.jsonl").read_bytes() == before
    # A consistent resume of a finished run does no work and keeps the results.
    assert _run(synth_dir, out, offline_sets, "--split", "easy", "--resume") == 0
    assert (out / "samples.jsonl").read_bytes() == before


def test_torn_last_line_is_repaired_on_resume(synth_dir, tmp_path, offline_sets):
    out = tmp_path / "run"
    assert _run(synth_dir, out, offline_sets) == 0
    reference = _predictions(out)
    lines = (out / "samples.jsonl").read_bytes().splitlines(keepends=True)
    (out / "samples.jsonl").write_bytes(lines[0] + lines[1][: len(lines[1]) // 2])
    assert _run(synth_dir, out, offline_sets, "--resume") == 0
    assert _predictions(out) == reference
    keys = [SampleResult.model_validate_json(l).sample_key for l in (out / "samples.jsonl").read_bytes().splitlines()]
    assert len(keys) == len(set(keys)) == len(reference)


def test_missing_video_fails_that_sample_only(synth_dir, tmp_path, offline_sets, capsys):
    broken = tmp_path / "broken"
    broken.mkdir()
    rows = [json.loads(l) for l in (synth_dir / "dataset.jsonl").read_text().splitlines()]
    videos = json.loads(rows[0]["videos"])
    videos[0]["path"] = str(tmp_path / "nowhere.mp4")
    rows[0]["videos"] = json.dumps(videos)
    for row in rows[1:]:
        row["videos"] = json.dumps([{**v, "path": str(synth_dir / v["path"])} for v in json.loads(row["videos"])])
    (broken / "dataset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "run"
    assert _run(broken, out, offline_sets) == 1
    errors = json.loads((out / "errors.json").read_text())
    assert [e["sample_key"] for e in errors] == [rows[0]["sample_key"]]
    assert "nowhere.mp4" in errors[0]["error"]
    assert len(ResultsStore(out).load()) == len(rows) - 1
    assert _predictions(out)[0] == {}


@pytest.mark.slow
def test_killed_run_resumes_to_identical_predictions(synth_dir, tmp_path, monkeypatch):
    """SIGKILL a real `viddiff run` process mid-run; --resume must finish with the uninterrupted result."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    with FakeOpenAIServer(ScriptedModel(), latency_s=0.15) as server:

        def command(out: Path, cache: Path, *extra: str) -> list[str]:
            sets = [x for item in offline_overrides(server.base_url, str(cache)) for x in ("--set", item)]
            return [sys.executable, "-m", "viddiff.cli", "-q", "run", "--dataset", str(synth_dir), "--mode", "closed",
                    "--output", str(out), "--set", "run.max_samples_in_flight=1", *sets, *extra]

        reference = tmp_path / "reference"
        subprocess.run(command(reference, tmp_path / "ref.sqlite"), check=True, capture_output=True, timeout=300)

        killed = tmp_path / "killed"
        proc = subprocess.Popen(command(killed, tmp_path / "k.sqlite"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        samples = killed / "samples.jsonl"
        while time.time() < deadline and not (samples.exists() and samples.read_bytes().count(b"\n") >= 1):
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        done_before = samples.read_bytes().count(b"\n")
        assert 1 <= done_before < 3, "the kill must land mid-run"
        subprocess.run(command(killed, tmp_path / "k.sqlite", "--resume"), check=True, capture_output=True, timeout=300)
    assert _predictions(killed) == _predictions(reference)
    keys = [SampleResult.model_validate_json(l).sample_key for l in samples.read_bytes().splitlines()]
    assert len(keys) == len(set(keys)) == 3
