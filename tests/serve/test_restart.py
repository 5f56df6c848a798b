"""A server stopped (or killed) with a comparison running and others queued: the next one on the same
--data-dir re-runs the interrupted comparison (its finished model calls come from the cache) and runs the
queued ones."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from typing import Iterator

import httpx
import pytest
from serve_helpers import MODEL_KEY_ENV, Served, read_events, serve_config, wait_until

from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel
from viddiff.testing.service import ServerThread, create_key, free_port


SLOW = "brighter"


class SlowOnOneStatement:
    """The scripted model, taking 3 s to judge a statement holding ``SLOW`` (so its job is caught running)."""

    def __init__(self) -> None:
        self.scripted = ScriptedModel()

    def __call__(self, req: ChatRequest) -> str:
        if req.images and SLOW in req.text:
            time.sleep(3.0)
        return self.scripted(req)


@pytest.fixture(scope="module")
def slow_model() -> Iterator[FakeOpenAIServer]:
    """A model of its own (its request log is this test's alone), 0.1 s a call."""
    with FakeOpenAIServer(SlowOnOneStatement(), latency_s=0.1) as server:
        yield server


def differencer_calls(model: FakeOpenAIServer, statement: str) -> int:
    return sum(1 for r in model.requests if r.images and statement in r.text)


STATEMENTS = {
    "interrupted": ["the square moves faster", f"the square is {SLOW}"],
    "queued-1": ["the square is wider"],
    "queued-2": ["the square is taller"],
}


def submit_and_catch_running(url: str, key: str, clips) -> tuple[dict[str, str], list]:
    """Submit the three comparisons; return once the first has its first verdict (it is then still judging
    the slow statement; the other two are queued behind it, with one worker)."""
    jobs = {}
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as client:
        for name, differences in STATEMENTS.items():
            answer = client.post(
                "/v1/comparisons", data={"action": "a square crossing", "differences": differences},
                files={"video_a": ("a.mp4", clips["a"].read_bytes()), "video_b": ("b.mp4", clips["b"].read_bytes())},
            )
            jobs[name] = answer.json()["id"]
        seen = read_events(client, jobs["interrupted"], stop_after=3)  # proposal, segmentation, one verdict
        assert [kind for _, kind, _ in seen] == ["proposal", "segmentation", "verdict"]
        assert seen[-1][2]["difference"]["description"] == "the square moves faster"
        states = {name: client.get(f"/v1/comparisons/{job_id}").json()["status"] for name, job_id in jobs.items()}
        assert states == {"interrupted": "running", "queued-1": "queued", "queued-2": "queued"}
    return jobs, seen


def check_the_restart(data_dir, config, model: FakeOpenAIServer, key: str, jobs: dict[str, str], seen: list) -> None:
    decided = "the square moves faster"
    calls_before_restart = len(model.requests)
    assert differencer_calls(model, decided) == 1
    with ServerThread(data_dir, config) as second:
        with Served(second, model).client(key) as client:
            # A client that was following the interrupted job reconnects with its last id: the re-run's events
            # come with later ids, from the proposal to the result.
            rest = read_events(client, jobs["interrupted"], last_event_id=seen[-1][0])
            assert [kind for _, kind, _ in rest] == ["proposal", "segmentation", "verdict", "verdict", "result"]
            assert all(event_id > seen[-1][0] for event_id, _, _ in rest)
            for name, job_id in jobs.items():
                wait_until(lambda: client.get(f"/v1/comparisons/{job_id}").json()["status"] == "done", 60, name)
            bodies = {name: client.get(f"/v1/comparisons/{job_id}").json() for name, job_id in jobs.items()}
    assert {name: body["progress"]["attempts"] for name, body in bodies.items()} == {
        "interrupted": 2, "queued-1": 1, "queued-2": 1,
    }
    for name, body in bodies.items():
        assert [d["description"] for d in body["result"]["differences"]] == STATEMENTS[name]
    assert rest[-1][2]["result"] == bodies["interrupted"]["result"]
    # The verdict decided before the stop came from the cache: its differencer call was made once in all.
    assert differencer_calls(model, decided) == 1
    repeated = len(model.requests) - len({json.dumps(r.body, sort_keys=True) for r in model.requests})
    assert repeated == 1, f"{repeated} model calls were made twice (only the one in flight at the stop may be)"
    assert differencer_calls(model, SLOW) == 2
    assert len(model.requests) > calls_before_restart  # the queued jobs did run after the restart


def test_a_restart_reruns_the_interrupted_job_and_resumes_the_queued_ones(tmp_path, slow_model, clips):
    config = serve_config(slow_model, tmp_path, ["serve.workers=1"])
    with ServerThread(tmp_path, config) as first:
        key = Served(first, slow_model).new_key("restart")
        jobs, seen = submit_and_catch_running(first.url, key, clips)
    check_the_restart(tmp_path, config, slow_model, key, jobs, seen)


@pytest.mark.slow
def test_after_a_crash_the_next_server_reruns_the_interrupted_job_and_resumes_the_queued_ones(tmp_path, clips):
    """The first server is a ``viddiff serve`` process killed with SIGKILL: no shutdown code runs."""
    with FakeOpenAIServer(SlowOnOneStatement(), latency_s=0.1) as model:
        config = serve_config(model, tmp_path, ["serve.workers=1"])
        key = create_key(tmp_path, "crash")
        port = free_port()
        args = [sys.executable, "-m", "viddiff.cli", "-q", "serve", "--data-dir", str(tmp_path), "--port", str(port)]
        for item in config_overrides(model, tmp_path):
            args += ["--set", item]
        server = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_until(lambda: server.poll() is not None or _answers(url), 180, "the server process to start")
            assert server.poll() is None, server.stderr.read()
            jobs, seen = submit_and_catch_running(url, key, clips)
        finally:
            server.send_signal(signal.SIGKILL)
            server.wait(30)
        check_the_restart(tmp_path, config, model, key, jobs, seen)


def config_overrides(model: FakeOpenAIServer, data_dir) -> list[str]:
    """What ``serve_config`` sets, as ``--set`` values for a server process."""
    return [*offline_overrides(model.base_url, str(data_dir / "cache.sqlite")),
            f"endpoints.default.api_key_env={MODEL_KEY_ENV}", "serve.workers=1"]


def _answers(url: str) -> bool:
    try:
        return httpx.get(url + "/healthz", timeout=2).status_code == 200
    except httpx.TransportError:
        return False
