"""The user's path on a fresh machine, per published layout, in fresh processes pointed at the Hub by ``HF_ENDPOINT``.

``huggingface_hub`` reads ``HF_ENDPOINT`` and ``HF_HUB_CACHE`` when it is
imported, so these run the real ``viddiff`` command in subprocesses with the
environment a user would set: ``viddiff eval --dataset hf``, ``viddiff data
download`` and ``viddiff data check``. A killed download is resumed by a
second process with an HTTP range request.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from viddiff.data.download import STAGING_DIR
from viddiff.testing.fake_hf import FakeHubServer
from viddiff.testing.hub_layouts import FIRST_REVISION, FIXTURE, write_layout

ROOT = Path(__file__).resolve().parents[2]


def viddiff(env: dict[str, str], *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **env, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "viddiff.cli", *args], env=full_env, capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.slow
def test_eval_download_check_in_fresh_processes(fake_hub: FakeHubServer, hub_env: dict[str, str], tmp_path: Path) -> None:
    """The first public revision (the hardest layout); every layout is also run in-process through real HTTP."""
    repo = FIRST_REVISION
    predictions = tmp_path / "predictions.json"
    predictions.write_text(json.dumps([{k: v for k, v in s.labels.items() if v in ("a", "b")} for s in FIXTURE]))
    sets = ["--set", f"data.hf_repo={repo}"]

    scored = viddiff(hub_env, "-q", "eval", "--predictions", str(predictions), "--mode", "closed", "--dataset", "hf",
                     *sets, "--output", str(tmp_path / "eval"))
    assert scored.returncode == 0, scored.stderr
    metrics = json.loads((tmp_path / "eval" / "metrics.json").read_text())
    counted = sum(v in ("a", "b") for s in FIXTURE for v in s.labels.values())
    assert metrics["counts"]["counted"] == counted and metrics["metrics"]["overall"]["accuracy"] == 1.0
    assert metrics["dataset"]["source"] == f"hf:{repo}@{fake_hub.commit(repo)}"
    assert Path(hub_env["HF_HUB_CACHE"]).is_dir()  # the cache the environment names, not the user's

    fetched = viddiff(hub_env, "data", "download", "--dataset", "hf", *sets)
    assert fetched.returncode == 0, fetched.stderr
    assert "fitness: unpacked 6 files" in fetched.stdout and "surgery: unpacked 2 files" in fetched.stdout

    checked = viddiff(hub_env, "data", "check", "--dataset", "hf", *sets, "--split", "easy")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "all 4 videos readable" in checked.stdout


@pytest.fixture
def big_archive_repo(tmp_path: Path) -> Path:
    """A layout whose fitness archive is larger than huggingface_hub's 10 MB write chunk, so a kill leaves bytes."""
    repo = write_layout("jmhb/VidDiffBench", tmp_path / "big")
    with zipfile.ZipFile(repo / "data" / "videos_fitness.zip", "a", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr("videos/fitness/padding.bin", os.urandom(24 * 1024 * 1024))
    return repo


@pytest.mark.slow
def test_a_killed_download_resumes_in_the_next_process(
    big_archive_repo: Path, hub_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = "data/videos_fitness.zip"
    size = (big_archive_repo / archive).stat().st_size
    with FakeHubServer({"org/Big": {"main": big_archive_repo}}) as hub:
        env = {**hub_env, "HF_ENDPOINT": hub.url}
        root = Path(hub_env["XDG_DATA_HOME"]) / "viddiff" / "videos" / "org--Big"
        part = root / STAGING_DIR / "videos_fitness.zip.part"
        hub.faults.throttle_bytes_per_s = 6 * 1024 * 1024
        args = [sys.executable, "-m", "viddiff.cli", "data", "download", "--set", "data.hf_repo=org/Big",
                "--domain", "fitness"]
        child = subprocess.Popen(args, env={**os.environ, **env, "PYTHONPATH": str(ROOT)},
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while not (part.exists() and part.stat().st_size > 0) and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        kept = part.stat().st_size
        assert 0 < kept < size, "the download should have been killed part-way"

        hub.faults.throttle_bytes_per_s = None
        resumed = viddiff(env, "data", "download", "--set", "data.hf_repo=org/Big", "--domain", "fitness")
        assert resumed.returncode == 0, resumed.stderr
        ranges = [r.range for r in hub.file_requests(archive)]
    assert ranges == [None, f"bytes={kept}-"]
    assert (root / "videos" / "fitness" / "padding.bin").stat().st_size == 24 * 1024 * 1024
    assert all((root / s.video_path(w)).is_file() for s in FIXTURE if s.domain == "fitness" for w in "ab")


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens there once the socket is closed


@pytest.mark.parametrize(
    "endpoint, reason",
    [
        ("http://viddiff-no-such-hub.invalid", "its host name could not be resolved ([Errno "),
        (f"http://127.0.0.1:{_closed_port()}", "the connection was refused ([Errno 111] Connection refused)"),
    ],
    ids=["unresolvable", "refused"],
)
def test_offline_run_says_plainly_that_the_hub_is_unreachable(endpoint: str, reason: str, tmp_path: Path) -> None:
    """Issue 22: `viddiff run --split easy --mode closed` with no way to the Hub printed the library's message
    cut off mid-word; it says which hub could not be reached, why, and how to use a local copy, in one line."""
    from viddiff.config import DataConfig

    repo = DataConfig().hf_repo
    env = {"HF_ENDPOINT": endpoint, "HF_HUB_CACHE": str(tmp_path / "hf"), "XDG_DATA_HOME": str(tmp_path / "xdg"),
           "OPENAI_API_KEY": "dummy"}
    started = time.monotonic()
    proc = viddiff(env, "run", "--split", "easy", "--mode", "closed", "--output", str(tmp_path / "run"))
    assert proc.returncode == 2
    assert time.monotonic() - started < 120  # no minutes of retries (a loose bound: the point is the message)
    (line,) = proc.stderr.splitlines()
    assert line.startswith(
        f"viddiff: error: could not reach the Hugging Face hub at {endpoint} for dataset {repo!r} (revision main): "
        f"{reason}"
    ), line
    assert line.endswith(
        f"; to work offline, download the dataset where there is a network (hf download {repo} --repo-type dataset "
        "--local-dir DIR) and pass --dataset DIR, or set HF_HUB_OFFLINE=1 to use the copy already in the Hugging "
        "Face cache"
    ), line
    assert "LocalEntryNotFoundError" not in line and "..." not in line
