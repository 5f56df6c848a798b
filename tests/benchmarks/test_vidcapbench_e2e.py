"""VidCapBench end to end, offline: `viddiff data synth` → `viddiff run --benchmark vidcapbench` → scores worked out
by hand, the caption layout, `viddiff eval` on a README-style JSONL file, the substring reading's flip, the
HTML report, and the QA file and videos from a local Hub server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from viddiff.benchmarks.vidcapbench.data import load_vidcapbench
from viddiff.cli import main
from viddiff.config import DataConfig, VidcapbenchConfig
from viddiff.testing import offline_overrides
from viddiff.testing.fake_hf import FakeHubServer
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("vidcapbench-e2e")
    assert main(["data", "synth", "--benchmark", "vidcapbench", "--out", str(out), "--pairs", "3"]) == 0
    return out


def test_run_then_eval_score_as_worked_out(synth: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    out = tmp_path / "run"
    with FakeOpenAIServer(ScriptedModel()) as server:
        sets = [a for item in offline_overrides(server.base_url, str(tmp_path / "c.sqlite")) for a in ("--set", item)]
        sets += ["--set", "vidcapbench.tokenizer=words"]
        base = ["-q", "run", "--benchmark", "vidcapbench", "--dataset", str(synth), *sets]
        assert main([*base, "--output", str(out), "--report"]) == 0
        predictions = json.loads((out / "predictions.json").read_text())
        assert [p["video"] for p in predictions] == [p["video_dir"] for p in predictions] == [
            "video_main_0.mp4", "Tarsier_1.mp4", "videos_qa_2.mp4"
        ]
        readme_style = tmp_path / "captions.jsonl"
        readme_style.write_text("".join(
            json.dumps({"question": p["question"], "video": p["video"], "model_generation": p["model_generation"]}) + "\n"
            for p in predictions
        ))
        n_before = len(server.requests)
        assert main(["-q", "eval", "--benchmark", "vidcapbench", "--dataset", str(synth), "--predictions", str(readme_style),
                     "--output", str(tmp_path / "eval"), *sets]) == 0
        assert len(server.requests) == n_before  # every answer and grade came from the cache
        assert main([*base, "--output", str(tmp_path / "substring"), "--set", "vidcapbench.grade_reading=substring"]) == 0

    metrics = json.loads((out / "metrics.json").read_text())["metrics"]
    # Per video with questions: A colour, subject, direction; B start position (one of two key words);
    # C sound (never captioned); D the shape (a circle, the caption says a square). Two such videos.
    assert [run["overall"] for run in metrics["runs"]] == [{"A": 6, "B": 2, "C": 2, "D": 2}] * 3
    overall = metrics["overall"]["rates"]
    assert (overall["accuracy"], overall["precision"]) == (pytest.approx(50.0), pytest.approx(80.0))
    assert overall["coverage"] == pytest.approx(100 * 10 / 12)
    assert overall["conciseness"] == pytest.approx(100 * 50.0 / metrics["mean_tokens"])
    assert metrics["tokenizer"].startswith("words (substitute")
    assert json.loads((tmp_path / "eval" / "metrics.json").read_text())["metrics"]["overall"] == metrics["overall"]
    flipped = json.loads((tmp_path / "substring" / "metrics.json").read_text())["metrics"]
    # the scripted grader writes "1 of 2 key words" in its analysis: read as released, the B becomes an A
    assert flipped["runs"][0]["overall"] == {"A": 8, "B": 0, "C": 2, "D": 2}
    page = (out / "report" / "0000-video_main_0.mp4.html").read_text()
    assert "Describe the video in detail." in page and "What shape moves across the frame?" in page
    assert "D (contradiction)" in page
    assert "A 3 B 1 C 1 D 1" in (out / "report" / "index.html").read_text()


def test_the_qa_file_and_the_selected_videos_from_a_local_hub(synth: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with FakeHubServer({"VidCapBench/VidCapBench": {"main": synth}}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        dataset = load_vidcapbench(DataConfig(benchmark="vidcapbench", dataset="hf", hf_cache_dir=str(tmp_path), limit=2),
                                   VidcapbenchConfig())
        assert dataset.source == f"hf:VidCapBench/VidCapBench@{hub.commit('VidCapBench/VidCapBench')}"
        assert [s.sample_key for s in dataset] == ["video_main_0.mp4", "Tarsier_1.mp4"]
        assert all(Path(s.videos[0].path).is_file() for s in dataset)
        fetched = sorted(r.path.rsplit("/", 1)[-1] for r in hub.requests if r.path.endswith(".mp4") and r.method == "GET")
        assert "videos_qa_2.mp4" not in fetched
