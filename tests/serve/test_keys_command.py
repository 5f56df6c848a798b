"""``viddiff serve keys`` inserts one row: it must not pay for the models, the Python API or the web framework."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("torch", "open_clip", "openai", "av", "fastapi", "uvicorn", "viddiff.api", "viddiff.serve.models")

PROGRAM = """
import json, sys
from viddiff.cli import main
code = main(["serve", "keys", "create", "light", "--data-dir", sys.argv[1]])
print(json.dumps({"code": code, "loaded": [m for m in sys.argv[2:] if m in sys.modules]}))
"""


def test_keys_create_imports_nothing_heavy(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(tmp_path), *HEAVY], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    key, report = done.stdout.splitlines()
    assert key.startswith("vdk_")
    assert json.loads(report) == {"code": 0, "loaded": []}
