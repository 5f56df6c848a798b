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
    key, secret, report = done.stdout.splitlines()
    assert key.startswith("vdk_") and secret.startswith("whsec_")
    assert json.loads(report) == {"code": 0, "loaded": []}


def test_a_key_gets_the_scopes_asked_for(tmp_path, capsys):
    from viddiff.cli import main

    assert main(["serve", "keys", "create", "scraper", "--scope", "metrics", "--data-dir", str(tmp_path)]) == 0
    assert main(["serve", "keys", "create", "both", "--scope", "metrics", "--scope", "app",
                 "--data-dir", str(tmp_path)]) == 0
    assert main(["serve", "keys", "create", "plain", "--data-dir", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["serve", "keys", "list", "--data-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "scraper\tactive\tmetrics", "both\tactive\tapp,metrics", "plain\tactive\tapp",
    ]


def test_keys_of_a_store_made_before_scopes_are_app_keys(tmp_path):
    import sqlite3

    from viddiff.serve.jobs import JobStore
    from viddiff.serve.keys import key_hash

    path = tmp_path / "serve.sqlite"
    with sqlite3.connect(path) as old:
        old.execute("CREATE TABLE keys (name TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, created_at REAL NOT NULL,"
                    " revoked_at REAL)")
        old.execute("INSERT INTO keys VALUES ('old-app', ?, 1.0, NULL)", (key_hash("vdk_old"),))
    old.close()
    store = JobStore(path)
    try:
        row = store.active_key(key_hash("vdk_old"))
        assert (row.name, row.scopes) == ("old-app", ("app",))
    finally:
        store.close()
