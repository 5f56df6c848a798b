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


def test_a_run_on_the_demo_data_says_nothing_about_strides(tmp_path, offline_sets, capsys):
    """Issue 42: `viddiff data synth` then `viddiff run` warned 'target fps 8 is not an integer divisor of 12 fps'
    in a new user's first minute; the synthetic clips are now at whole multiples of the inference rates."""
    data = tmp_path / "synth"
    assert main(["-q", "data", "synth", "--out", str(data), "--pairs", "2"]) == 0
    capsys.readouterr()
    assert _run(data, tmp_path / "run", offline_sets) == 0
    printed = capsys.readouterr()
    assert "Closed accuracy" in printed.out
    assert "integer divisor" not in printed.err + printed.out and "stride" not in printed.err


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
    # "c" needs the abc options (the released differencer, and the default, must pick a or b)
    assert _run(synth_dir, tmp_path / "same", offline_sets, "--same-video", "--set", "differencer.options=abc") == 0
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


def _write_dataset(directory: Path, rows: list[dict]) -> None:
    directory.mkdir(exist_ok=True)
    (directory / "dataset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def _absolute_rows(synth_dir: Path) -> list[dict]:
    """The synthetic rows with absolute video paths, so they can be copied into another directory."""
    rows = [json.loads(line) for line in (synth_dir / "dataset.jsonl").read_text().splitlines()]
    for row in rows:
        row["videos"] = json.dumps([{**v, "path": str(synth_dir / v["path"])} for v in json.loads(row["videos"])])
    return rows


def test_missing_video_fails_that_sample_only(synth_dir, tmp_path, offline_sets):
    good = _absolute_rows(synth_dir)
    broken_rows = json.loads(json.dumps(good))
    videos = json.loads(broken_rows[0]["videos"])
    videos[0]["path"] = str(tmp_path / "nowhere.mp4")
    broken_rows[0]["videos"] = json.dumps(videos)
    data_dir, out = tmp_path / "data", tmp_path / "run"
    _write_dataset(data_dir, broken_rows)
    trusted = ["--set", "data.allow_paths_outside_root=true"]  # the rows point at videos outside data_dir
    assert _run(data_dir, out, offline_sets, *trusted) == 1
    errors = json.loads((out / "errors.json").read_text())
    assert [e["sample_key"] for e in errors] == [good[0]["sample_key"]]
    assert "nowhere.mp4" in errors[0]["error"]
    assert len(ResultsStore(out).load()) == len(good) - 1
    # A failed sample's differences are predicted null (counted wrong), not left out.
    labels = json.loads(good[0]["differences_gt"])
    assert _predictions(out)[0] == {k: None for k, v in labels.items() if v in ("a", "b")}
    # Fix the video and resume: only the failed sample is redone, and the stale error report goes away.
    _write_dataset(data_dir, good)
    assert _run(data_dir, out, offline_sets, "--resume", *trusted) == 0
    assert not (out / "errors.json").exists()
    assert len(ResultsStore(out).load()) == len(good) and _predictions(out)[0]


@pytest.mark.slow
def test_killed_run_resumes_to_identical_predictions(synth_dir, tmp_path, monkeypatch):
    """SIGKILL a real `viddiff run` process at random points; --resume must finish with the uninterrupted result.

    The three kill-and-resume cycles are independent (own output, own cache), so they run side by side while
    the uninterrupted reference runs in this process (a run's result does not depend on its process)."""
    import random
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    with FakeOpenAIServer(ScriptedModel(), latency_s=0.15) as server:

        def sets(cache: Path) -> list[str]:
            return [x for item in offline_overrides(server.base_url, str(cache)) for x in ("--set", item)]

        def args(out: Path, cache: Path, *extra: str) -> list[str]:
            return ["-q", "run", "--dataset", str(synth_dir), "--mode", "closed", "--output", str(out),
                    "--set", "run.max_samples_in_flight=1", *sets(cache), *extra]

        def finished(samples: Path) -> int:
            return samples.read_bytes().count(b"\n") if samples.exists() else 0

        def kill_and_resume(seed: int) -> tuple[Path, bool]:
            """One cycle: kill at the seed's random point, resume; its output and whether the kill was mid-run."""
            out, cache = tmp_path / f"killed-{seed}", tmp_path / f"k{seed}.sqlite"
            command = [sys.executable, "-m", "viddiff.cli", *args(out, cache)]
            samples = out / "samples.jsonl"
            rng = random.Random(seed)
            # A random point: after 0, 1 or 2 finished samples, plus a random part of the next one.
            wait_for, extra_s = rng.randrange(3), rng.uniform(0.0, 0.6)
            proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.time() + 120
            while time.time() < deadline and not ((out / "run.json").exists() and finished(samples) >= wait_for):
                time.sleep(0.02)
            time.sleep(extra_s)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            mid_run = finished(samples) < 3
            resume = ["--resume"] if samples.exists() else []
            subprocess.run([*command, *resume], check=True, capture_output=True, timeout=300)
            return out, mid_run

        with ThreadPoolExecutor(max_workers=3) as pool:
            cycles = [pool.submit(kill_and_resume, seed) for seed in range(3)]
            reference = tmp_path / "reference"
            assert main(args(reference, tmp_path / "ref.sqlite")) == 0
            outcomes = [cycle.result() for cycle in cycles]
    killed_mid_run = 0
    for seed, (out, mid_run) in enumerate(outcomes):
        killed_mid_run += mid_run
        assert _predictions(out) == _predictions(reference), f"seed {seed}"
        keys = [SampleResult.model_validate_json(l).sample_key for l in (out / "samples.jsonl").read_bytes().splitlines()]
        assert len(keys) == len(set(keys)) == 3, f"seed {seed}"
    assert killed_mid_run >= 1, "at least one kill must land between finished samples"


def _stage_requests(server) -> int:
    return sum("Break the action into its sub-action stages" in r.text for r in server.requests)


def test_reuse_per_action_proposes_stages_once_per_action(synth_dir, tmp_path, offline_sets, scripted_server):
    # No cache, so only the reuse itself can save the calls.
    sets = [*offline_sets, "--set", "cache.enabled=false"]
    before = _stage_requests(scripted_server)
    assert _run(synth_dir, tmp_path / "per-sample", sets, "--split", "easy") == 0
    per_sample = _stage_requests(scripted_server) - before
    before = _stage_requests(scripted_server)
    assert _run(synth_dir, tmp_path / "reuse", sets, "--split", "easy", "--set", "proposer.reuse_per_action=true") == 0
    reused = _stage_requests(scripted_server) - before
    n_easy = len(_predictions(tmp_path / "reuse"))
    assert n_easy >= 2 and per_sample == n_easy and reused == 1
    results = ResultsStore(tmp_path / "reuse").load().values()
    assert len({tuple(s.name for s in r.proposal.stages) for r in results}) == 1


def test_a_run_on_stand_ins_says_so_under_its_numbers(synth_dir, tmp_path, offline_sets, scripted_server, capsys):
    """Issue 22: the console printed accuracy, p-values and a cost for the scripted server and random CLIP with no
    word that they are stand-ins; it now says so, as the HTML report's banner does, and so does report.md."""
    out = tmp_path / "run"
    assert _run(synth_dir, out, offline_sets) == 0
    printed = capsys.readouterr().out
    notice = printed[printed.index("NOTE: stand-ins"):]
    assert notice.splitlines()[0] == (
        "NOTE: stand-ins, not models, produced these results: the scores, p-values and estimated cost of this run "
        "say nothing about the method"
    )
    assert f"proposer (gpt-4o-mini-2024-07-18), differencer (gpt-4o-2024-05-13): answered by viddiff's scripted " \
           f"stand-in server at {scripted_server.base_url}" in notice
    assert "CLIP (viddiff-test-tiny-clip): random weights" in notice
    assert printed.index("Closed accuracy") < printed.index("NOTE: stand-ins")
    assert "NOTE: stand-ins, not models, produced these results" in (out / "report.md").read_text()


def test_compare_on_stand_ins_says_so(synth_dir, tmp_path, offline_sets, capsys):
    """Issue 42: compare's notice spoke of "the scores, p-values and estimated cost above", which compare never
    prints; it names what compare does print (and --describe, on stderr, its description)."""
    from viddiff.cli import main

    video_a = next(a for a in sorted((synth_dir / "videos").glob("*_a.mp4")) if a.with_name(a.name[:-6] + "_b.mp4").is_file())
    args = ["compare", str(video_a), str(video_a.with_name(video_a.name[:-6] + "_b.mp4")), "--action", "squat",
            "--difference", "the squat is deeper", *offline_sets]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "NOTE: stand-ins, not models, produced these results: the verdicts and keyframes above say nothing about " \
        "the method\n" in printed
    assert "p-values" not in printed and "scores" not in printed
    assert main([*args, "--json"]) == 0  # --json stays pure JSON, and says it in its notes
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any(n.startswith("stand-in: proposer (") and "scripted stand-in server" in n for n in notes), notes
    assert "stand-in: CLIP (viddiff-test-tiny-clip): random weights (localizer.clip.pretrained is null and no " \
        "checkpoint): the stage segmentation and the keyframes it picked are arbitrary" in notes
