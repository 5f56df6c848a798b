"""docs/serve.md stays true: its curl commands and its Python client run as written against a server, and
its limits table names every ``serve`` setting with its default."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from serve_helpers import calibration_toml, wait_finished

from viddiff.config import ServeConfig

SERVE_DOC = Path(__file__).resolve().parents[2] / "docs" / "serve.md"


def bash_block(start: str, end: str) -> str:
    """The one bash block of docs/serve.md between the headings ``start`` and ``end``."""
    text = SERVE_DOC.read_text()
    section = text[text.index(start):text.index(end)]
    (block,) = re.findall(r"```bash\n(.*?)```", section, re.S)
    return block


def curl_block() -> str:
    return bash_block("### With curl", "### From Python")


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_curl_examples_run_as_written(served, clips, tmp_path):
    key = served.new_key("docs-curl")
    shutil.copy(clips["a"], tmp_path / "a.mp4")
    shutil.copy(clips["b"], tmp_path / "b.mp4")
    env = {"PATH": "/usr/bin:/bin", "VIDDIFF_URL": served.url, "VIDDIFF_KEY": key}
    env["PATH"] = f"{Path(shutil.which('python3') or '/usr/bin/python3').parent}:{env['PATH']}"
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", curl_block()], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr + done.stdout
    out = done.stdout
    kinds = re.findall(r"^event: (\w+)$", out, re.M)
    assert kinds == ["proposal", "segmentation", "verdict", "verdict", "result"]
    assert '"status":"done"' in out
    assert "the squat is deeper" in (tmp_path / "report.html").read_text()
    with served.client(key) as client:
        (left,) = client.get("/v1/comparisons").json()["comparisons"]  # the first was deleted
        assert left["mode"] == "open"
        assert wait_finished(client, left["id"])["status"] == "done"


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_two_view_curl_example_runs_as_written(served, clips, tmp_path):
    key = served.new_key("docs-two-views")
    for name, clip in (("a_front.mp4", "a"), ("a_side.mp4", "a"), ("b_front.mp4", "b"), ("b_side.mp4", "b")):
        shutil.copy(clips[clip], tmp_path / name)
    calibration_toml(tmp_path / "setup.toml")
    env = {"PATH": f"{Path(shutil.which('python3') or '/usr/bin/python3').parent}:/usr/bin:/bin",
           "VIDDIFF_URL": served.url, "VIDDIFF_KEY": key}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", bash_block("### Two views per side", "### Events")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr + done.stdout
    with served.client(key) as client:
        job = wait_finished(client, json.loads(done.stdout.splitlines()[-1])["id"])
    assert job["status"] == "done", job["error"]


def test_the_python_client_runs_as_written(served, clips, docs_example, capsys):
    client = docs_example("serve_client")
    done = client.compare(served.url, served.new_key("docs-python"), clips["a"], clips["b"], "barbell back squat",
                          ["the squat is deeper", "the stance is wider"])
    assert done["status"] == "done"
    printed = capsys.readouterr().out.splitlines()
    assert sorted(printed) == sorted(f"{d['description']}: {d['prediction']}" for d in done["result"]["differences"])


def test_the_limits_table_names_every_serve_setting_and_its_default():
    text = SERVE_DOC.read_text()
    tables = text[text.index("## Limits"):text.index("## Jobs that survive")] + text[text.index("## Webhooks"):]
    rows = dict(re.findall(r"^\| `serve\.(\w+)` \| ([^|]+) \|", tables, re.M))
    assert set(rows) == set(ServeConfig.model_fields)
    defaults = ServeConfig()
    for name, shown in rows.items():
        value = getattr(defaults, name)
        if value is None or value == []:
            assert shown.strip() == "none", (name, shown, value)
            continue
        numbers = [float(n) for n in re.findall(r"[\d.]+", shown)]
        product = 1.0
        for n in numbers:
            product *= n
        assert value in (product, product * 2**20), (name, shown, value)
