"""docs/extending.md: the benchmark, method and segmenter examples are the files tests import and run.

- ``docs/examples/toy_benchmark.py``, installed from outside the package (an entry point in a dist-info
  directory on PYTHONPATH, as ``pip install`` of a plug-in would leave it), writes its fixture, is run by
  VidDiff and is scored end to end through ``viddiff eval``;
- ``docs/examples/toy_method.py`` runs through ``run_benchmark`` (resume included) and ``viddiff audit``;
- ``docs/examples/toy_segmenter.py`` is selected by ``localizer.method`` (Python, and the CLI through an
  entry point) and embeds half the frames;
- the page shows every example file (these and the backend ones) as it is.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from viddiff.api import VidDiff
from viddiff.config import DataConfig, load_config
from viddiff.data.viddiffbench import load_dataset
from viddiff.runs.pipeline import run_benchmark

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "extending.md"
EXAMPLES = ROOT / "docs" / "examples"  # also what conftest's docs_example imports from


@pytest.mark.parametrize("name", ["toy_benchmark", "toy_method", "toy_segmenter", "toy_embedder", "function_chat"])
def test_the_doc_shows_each_example_file_whole(name: str) -> None:
    shown = re.search(rf"```python\n# docs/examples/{name}.py\n(.*?)```", DOC.read_text(), re.S)
    assert shown is not None, f"{DOC.name} does not show docs/examples/{name}.py"
    assert shown.group(1) == (EXAMPLES / f"{name}.py").read_text(), f"{DOC.name} shows an outdated copy of {name}.py"


@pytest.fixture
def installed_plugins(tmp_path: Path) -> dict[str, str]:
    """The environment of a process in which the examples are an installed plug-in package."""
    info = tmp_path / "site" / "viddiff_toys-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: viddiff-toys\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[viddiff.benchmarks]\ntoy = toy_benchmark:TOY\n\n[viddiff.methods]\nbrightness = toy_method:BrightnessMethod\n"
        "\n[viddiff.segmenters]\nviterbi_half = toy_segmenter:VITERBI_HALF\n"
    )
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(info.parent), str(EXAMPLES), str(ROOT)])}


def viddiff_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "viddiff.cli", *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def test_a_benchmark_from_outside_is_synthesised_run_and_scored_through_the_cli(
    installed_plugins, offline_sets, tmp_path: Path
) -> None:
    env = {**installed_plugins, "OPENAI_API_KEY": "dummy-key"}  # captured before offline_sets set it
    data = tmp_path / "toy"
    assert "toy" in viddiff_cli(env, "eval", "--help").stdout  # --benchmark choices come from the registry
    synth = viddiff_cli(env, "data", "synth", "--benchmark", "toy", "--out", str(data), "--pairs", "4", "--seed", "5")
    assert synth.returncode == 0, synth.stderr
    rows = json.loads((data / "toy.json").read_text())
    assert rows and all(row["answer"] in ("a", "b") for row in rows)

    guesses = {row["id"]: "a" for row in rows}
    (tmp_path / "guesses.json").write_text(json.dumps(guesses))
    scored = viddiff_cli(env, "eval", "--benchmark", "toy", "--dataset", str(data),
                         "--predictions", str(tmp_path / "guesses.json"), "--output", str(tmp_path / "scored"))
    assert scored.returncode == 0, scored.stderr
    metrics = json.loads((tmp_path / "scored" / "metrics.json").read_text())["metrics"]["overall"]
    assert (metrics["n"], metrics["correct"]) == (len(rows), sum(row["answer"] == "a" for row in rows))
    assert (tmp_path / "scored" / "items.csv").read_text().count("\n") == len(rows) + 1

    run = viddiff_cli(env, "-q", "run", "--benchmark", "toy", "--dataset", str(data), "--mode", "closed",
                      "--output", str(tmp_path / "run"), *offline_sets)
    assert run.returncode == 0, run.stderr
    predictions = json.loads((tmp_path / "run" / "predictions.json").read_text())
    assert set(predictions) == set(guesses) and set(predictions.values()) <= {"a", "b", "c", None}
    run_metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())["metrics"]["overall"]
    assert run_metrics["n"] == len(rows)


def test_a_method_from_outside_runs_resumes_and_scores_like_the_built_in_ones(
    docs_example, synth_dir: Path, tmp_path: Path
) -> None:
    brightness = docs_example("toy_method").BrightnessMethod
    cfg = load_config(None, [f"data.dataset={synth_dir}", f"cache.path={tmp_path / 'cache.sqlite'}"])
    out = tmp_path / "run"
    first = run_benchmark(cfg, mode="closed", splits=None, output_dir=out, method=brightness)
    lines = (out / "samples.jsonl").read_text().splitlines()
    assert first.n_failed == 0 and len(lines) == first.n_samples == len(load_dataset(DataConfig(dataset=str(synth_dir))))
    assert {json.loads(line)["method"] for line in lines} == {"brightness"}
    assert json.loads((out / "run.json").read_text())["method"] == "brightness"
    again = run_benchmark(cfg, mode="closed", splits=None, output_dir=out, method=brightness, resume=True)
    assert (out / "samples.jsonl").read_text().splitlines() == lines  # nothing redone
    assert again.metrics == first.metrics


def test_viddiff_audit_puts_a_plugged_in_method_through_the_swap_and_same_video_checks(
    installed_plugins, synth_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "audit"
    proc = viddiff_cli(installed_plugins, "-q", "audit", "--method", "brightness", "--mode", "closed",
                       "--dataset", str(synth_dir), "--output", str(out), "--set", f"cache.path={tmp_path / 'c.sqlite'}")
    assert proc.returncode == 0, proc.stderr
    overall = json.loads((out / "metrics.json").read_text())["metrics"]["overall"]
    # it answers from the videos: every decided answer flips with them, and identical videos get "c"
    assert overall["swap_flip_rate"]["n"] > 0 and overall["swap_flip_rate"]["value"] == 1.0
    assert overall["same_video_decisive_rate"]["value"] == 0.0


def test_a_segmenter_from_outside_is_chosen_by_config_and_embeds_half_the_frames(
    docs_example, synth_dir: Path, offline_sets
) -> None:
    docs_example("toy_segmenter")  # importing it registers "viterbi_half"
    sample = load_dataset(DataConfig(dataset=str(synth_dir)))[2]
    config = load_config(None, [*offline_sets[1::2], "localizer.method=viterbi_half"])

    async def go():
        vd = VidDiff(config)
        try:
            videos = await vd.load_videos(sample)
            return vd, videos, await vd.aprocess(sample, "closed", videos=videos)
        finally:
            await vd.aclose()

    vd, videos, result = asyncio.run(go())
    assert result.predictions and result.segmentations is not None
    for video, seg in zip(videos, result.segmentations):
        assert seg.spans[0][0] == 0 and seg.spans[-1][1] == len(video.frames)  # the spans tile the video
    assert 0 < vd.clip_stats()["image_forward"] <= sum(math.ceil(len(v.frames) / 2) for v in videos)


def test_an_installed_segmenter_is_selected_from_the_command_line(
    installed_plugins, synth_dir: Path, offline_sets, tmp_path: Path
) -> None:
    env = {**installed_plugins, "OPENAI_API_KEY": "dummy-key"}
    assert "viterbi_half" in viddiff_cli(env, "ablate", "--help").stdout  # --variant choices come from the registry
    run = viddiff_cli(env, "-q", "run", "--dataset", str(synth_dir), "--mode", "closed", "--limit", "1",
                      "--output", str(tmp_path / "run"), *offline_sets, "--set", "localizer.method=viterbi_half")
    assert run.returncode == 0, run.stderr
    (line,) = (tmp_path / "run" / "samples.jsonl").read_text().splitlines()
    result = json.loads(line)
    assert result["predictions"] and result["segmentations"]
    assert yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())["localizer"]["method"] == "viterbi_half"
