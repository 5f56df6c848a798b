"""The log of a real ``viddiff serve --log-format json`` process: one access line per request, job lifecycle
lines with durations, and never a key (neither a valid one nor a wrong one a client sent)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import httpx
import pytest
from serve_helpers import MODEL_KEY_ENV, read_events, wait_until

from viddiff.testing import offline_overrides
from viddiff.testing.service import create_key, free_port

WRONG_KEY = "vdk_this-key-was-never-made-0123456789abcdefghijklmnop"


def _answers(url: str) -> bool:
    try:
        return httpx.get(url + "/healthz", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


@pytest.mark.slow
def test_the_json_log_has_access_and_lifecycle_lines_and_no_key(tmp_path, serve_model, clips):
    key = create_key(tmp_path, "logged-app")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    args = [sys.executable, "-m", "viddiff.cli", "serve", "--data-dir", str(tmp_path), "--port", str(port),
            "--log-format", "json"]
    for item in [*offline_overrides(serve_model.base_url, str(tmp_path / "cache.sqlite")),
                 f"endpoints.default.api_key_env={MODEL_KEY_ENV}", "serve.workers=1"]:
        args += ["--set", item]
    log_path = tmp_path / "server.log"
    with log_path.open("w") as log_file:
        server = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=log_file, text=True,
                                  env={**os.environ, MODEL_KEY_ENV: "dummy-model-key"})
        try:
            wait_until(lambda: server.poll() is not None or _answers(url), 180, "the server process to start")
            assert server.poll() is None, log_path.read_text()
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as client:
                created = client.post(
                    "/v1/comparisons", headers={"X-Request-ID": "client-req-1"},
                    data={"action": "a square crossing the frame", "differences": ["the square moves faster"]},
                    files={"video_a": ("a.mp4", clips["a"].read_bytes()), "video_b": ("b.mp4", clips["b"].read_bytes())},
                )
                assert created.status_code == 202, created.text
                assert created.headers["x-request-id"] == "client-req-1"
                job_id = created.json()["id"]
                assert [kind for _, kind, _ in read_events(client, job_id)][-1] == "result"
            wrong = httpx.get(url + "/v1/comparisons", headers={"Authorization": f"Bearer {WRONG_KEY}"})
            assert wrong.status_code == 401
        finally:
            server.send_signal(signal.SIGINT)
            server.wait(60)
    text = log_path.read_text()
    assert key not in text and WRONG_KEY not in text and key[4:20] not in text
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]  # every line is JSON
    access = [line for line in lines if line["logger"] == "viddiff.serve.access"]
    (post,) = [a for a in access if a["method"] == "POST"]
    assert post["path"] == "/v1/comparisons" and post["status"] == 202 and post["key"] == "logged-app"
    assert post["job_id"] == job_id and post["request_id"] == "client-req-1" and post["duration_ms"] > 0
    (stream,) = [a for a in access if a["path"].endswith("/events")]
    assert stream["status"] == 200 and stream["job_id"] == job_id and stream["key"] == "logged-app"
    (refused,) = [a for a in access if a["status"] == 401]
    assert refused["key"] is None and refused["path"] == "/v1/comparisons" and len(refused["request_id"]) >= 16
    jobs = [line for line in lines if line["logger"] == "viddiff.serve.jobs"]
    assert [line["event"] for line in jobs] == ["job_queued", "job_started", "job_done"]
    assert all(line["job_id"] == job_id and line["key"] == "logged-app" for line in jobs)
    done = jobs[-1]
    assert 0 < done["run_s"] <= done["total_s"]
    assert f"job {job_id} done (key logged-app)" in done["message"]
