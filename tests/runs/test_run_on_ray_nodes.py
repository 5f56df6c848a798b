"""``viddiff run --executor ray`` on a real two-node Ray cluster on this machine (issue 39): the second node
sees none of this session's files (:mod:`viddiff.testing.ray_cluster`). The actors read the dataset by path,
so a dataset only the head has is refused at start, naming the node; on storage both nodes read, a run on the
second node's actors equals a local run, its answers stored in the driver's cache. One cluster for the module.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Iterator

import pytest

from viddiff.cache import Cache
from viddiff.cli import main
from viddiff.testing.ray_cluster import SECOND_NODE, SECOND_NODE_IP, TwoNodeCluster, driven_cluster, unavailable_reason

ray = pytest.importorskip("ray")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=f"two-node Ray cluster: {unavailable_reason()}"),
]


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TwoNodeCluster]:
    with driven_cluster(hidden=[tmp_path_factory.getbasetemp()]) as cluster:
        yield cluster


def _run(dataset: Path, out: Path, offline_sets: list[str], cache: Path, *extra: str) -> int:
    return main([
        "-q", "run", "--dataset", str(dataset), "--mode", "closed", "--output", str(out), *offline_sets,
        "--set", f"cache.path={cache}", *extra,
    ])


ON_SECOND_NODE = ["--executor", "ray", "--set", "ray.actors=1", "--set", "ray.num_cpus=1",
                  "--set", f"ray.resources={{{SECOND_NODE}: 1}}"]


def test_a_dataset_the_second_node_cannot_read_is_one_clear_error(nodes, synth_dir, tmp_path, offline_sets, capsys):
    code = _run(synth_dir, tmp_path / "out", offline_sets, tmp_path / "cache.sqlite", *ON_SECOND_NODE)
    err = capsys.readouterr().err
    assert code != 0
    assert f"the Ray node {SECOND_NODE_IP} cannot read" in err and "Traceback" not in err, err
    assert not (tmp_path / "out" / "samples.jsonl").exists() or not (tmp_path / "out" / "samples.jsonl").read_text()


def test_a_run_on_the_second_node_equals_a_local_run(nodes, synth_dir, tmp_path, offline_sets, scripted_server):
    shared = Path(shutil.copytree(synth_dir, nodes.shared / f"dataset-{tmp_path.name}"))
    local, spread = tmp_path / "local", tmp_path / "ray"
    assert _run(shared, local, offline_sets, tmp_path / "local.sqlite") == 0
    calls = len(scripted_server.requests)
    assert _run(shared, spread, offline_sets, tmp_path / "ray.sqlite", *ON_SECOND_NODE) == 0
    assert json.loads((spread / "predictions.json").read_text()) == json.loads((local / "predictions.json").read_text())
    with Cache(tmp_path / "ray.sqlite") as head_cache:  # the second node's answers, stored through the driver
        assert head_cache.stats()["chat"]["entries"] == len(scripted_server.requests) - calls > 0


def test_a_run_whose_node_dies_finishes_on_the_heads_actor_as_a_local_run(nodes, synth_dir, tmp_path, monkeypatch):
    """One actor per node (2 CPUs each); the second node is killed while the run's model calls are under way
    (0.3 s each): its samples are decoded and answered again on the head's actor, and the run equals a local
    one. Runs last: it starts the second node again for whatever follows."""
    import threading

    from viddiff.testing import offline_overrides
    from viddiff.testing.fake_openai import FakeOpenAIServer
    from viddiff.testing.responders import ScriptedModel

    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    shared = Path(shutil.copytree(synth_dir, nodes.shared / f"dataset-{tmp_path.name}"))
    with FakeOpenAIServer(ScriptedModel(), latency_s=0.3) as model:
        sets = [arg for item in offline_overrides(model.base_url, "unused") for arg in ("--set", item)]
        local, spread = tmp_path / "local", tmp_path / "ray"
        assert _run(shared, local, sets, tmp_path / "local.sqlite") == 0
        model.reset_log()
        codes = []
        run = threading.Thread(target=lambda: codes.append(_run(
            shared, spread, sets, tmp_path / "ray.sqlite", "--executor", "ray", "--set", "ray.actors=2",
            "--set", "ray.num_cpus=2",
        )))
        run.start()
        try:
            deadline = time.monotonic() + 120
            while len(model.requests) < 3 and run.is_alive() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert run.is_alive(), "the run ended before the node could be killed"
            nodes.kill_second_node()
            run.join(300)
        finally:
            nodes.start_second_node()
            wait_nodes = time.monotonic() + 90
            while sum(n["Alive"] for n in ray.nodes()) < 2 and time.monotonic() < wait_nodes:
                time.sleep(0.2)
    assert codes == [0]
    assert json.loads((spread / "predictions.json").read_text()) == json.loads((local / "predictions.json").read_text())
