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
from serve_helpers import Served, calibration_toml, read_events, serve_config, wait_finished, wait_until
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
    """The executor's "job J runs on Ray actor A (pid P on NODE)" lines: (job, actor, pid) in order."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.seen: list[tuple[str, int, int]] = []
        self._lock = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg.startswith("job %s runs on Ray actor"):
            with self._lock:
                self.seen.append(tuple(record.args[:3]))

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


def _submit_two_views(client: httpx.Client, clips, tmp_path) -> str:
    views = [client.post("/v1/videos", files={"video": (clips[name].name, clips[name].read_bytes())}).json()["id"]
             for name in ("webm", "avi")]
    setup = calibration_toml(tmp_path / "setup.toml")
    calibration = client.post("/v1/calibrations", files={"calibration": ("setup.toml", setup.read_bytes())}).json()["id"]
    answer = client.post(
        "/v1/comparisons", data={"action": "a square crossing", "differences": ["the squat is deeper"], "pose": "true",
                                 "views_a": [views[0]], "views_b": [views[1]], "calibration_a_id": calibration,
                                 "calibration_b_id": calibration},
        files={"video_a": ("a.mp4", clips["a"].read_bytes()), "video_b": ("b.mp4", clips["b"].read_bytes())},
    )
    assert answer.status_code == 202, answer.text
    return answer.json()["id"]


@pytest.mark.slow
def test_jobs_spread_over_two_actors_and_a_killed_actors_job_reruns_on_the_other(
    cluster, tmp_path, slow_model, clips, placements
) -> None:
    config = serve_config(slow_model, tmp_path, [*RAY, "ray.actors=2", "serve.workers=1", "serve.requests_per_minute=100000"])
    with ServerThread(tmp_path, config) as server:
        served = Served(server, slow_model)
        with served.client(served.new_key("ray")) as client:
            # Two jobs at once, one worker per actor: one on each actor.
            first = [_submit(client, clips, ["the square moves faster"]), _submit(client, clips, ["the square is wider"])]
            bodies = [wait_finished(client, job) for job in first]
            assert [b["status"] for b in bodies] == ["done", "done"]
            assert {placements.of(job)[0][0] for job in first} == {0, 1}

            # Two views per side: the views and the calibration reach the actor as files too (the pose wing
            # measured each side from both of its views; squares have no body to align them by, so no value).
            two_views = _submit_two_views(client, clips, tmp_path)
            body = wait_finished(client, two_views)
            assert body["status"] == "done", body["error"]
            assert "video A's views" in body["result"]["differences"][0]["evidence_absent"]

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


@pytest.mark.slow
def test_a_job_is_stored_done_before_its_result_event_reaches_a_client(cluster, tmp_path, serve_model, clips) -> None:
    """Bug 5 of issue 37: a GET made the moment a comparison's event stream ends said ``running`` (4 of 6
    runs) because the result event was sent before the job was stored done. 50 comparisons in turn."""
    config = serve_config(serve_model, tmp_path, [*RAY, "ray.actors=1", "serve.workers=2", "serve.requests_per_minute=100000"])
    with ServerThread(tmp_path, config) as server:
        served = Served(server, serve_model)
        with served.client(served.new_key("race")) as client:
            ids = {}
            for side in ("a", "b"):
                answer = client.post("/v1/videos", files={"video": (f"{side}.mp4", clips[side].read_bytes())})
                assert answer.status_code == 201, answer.text
                ids[side] = answer.json()["id"]
            statuses = []
            for _ in range(50):
                answer = client.post("/v1/comparisons", data={
                    "action": "a square crossing", "differences": ["the square moves faster"],
                    "video_a_id": ids["a"], "video_b_id": ids["b"],
                })
                assert answer.status_code == 202, answer.text
                job = answer.json()["id"]
                events = read_events(client, job)
                assert events[-1][1] == "result"
                body = client.get(f"/v1/comparisons/{job}").json()
                statuses.append((body["status"], body["result"] is not None))
    wrong = [s for s in statuses if s != ("done", True)]
    assert not wrong, f"{len(wrong)} of 50 GETs after the result event: {wrong[:5]}"


@pytest.mark.slow
def test_sigterm_stops_a_ray_server_cleanly_and_its_running_job_reruns_next_start(cluster, tmp_path, clips) -> None:
    """Bug 6 of issue 37: SIGTERM to ``viddiff serve --ray local`` printed Ray's ``*** SIGTERM received``
    crash dump. It stops as Ctrl-C does: exit 0, no dump, the running job left to the next start."""
    import subprocess
    import sys

    from test_restart import _answers, config_overrides

    from viddiff.serve.jobs import JobStore
    from viddiff.testing.service import create_key, free_port

    with FakeOpenAIServer(SlowOnOneStatement(), latency_s=0.1) as model:
        config = serve_config(model, tmp_path, [*RAY, "ray.actors=1", "serve.workers=1"])
        key = create_key(tmp_path, "sigterm")
        port = free_port()
        args = [sys.executable, "-m", "viddiff.cli", "-q", "serve", "--data-dir", str(tmp_path), "--port", str(port),
                "--ray", "local"]
        for item in [*config_overrides(model, tmp_path), "ray.actors=1", "ray.num_cpus=1"]:
            args += ["--set", item]
        server = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_until(lambda: server.poll() is not None or _answers(url), 180, "the server process to start")
            assert server.poll() is None, server.stderr.read()
            jobs, seen = submit_and_catch_running(url, key, clips)
            server.send_signal(signal.SIGTERM)
            stderr = server.communicate(timeout=60)[1]
        finally:
            if server.poll() is None:
                server.kill()
                server.wait(30)
        assert server.returncode == -signal.SIGTERM, stderr  # uvicorn's graceful stop, then the signal's own end
        assert "SIGTERM received" not in stderr and "Traceback" not in stderr, stderr
        store = JobStore(tmp_path / "serve.sqlite")
        try:  # the stop ran: the running job went back to the queue
            assert {name: store.job(job).status for name, job in jobs.items()} == dict.fromkeys(jobs, "queued")
        finally:
            store.close()
        check_the_restart(tmp_path, config, model, key, jobs, seen)


@pytest.mark.slow
def test_a_dead_actor_gets_no_job_and_is_replaced_while_healthz_says_degraded(
    cluster, tmp_path, serve_model, clips, placements
) -> None:
    """Bug 6 of issue 37: after an actor was killed, each of the next 5 jobs went to it first, and /healthz
    said ``ok`` with capacity halved."""
    config = serve_config(serve_model, tmp_path, [*RAY, "ray.actors=2", "serve.workers=1",
                                                  "serve.requests_per_minute=100000"])
    with ServerThread(tmp_path, config) as server:
        served = Served(server, serve_model)
        with served.client(served.new_key("dead")) as client:
            health = client.get("/healthz").json()
            assert health["status"] == "ok" and health["actors"]["live"] == health["actors"]["configured"] == 2
            assert sum(health["actors"]["by_node"].values()) == 2
            first = [_submit(client, clips, ["the square moves faster"]), _submit(client, clips, ["the square is wider"])]
            assert [wait_finished(client, job)["status"] for job in first] == ["done", "done"]
            pids = {placements.of(job)[0] for job in first}
            assert {actor for actor, _ in pids} == {0, 1}
            dead_pid = dict(pids)[0]
            os.kill(dead_pid, signal.SIGKILL)  # idle: no job of its own tells of its death

            degraded = wait_until(
                lambda: (h := client.get("/healthz").json())["status"] == "degraded" and h, 30, "/healthz degraded",
                interval_s=0.02,
            )
            assert degraded["actors"]["live"] == 1 and degraded["actors"]["configured"] == 2, degraded
            later = [_submit(client, clips, [f"the square is {word}"]) for word in ("taller", "smaller", "darker")]
            assert [wait_finished(client, job)["status"] for job in later] == ["done"] * 3
            assert all(len(placements.of(job)) == 1 for job in later)  # none was tried on the dead actor
            assert dead_pid not in {pid for job in later for _, pid in placements.of(job)}

            back = wait_until(lambda: (h := client.get("/healthz").json())["status"] == "ok" and h, 60, "the new actor")
            assert back["actors"]["live"] == 2, back
            both = [_submit(client, clips, ["the square moves faster"]), _submit(client, clips, ["the square is wider"])]
            assert [wait_finished(client, job)["status"] for job in both] == ["done", "done"]
            assert {placements.of(job)[0][0] for job in both} == {0, 1}  # the new actor takes jobs
            assert dead_pid not in {placements.of(job)[0][1] for job in both}
