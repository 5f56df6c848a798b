"""Ready means ready (docs/serve.md#probes): the port opens before the models load, ``/healthz`` says
``starting`` and ``/readyz`` 503 meanwhile, and ``viddiff serve``'s start line comes once the port answers."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time

import httpx
import pytest
from serve_helpers import MODEL_KEY_ENV, LIMITS, serve_config, wait_finished, wait_until

from viddiff.backends.embedders import embedder_factory, register_embedder
from viddiff.testing import offline_overrides
from viddiff.testing.service import ServerThread, create_key

GATE = threading.Event()
"""Holds the embedder's loading (the models' load, as far as the server can tell) until a test opens it."""


def gated_clip(cfg, cache):
    assert GATE.wait(60), "the test never opened the gate"
    return embedder_factory("open_clip")(cfg, cache)


def test_the_port_answers_while_the_models_load_and_readyz_says_when_they_are_loaded(tmp_path, serve_model, clips):
    register_embedder("gated-clip", gated_clip)
    GATE.clear()
    config = serve_config(serve_model, tmp_path, [*LIMITS, "localizer.clip.backend=gated-clip"])
    with ServerThread(tmp_path, config, wait_ready=False) as server:
        health = httpx.get(server.url + "/healthz", timeout=10)
        assert health.status_code == 200 and health.json()["status"] == "starting"
        ready = httpx.get(server.url + "/readyz", timeout=10)
        assert ready.status_code == 503 and ready.json()["status"] == "starting"
        key = create_key(tmp_path, "early")
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=30) as client:
            files = {"video_a": clips["a"].open("rb"), "video_b": clips["b"].open("rb")}
            form = {"action": "a square", "differences": "it is red"}
            created = client.post("/v1/comparisons", files=files, data=form)
            assert created.status_code == 202, created.text  # a job sent meanwhile waits for the models
            time.sleep(0.5)
            assert client.get(f"/v1/comparisons/{created.json()['id']}").json()["status"] == "queued"
            GATE.set()
            wait_until(lambda: httpx.get(server.url + "/readyz", timeout=10).status_code == 200, 60, "/readyz: ready")
            assert httpx.get(server.url + "/healthz", timeout=10).json()["status"] == "ok"
            assert wait_finished(client, created.json()["id"])["status"] == "done"


SLOW_LOADING_SERVE = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from viddiff.backends.embedders import embedder_factory, register_embedder
    from viddiff.cli import main

    def slow_clip(cfg, cache):
        # models that take a while to load: until the test has seen the server answer while they load
        loaded = Path(os.environ["VIDDIFF_TEST_MODELS_LOADED"])
        deadline = time.monotonic() + 120
        while not loaded.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return embedder_factory("open_clip")(cfg, cache)

    register_embedder("slow-clip", slow_clip)
    sys.exit(main(sys.argv[1:]))
""")


@pytest.mark.slow
def test_the_start_line_comes_once_the_port_accepts_requests(tmp_path, serve_model):
    serve_config(serve_model, tmp_path, [])  # sets the model key's variable
    args = [sys.executable, "-c", SLOW_LOADING_SERVE, "serve", "--data-dir", str(tmp_path), "--port", "0"]
    for item in [*offline_overrides(serve_model.base_url, str(tmp_path / "cache.sqlite")),
                 f"endpoints.default.api_key_env={MODEL_KEY_ENV}", "localizer.clip.backend=slow-clip"]:
        args += ["--set", item]
    loaded = tmp_path / "models-may-load"
    server = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "VIDDIFF_TEST_MODELS_LOADED": str(loaded)})
    try:
        line = server.stdout.readline()
        assert line.startswith("viddiff serve: http://127.0.0.1:"), (line, server.poll() and server.stderr.read())
        url = line.split()[2].rstrip("/")
        health = httpx.get(url + "/healthz", timeout=10)  # at once: no "connection refused"
        assert health.json()["status"] == "starting"
        assert httpx.get(url + "/readyz", timeout=10).status_code == 503
        loaded.touch()  # the models' load may now end
        wait_until(lambda: httpx.get(url + "/readyz", timeout=10).status_code == 200, 120, "/readyz to say ready")
    finally:
        server.terminate()
        server.wait(60)


@pytest.mark.slow
def test_models_that_fail_to_load_stop_the_server_with_one_line(tmp_path, serve_model):
    serve_config(serve_model, tmp_path, [])
    args = [sys.executable, "-m", "viddiff.cli", "serve", "--data-dir", str(tmp_path), "--port", "0"]
    for item in [*offline_overrides(serve_model.base_url, str(tmp_path / "cache.sqlite")),
                 f"endpoints.default.api_key_env={MODEL_KEY_ENV}", f"localizer.clip.checkpoint={tmp_path / 'none.pt'}"]:
        args += ["--set", item]
    done = subprocess.run(args, capture_output=True, text=True, timeout=180)
    assert done.returncode != 0
    assert "viddiff serve stopped:" in done.stderr and "Traceback" not in done.stderr, done.stderr
