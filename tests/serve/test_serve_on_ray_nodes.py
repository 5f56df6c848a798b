"""``viddiff serve --ray`` across two machines that share no files (issue 39), on a real two-node Ray cluster on
this machine: the second node runs in a mount namespace with an empty tmpfs over every test file (so over the
head's ``--data-dir`` and its cache), on 127.0.0.2 (:mod:`viddiff.testing.ray_cluster`). One cluster for the
module; the server under test runs in this process, the cluster's driver.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Iterator

import httpx
import pytest
from serve_helpers import Served, read_events, serve_config, wait_finished, wait_until
from test_restart import SLOW, SlowOnOneStatement, differencer_calls

from viddiff.cache import Cache
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.ray_cluster import SECOND_NODE, SECOND_NODE_IP, TwoNodeCluster, driven_cluster, unavailable_reason
from viddiff.testing.service import ServerThread

ray = pytest.importorskip("ray")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=f"two-node Ray cluster: {unavailable_reason()}"),
]
ACTION = "a square crossing"


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TwoNodeCluster]:
    """The head and a second node that sees none of this session's files (clips, data dirs, caches)."""
    with driven_cluster(hidden=[tmp_path_factory.getbasetemp()]) as cluster:
        yield cluster


class Placements(logging.Handler):
    """The executor's "job J runs on Ray actor A (pid P on NODE)" lines: job -> [node, ...] in order."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.nodes: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg.startswith("job %s runs on Ray actor"):
            with self._lock:
                self.nodes.setdefault(record.args[0], []).append(record.args[3])


@pytest.fixture
def placements() -> Iterator[Placements]:
    logger = logging.getLogger("viddiff.serve.ray_executor")
    handler, level = Placements(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


def _submit(client: httpx.Client, clips, differences: list[str], report: bool = False, action: str = ACTION) -> str:
    answer = client.post(
        "/v1/comparisons", data={"action": action, "differences": differences, "report": str(report).lower()},
        files={"video_a": ("a.mp4", clips["a"].read_bytes()), "video_b": ("b.mp4", clips["b"].read_bytes())},
    )
    assert answer.status_code == 202, answer.text
    return answer.json()["id"]


def _on_ray(cluster: TwoNodeCluster, *extra: str) -> list[str]:
    return [f"ray.address={cluster.address}", "serve.requests_per_minute=100000", *extra]


def test_comparisons_on_a_node_without_the_data_dir_equal_a_local_run(nodes, tmp_path, clips, placements) -> None:
    """Videos reach the second node through Ray, the report comes back, and every model answer is stored in
    the head's cache file, which that node cannot see."""
    statements = ["the square moves faster", "the square is wider"]
    with FakeOpenAIServer(SlowOnOneStatement()) as model:
        local_dir, ray_dir = tmp_path / "local", tmp_path / "ray"
        with ServerThread(local_dir, serve_config(model, local_dir, [])) as server:
            served = Served(server, model)
            with served.client(served.new_key("local")) as client:
                local = wait_finished(client, _submit(client, clips, statements))
        config = serve_config(model, ray_dir, _on_ray(
            nodes, "ray.actors=1", "ray.num_cpus=1", f"ray.resources={{{SECOND_NODE}: 1}}", "serve.workers=2",
        ))
        calls_before = len(model.requests)
        with ServerThread(ray_dir, config) as server:
            served = Served(server, model)
            with served.client(served.new_key("ray")) as client:
                health = client.get("/healthz").json()
                assert health["actors"] == {"configured": 1, "live": 1, "by_node": {SECOND_NODE_IP: 1}}, health
                job = _submit(client, clips, statements, report=True)
                events = read_events(client, job)
                body = wait_finished(client, job)
                report = client.get(f"/v1/comparisons/{job}/report")
    assert placements.nodes[job] == [SECOND_NODE_IP]
    assert body["status"] == "done", body
    assert [kind for _, kind, _ in events] == ["proposal", "segmentation", "verdict", "verdict", "result"]
    assert body["result"] == local["result"]
    assert report.status_code == 200 and "<html" in report.text.lower() and ACTION in report.text
    with Cache(ray_dir / "cache.sqlite") as head_cache:  # the second node's answers, stored through the head
        stored = head_cache.stats()["chat"]["entries"]
    assert stored == len(model.requests) - calls_before > 0


def test_a_lost_node_costs_no_answered_model_call_and_a_node_that_joins_gets_actors(
    nodes, tmp_path, clips, placements
) -> None:
    """One actor per node (2 CPUs each). The second node is killed while its job judges a slow statement: the
    job finishes on the head's actor, the statement answered before the loss comes from the cache of record,
    /healthz is degraded until the node is back, and then the new actor is on it."""
    lost = ["the square moves faster", f"the square is {SLOW}"]
    other = ["the square is wider", f"the square is taller and {SLOW}"]
    with FakeOpenAIServer(SlowOnOneStatement(), latency_s=0.1) as model:
        config = serve_config(model, tmp_path, _on_ray(nodes, "ray.actors=2", "ray.num_cpus=2", "serve.workers=1"))
        with ServerThread(tmp_path, config) as server:
            served = Served(server, model)
            with served.client(served.new_key("lost")) as client:
                health = client.get("/healthz").json()
                assert sorted(health["actors"]["by_node"].values()) == [1, 1] and SECOND_NODE_IP in health["actors"]["by_node"]
                # Other actions, so that the two jobs share no model call (actors asking the same at once both pay).
                jobs = [_submit(client, clips, lost, action="a red square"), _submit(client, clips, other, action="a blue square")]
                wait_until(lambda: all(job in placements.nodes for job in jobs), 60, "both jobs to start")
                on_second = {placements.nodes[job][0]: job for job in jobs}[SECOND_NODE_IP]
                statements = lost if on_second == jobs[0] else other
                seen = read_events(client, on_second, stop_after=3)  # its slow statement is being judged
                assert [kind for _, kind, _ in seen] == ["proposal", "segmentation", "verdict"]
                nodes.kill_second_node()

                degraded = wait_until(
                    lambda: (h := client.get("/healthz").json())["status"] == "degraded" and h, 60, "degraded"
                )
                assert degraded["actors"]["live"] == 1 and SECOND_NODE_IP not in degraded["actors"]["by_node"]
                bodies = [wait_finished(client, job, timeout_s=120) for job in jobs]
                rest = read_events(client, on_second, last_event_id=seen[-1][0])

                nodes.start_second_node()  # a node joins: Ray places the waiting actor on it
                back = wait_until(lambda: (h := client.get("/healthz").json())["status"] == "ok" and h, 120, "ok")
    assert [b["status"] for b in bodies] == ["done", "done"], bodies
    assert placements.nodes[on_second][0] == SECOND_NODE_IP and placements.nodes[on_second][1:] != []
    assert SECOND_NODE_IP not in placements.nodes[on_second][1:]
    assert [kind for _, kind, _ in rest] == ["verdict", "result"]  # the stream repeats nothing
    assert back["actors"]["by_node"].get(SECOND_NODE_IP) == 1, back
    # The verdict answered before the loss was not asked again; only the call in flight at the loss was.
    assert differencer_calls(model, statements[0]) == 1
    bodies_sent = [json.dumps(r.body, sort_keys=True) for r in model.requests]
    repeated = [body for body in set(bodies_sent) if bodies_sent.count(body) > 1]
    assert len(repeated) <= 1 and all(statements[1] in body for body in repeated), repeated
