"""``python -m viddiff.testing.serve``, the offline demo's scripted model server (issue 22): a taken port is one
clear line and a non-zero exit, and ``--detach`` returns only once the server is serving (or has failed)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.request
from typing import Iterator

import pytest

SERVE = [sys.executable, "-m", "viddiff.testing.serve"]


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port some other program is listening on."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        yield other.getsockname()[1]


def _taken_message(port: int) -> str:
    return (
        f"viddiff.testing.serve: cannot serve on 127.0.0.1:{port}: the port is already in use (by another "
        "program); choose another with --port N, or --port 0 for a free one"
    )


@pytest.mark.parametrize("detach", [False, True], ids=["foreground", "detach"])
def test_a_taken_port_is_one_line_and_exit_1(taken_port: int, detach: bool) -> None:
    proc = subprocess.run(
        [*SERVE, "--port", str(taken_port), *(["--detach"] if detach else [])],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip() == _taken_message(taken_port) and "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_a_port_taken_by_a_scripted_server_says_so() -> None:
    """A second demo server on the first one's port: the first is viddiff's own, not "another program"."""
    first = subprocess.run([*SERVE, "--port", "0", "--detach"], capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    url, pid = re.search(r"at (http://\S+) \(pid (\d+);", first.stdout).groups()
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    try:
        second = subprocess.run([*SERVE, "--port", str(port)], capture_output=True, text=True, timeout=60)
    finally:
        os.kill(int(pid), signal.SIGTERM)
    assert second.returncode == 1
    assert second.stderr.strip() == (
        f"viddiff.testing.serve: cannot serve on 127.0.0.1:{port}: the port is already in use, by a scripted model "
        f"server started earlier (it answers at {url}: use that one); choose another with --port N, or --port 0 "
        "for a free one"
    )


def test_detach_on_a_free_port_prints_its_url_and_serves_until_killed() -> None:
    proc = subprocess.run([*SERVE, "--port", "0", "--detach"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    match = re.fullmatch(
        r"scripted model serving at (http://127\.0\.0\.1:(\d+)/v1) \(pid (\d+); stop it with: kill \3\)\n", proc.stdout
    )
    assert match, proc.stdout
    url, port, pid = match.group(1), int(match.group(2)), int(match.group(3))
    try:
        assert port != 0
        with urllib.request.urlopen(f"{url}/models", timeout=10) as answer:  # serving when the command returned
            assert json.loads(answer.read())["object"] == "list"
    finally:
        os.kill(pid, signal.SIGTERM)
