"""``viddiff serve --ray``: comparisons on Ray actors of a local cluster (2 CPUs, no GPU), over real HTTP.

One cluster for the module, started in a fixture. Jobs spread over two actors; an actor killed (SIGKILL)
mid-job has its job re-run on the other, its stream repeating nothing; a server stopped mid-job (the head)
re-runs it on the next start, as ``tests/serve/test_restart.py`` checks for the local executor.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from typing import Iterator

import httpx
import pytest
from serve_helpers import Served, read_events, serve_config, wait_finished
from test_restart import SLOW, STATEMENTS, SlowOnOneStatement, check_the_restart, submit_and_catch_running

from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.service import ServerThread

ray = pytest.importorskip("ray")
RAY = ["ray.address=local", "ray.num_cpus=1"]


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("RAY_memory_monitor_refresh_ms", "0")  # a shared CI machine's memory is not these actors'
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def slow_model() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(SlowOnOneStatement(), latency_s=0.1) as server:
        yield server


class Placements(logging.Handler):
    """The executor's "job J runs on Ray actor A (pid P)" lines: (job, actor, pid) in order."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.seen: list[tuple[str, int, int]] = []
        self._lock = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg.startswith("job %s runs on Ray actor"):
            with self._lock:
                self.seen.append(tuple(record.args))

    def of(self, job_id: str) -> list[tuple[int, int]]:
        with self._lock:
            return [(actor, pid) for job, actor, pid in self.seen if job == job_id]


@pytest.fixture
def placements() -> Iterator[Placements]:
    logger = logging.getLogger("viddiff.serve.ray_executor")
    handler, level = Placements(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


def _submit(client: httpx.Client, clips, differences: list[str]) -> str:
    answer = client.post(
        "/v1/comparisons", data={"action": "a square crossing", "differences": differences},
        files={"video_a": ("a.mp4", clips["a"].read_bytes()), "video_b": ("b.mp4", clips["b"].read_bytes())},
    )
    assert answer.status_code == 202, answer.text
    return answer.json()["id"]


@pytest.mark.slow
def test_jobs_spread_over_two_actors_and_a_killed_actors_job_reruns_on_the_other(
    cluster, tmp_path, slow_model, clips, placements
) -> None:
    config = serve_config(slow_model, tmp_path, [*RAY, "ray.actors=2", "serve.workers=1"])
    with ServerThread(tmp_path, config) as server:
        served = Served(server, slow_model)
        with served.client(served.new_key("ray")) as client:
            # Two jobs at once, one worker per actor: one on each actor.
            first = [_submit(client, clips, ["the square moves faster"]), _submit(client, clips, ["the square is wider"])]
            bodies = [wait_finished(client, job) for job in first]
            assert [b["status"] for b in bodies] == ["done", "done"]
            assert {placements.of(job)[0][0] for job in first} == {0, 1}

            # A job caught after its first verdict (its slow statement still being judged); its actor is killed.
            job = _submit(client, clips, ["the square moves faster", f"the square is {SLOW}"])
            seen = read_events(client, job, stop_after=3)
            assert [kind for _, kind, _ in seen] == ["proposal", "segmentation", "verdict"]
            [(actor, pid)] = placements.of(job)
            os.kill(pid, signal.SIGKILL)
            body = wait_finished(client, job)
            assert body["status"] == "done", body
            events = read_events(client, job)
    rerun = placements.of(job)
    assert [a for a, _ in rerun] == [actor, 1 - actor]  # re-run on the other actor
    # The stream as a client sees it: each event once (the re-run's repeats of what was sent are dropped).
    assert [kind for _, kind, _ in events] == ["proposal", "segmentation", "verdict", "verdict", "result"]
    assert events[:3] == seen
    assert [d["description"] for d in body["result"]["differences"]] == ["the square moves faster", f"the square is {SLOW}"]


@pytest.mark.slow
def test_a_restarted_head_reruns_the_interrupted_job_on_the_actors(cluster, tmp_path, clips) -> None:
    """The head (the server) stopped with a job running on an actor and two queued; the next server on the
    same --data-dir, with new actors, re-runs it (finished model calls from the cache) and runs the others."""
    with FakeOpenAIServer(SlowOnOneStatement(), latency_s=0.1) as model:  # its request log: this test's alone
        config = serve_config(model, tmp_path, [*RAY, "ray.actors=1", "serve.workers=1"])
        with ServerThread(tmp_path, config) as first:
            key = Served(first, model).new_key("restart")
            jobs, seen = submit_and_catch_running(first.url, key, clips)
        check_the_restart(tmp_path, config, model, key, jobs, seen)
    assert set(jobs) == set(STATEMENTS)


def test_without_ray_the_ray_executor_is_one_clear_error(tmp_path) -> None:
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['ray'] = None\n"
        "from viddiff.cli import main\n"
        f"sys.exit(main(['serve', '--data-dir', {str(tmp_path)!r}, '--ray', 'local', '--port', '1']))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert 'pip install "viddiff[ray]"' in proc.stderr and "Traceback" not in proc.stderr
