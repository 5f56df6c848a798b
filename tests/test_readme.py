"""The README's offline Python API example runs as written (only its port and demo folder are swapped for
free ones), against the scripted server it starts, over real HTTP."""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
DEMO_DIR, PORT = "/tmp/viddiff-demo", "8011"


def offline_example() -> tuple[list[str], str]:
    """The shell lines and the Python code of the README's local-server example."""
    text = README.read_text()
    section = text[text.index("This runs as written"):text.index("With a real model")]
    (shell,) = re.findall(r"```bash\n(.*?)```", section, re.S)
    (python,) = re.findall(r"```python\n(.*?)```", section, re.S)
    commands = [line.split("#")[0].strip() for line in shell.splitlines() if line.split("#")[0].strip()]
    return commands, python


def free_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


@pytest.mark.slow
def test_readme_offline_example_runs_as_written(tmp_path: Path) -> None:
    commands, python = offline_example()
    assert len(commands) == 3 and DEMO_DIR in python and PORT in python
    demo, port = str(tmp_path / "demo"), free_port()
    env = {**os.environ, "HOME": str(tmp_path)}  # the default cache goes to a fresh ~/.cache
    synth, serve, export = (shlex.split(c.replace(DEMO_DIR, demo).replace(PORT, port)) for c in commands)
    assert synth[0] == "viddiff" and serve[:3] == ["python", "-m", "viddiff.testing.serve"] and serve[-1] == "&"
    assert export[0] == "export"
    key, value = export[1].split("=")
    env[key] = value
    subprocess.run([sys.executable, "-m", "viddiff.cli", *synth[1:]], check=True, capture_output=True, env=env, timeout=120)
    server = subprocess.Popen([sys.executable, *serve[1:-1]], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert "serving at" in server.stdout.readline()
        proc = subprocess.run(
            [sys.executable, "-c", python.replace(DEMO_DIR, demo).replace(PORT, port)],
            capture_output=True, text=True, env=env, timeout=300,
        )
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    assert re.fullmatch(r"the squat is deeper [abc] \[[\d., ]+\] \[[\d., ]+\]", line), line
