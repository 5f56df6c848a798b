"""MediaPipe's and TFLite's native start-up lines stay off the console unless ``--debug``: checked in a real
subprocess whose stderr (file descriptor 2, where the C++ libraries write) is captured."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

NATIVE = ("XNNPACK", "W0000", "I0000", "absl::InitializeLog", "inference_feedback_manager")
TWO_PEOPLE = Path(__file__).resolve().parents[1] / "data" / "pose2sim" / "p2s_two_people_cam02.mp4"


def _pose(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    command = [
        sys.executable, "-m", "viddiff.cli", *flags, "pose", str(TWO_PEOPLE), "--out", str(tmp_path / "out"),
        "--fps", "4", "--set", "cache.enabled=false",
    ]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)


def native_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if any(mark in line for mark in NATIVE)]


def test_native_logs_are_silent_unless_debug(tmp_path: Path) -> None:
    quiet = _pose(tmp_path, "-q")
    assert quiet.returncode == 0, quiet.stderr
    assert not native_lines(quiet.stderr), quiet.stderr
    plain = _pose(tmp_path)
    assert plain.returncode == 0 and not native_lines(plain.stderr), plain.stderr
    assert "found in" in plain.stderr and "measured" in plain.stderr  # our own lines still reach the console
    debug = _pose(tmp_path, "--debug")
    assert debug.returncode == 0, debug.stderr
    assert any("XNNPACK" in line for line in native_lines(debug.stderr))  # with --debug they are shown
