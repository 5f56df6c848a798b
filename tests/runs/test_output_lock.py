"""One writer per output directory (issue 11, item 4): an OS lock, released on exit and on crash."""

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
from viddiff.errors import OutputError
from viddiff.runs.output_lock import LOCK_FILE, OutputDirLock
from viddiff.schema import SampleResult
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel

ROOT = Path(__file__).resolve().parents[2]
_HOLD = "import sys, time; from viddiff.runs.output_lock import OutputDirLock\nwith OutputDirLock(sys.argv[1]):\n    print('held', flush=True); time.sleep(60)\n"


def _holder(out: Path) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(out)], stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_held_lock_names_its_holder_and_a_crash_releases_it(tmp_path):
    proc = _holder(tmp_path)
    try:
        with pytest.raises(OutputError, match=rf"in use by another viddiff process \(pid {proc.pid}: -c ") as info:
            OutputDirLock(tmp_path).acquire()
        assert "choose another --output" in str(info.value) and "\n" not in str(info.value)
    finally:
        os.kill(proc.pid, signal.SIGKILL)  # a crash: no cleanup code runs
        proc.wait()
    with OutputDirLock(tmp_path):
        assert (tmp_path / LOCK_FILE).read_text().startswith(f"pid {os.getpid()}: ")
    assert (tmp_path / LOCK_FILE).read_text() == ""  # the note is only true while held


@pytest.mark.slow
def test_two_runs_on_one_output_directory(synth_dir, tmp_path, monkeypatch, capsys):
    """The second run stops at once with one line naming the first; the first finishes; each sample is
    written once and the directory can be resumed."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    out = tmp_path / "run"
    with FakeOpenAIServer(ScriptedModel(), latency_s=0.1) as server:
        sets = [x for item in offline_overrides(server.base_url, str(tmp_path / "c.sqlite")) for x in ("--set", item)]
        args = ["-q", "run", "--dataset", str(synth_dir), "--mode", "closed", "--output", str(out), *sets]
        first = subprocess.Popen(
            [sys.executable, "-m", "viddiff.cli", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        deadline = time.time() + 60
        while not (out / LOCK_FILE).exists() or not (out / LOCK_FILE).read_text():
            assert time.time() < deadline and first.poll() is None
            time.sleep(0.02)
        code = main(args)
        first_still_running = first.poll() is None  # the second run did not wait for the first
        err = capsys.readouterr().err
        assert first.wait(timeout=120) == 0, first.stderr.read()
    assert code == 2 and "Traceback" not in err
    [line] = [x for x in err.splitlines() if x.startswith("viddiff:")]
    assert f"is in use by another viddiff process (pid {first.pid}: viddiff -q run --dataset" in line
    assert first_still_running
    keys = [SampleResult.model_validate_json(x).sample_key for x in (out / "samples.jsonl").read_bytes().splitlines()]
    assert len(keys) == len(set(keys)) == 3
    assert len(json.loads((out / "predictions.json").read_text())) == 3
    assert main([*args, "--resume"]) == 0
