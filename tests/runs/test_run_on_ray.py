"""``viddiff run --executor ray`` on a local Ray cluster (2 CPUs, no GPU) equals a local run.

One cluster for the whole module (started in a fixture: a few seconds); the runs are the real CLI, the
real fake model server over HTTP, random-weight tiny CLIP on two actors.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from viddiff.cli import main
from viddiff.store import ResultsStore

ray = pytest.importorskip("ray")

ACTORS = ["--executor", "ray", "--set", "ray.actors=2", "--set", "ray.num_cpus=1"]


@pytest.fixture(scope="module")
def cluster():
    # Ray kills workers when the whole machine's memory is 95% used, by whatever; a shared CI machine gets
    # there through other jobs. These actors hold a few MB: the monitor is off for this cluster.
    with pytest.MonkeyPatch.context() as env:
        env.setenv("RAY_memory_monitor_refresh_ms", "0")
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _run(dataset: Path, out: Path, offline_sets: list[str], cache: Path, *extra: str) -> int:
    return main([
        "-q", "run", "--dataset", str(dataset), "--mode", "closed", "--output", str(out), *offline_sets,
        "--set", f"cache.path={cache}", *extra,
    ])


def _samples(out: Path) -> dict[str, tuple]:
    """What a sample's answer consists of, without its timings and usage."""
    return {
        key: (r.proposal, r.segmentations, r.keyframes, [(p.key, p.prediction, p.rationale) for p in r.predictions])
        for key, r in ResultsStore(out).load().items()
    }


def _predictions(out: Path) -> list:
    return json.loads((out / "predictions.json").read_text())


@pytest.mark.slow
def test_ray_run_equals_a_local_run_and_resumes(cluster, synth_dir, tmp_path, offline_sets) -> None:
    local, spread = tmp_path / "local", tmp_path / "ray"
    assert _run(synth_dir, local, offline_sets, tmp_path / "local.sqlite") == 0
    assert _run(synth_dir, spread, offline_sets, tmp_path / "ray.sqlite", *ACTORS) == 0
    assert _predictions(spread) == _predictions(local)
    assert _samples(spread) == _samples(local)
    usage = json.loads((spread / "usage.json").read_text())
    assert usage["clip"]["image_forward"] > 0  # the actors' CLIP work, added up on the driver
    assert usage["by_stage"]["differencer"]["calls"] > 0  # and their model calls

    # A run killed after its first sample, resumed on Ray: the driver keeps what is done and writes the rest.
    lines = (spread / "samples.jsonl").read_bytes().splitlines(keepends=True)
    (spread / "samples.jsonl").write_bytes(lines[0])
    assert _run(synth_dir, spread, offline_sets, tmp_path / "fresh.sqlite", "--resume", *ACTORS) == 0
    assert _predictions(spread) == _predictions(local)
    assert len((spread / "samples.jsonl").read_bytes().splitlines()) == len(lines)


@pytest.mark.slow
def test_a_failing_sample_is_recorded_as_in_a_local_run(cluster, copy_dataset, tmp_path, offline_sets) -> None:
    """An unreadable video fails its sample at the video stage with the reader's own message (what a local run
    records: tests/runs/test_pipeline.py), and the other samples are answered."""
    dataset = copy_dataset()
    rows = [json.loads(line) for line in (dataset / "dataset.jsonl").read_text().splitlines()]
    broken = Path(json.loads(rows[-1]["videos"])[0]["path"])
    broken.unlink()
    broken.write_bytes(b"not a video at all")  # a hard link to the shared copy: replace, don't overwrite
    out = tmp_path / "ray"
    assert _run(dataset, out, offline_sets, tmp_path / "ray.sqlite", *ACTORS) == 1
    [error] = json.loads((out / "errors.json").read_text())
    assert (error["sample_key"], error["kind"], error["stage"]) == (rows[-1]["sample_key"], "video", "video")
    assert error["error"].startswith(f"{broken}: not a readable video")
    assert len(ResultsStore(out).load()) == len(rows) - 1


def test_without_ray_the_executor_is_one_clear_error(synth_dir, tmp_path, offline_sets) -> None:
    """A Python where ``import ray`` fails (as without the extra): one line naming the install command."""
    out = tmp_path / "run"
    code = (
        "import sys; sys.modules['ray'] = None\n"  # import ray -> ImportError, as when it is not installed
        "from viddiff.cli import main\n"
        f"sys.exit(main({['run', '--dataset', str(synth_dir), '--mode', 'closed', '--output', str(out), *offline_sets, '--executor', 'ray']!r}))\n"
    )
    env = {**os.environ, "OPENAI_API_KEY": "dummy"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode != 0
    assert 'pip install "viddiff[ray]"' in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (out / "samples.jsonl").exists()
