"""A server stopped with a comparison running and others queued: the next one on the same --data-dir
re-runs the interrupted comparison (its finished model calls come from the cache) and runs the queued ones."""

from __future__ import annotations

import json
import time
from typing import Iterator

import pytest
from serve_helpers import Served, read_events, serve_config, wait_until

from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel
from viddiff.testing.service import ServerThread


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


def test_a_restart_reruns_the_interrupted_job_and_resumes_the_queued_ones(tmp_path, slow_model, clips):
    config = serve_config(slow_model, tmp_path, ["serve.workers=1"])
    jobs = {}
    statements = {
        "interrupted": ["the square moves faster", f"the square is {SLOW}"],
        "queued-1": ["the square is wider"],
        "queued-2": ["the square is taller"],
    }
    with ServerThread(tmp_path, config) as first:
        served = Served(first, slow_model)
        key = served.new_key("restart")
        with served.client(key) as client:
            for name, differences in statements.items():
                answer = client.post(
                    "/v1/comparisons", data={"action": "a square crossing", "differences": differences},
                    files={"video_a": ("a.mp4", clips["a"].read_bytes()), "video_b": ("b.mp4", clips["b"].read_bytes())},
                )
                jobs[name] = answer.json()["id"]
            seen = read_events(client, jobs["interrupted"], stop_after=3)  # proposal, segmentation, one verdict
            assert [kind for _, kind, _ in seen] == ["proposal", "segmentation", "verdict"]
            decided = seen[-1][2]["difference"]["description"]
            assert decided == "the square moves faster"
            states = {name: client.get(f"/v1/comparisons/{job_id}").json()["status"] for name, job_id in jobs.items()}
            assert states == {"interrupted": "running", "queued-1": "queued", "queued-2": "queued"}
    calls_before_restart = len(slow_model.requests)
    assert differencer_calls(slow_model, decided) == 1

    with ServerThread(tmp_path, config) as second:
        served = Served(second, slow_model)
        with served.client(key) as client:
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
        assert [d["description"] for d in body["result"]["differences"]] == statements[name]
    assert json.loads(json.dumps(rest[-1][2]["result"])) == bodies["interrupted"]["result"]
    # The verdict decided before the stop came from the cache: its differencer call was made once in all.
    assert differencer_calls(slow_model, decided) == 1
    repeated = len(slow_model.requests) - len({json.dumps(r.body, sort_keys=True) for r in slow_model.requests})
    assert repeated == 1, f"{repeated} model calls were made twice (only the one in flight at the stop may be)"
    assert differencer_calls(slow_model, SLOW) == 2
    assert len(slow_model.requests) > calls_before_restart  # the queued jobs did run after the restart
