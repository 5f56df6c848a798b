"""`viddiff run` through a flaky endpoint: transient faults and invalid answers must change nothing.

Each faulty run is compared with a clean run of the same benchmark (fresh caches on both sides, so
every answer really crossed the wire). Open mode includes the judge and flip calls of evaluation.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Iterator

import pytest

from viddiff.cli import main
from viddiff.config import DataConfig
from viddiff.data.viddiffbench import load_dataset
from viddiff.schema import SampleResult
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import SCHEMA_FAULT_CONTENT, ChatRequest, FakeOpenAIServer, FaultPlan
from viddiff.testing.responders import ScriptedModel

TRANSIENT = ("429", "500", "timeout", "malformed", "drop")
MODES = ("closed", "open")
# Enough retries that 20% independent faults essentially never exhaust them (0.2**11 per call).
PATIENT = ("endpoints.max_retries=10", "endpoints.max_reasks=8", "eval.max_reasks=8")


def _schema_name(request: ChatRequest) -> str:
    return ((request.response_format or {}).get("json_schema") or {}).get("name", "")


def _run(dataset: Path, out: Path, sets: list[str], mode: str) -> int:
    return main(["-q", "run", "--dataset", str(dataset), "--mode", mode, "--output", str(out), *sets])


def _outcome(out: Path) -> dict:
    """What a run decided, without what it cost: predictions, per-sample results, metrics."""
    lines = (out / "samples.jsonl").read_bytes().splitlines()
    results = [SampleResult.model_validate_json(line) for line in lines]
    keys = [r.sample_key for r in results]
    metrics = json.loads((out / "metrics.json").read_text())
    return {
        "keys": keys,
        "predictions": json.loads((out / "predictions.json").read_text()),
        "results": {r.sample_key: r.model_dump(exclude={"usage"}) for r in results},
        "metrics": _decisions(metrics),
    }


def _decisions(obj):
    """``obj`` without what legitimately differs between a clean and a faulty run: usage counts, timestamps, the
    stand-ins that answered (each run's scripted server has its own URL)."""
    if isinstance(obj, dict):
        return {k: _decisions(v) for k, v in obj.items() if k not in ("usage", "timestamp", "stand_ins")}
    if isinstance(obj, list):
        return [_decisions(v) for v in obj]
    return obj


@pytest.fixture(scope="module")
def clean(synth_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict]]:
    """Reference outcome of a fault-free run, per mode."""
    root = tmp_path_factory.mktemp("rel-clean")
    outcomes = {}
    with pytest.MonkeyPatch.context() as mp, FakeOpenAIServer(ScriptedModel()) as server:
        mp.setenv("OPENAI_API_KEY", "dummy-key")
        items = [*offline_overrides(server.base_url, str(root / "cache.sqlite")), *PATIENT]
        sets = [x for item in items for x in ("--set", item)]
        for mode in MODES:
            assert _run(synth_dir, root / mode, sets, mode) == 0
            outcomes[mode] = _outcome(root / mode)
    yield outcomes


def _assert_same_as_clean(out: Path, reference: dict, synth_dir: Path) -> None:
    dataset = load_dataset(DataConfig(dataset=str(synth_dir)))
    outcome = _outcome(out)
    # Every sample exactly once, in both the resumable log and the official predictions file.
    assert sorted(outcome["keys"]) == sorted(s.sample_key for s in dataset)
    assert len(outcome["predictions"]) == len(dataset) and all(outcome["predictions"])
    assert not (out / "errors.json").exists()
    assert outcome["predictions"] == reference["predictions"]
    assert outcome["results"] == reference["results"]
    assert outcome["metrics"] == reference["metrics"]


@pytest.mark.parametrize("mode", MODES)
def test_transient_faults_leave_results_identical(mode, synth_dir, tmp_path, fake_server, clean):
    # Each kind is forced once at the start, then 20% of all requests fail with a random transient kind.
    plan = FaultPlan(sequence=TRANSIENT, rate=0.2, kinds=TRANSIENT, seed=11, retry_after_s=0.02, timeout_sleep_s=1.5)
    with fake_server(faults=plan, extra=(*PATIENT, "endpoints.timeout_s=0.75")) as (server, sets):
        assert _run(synth_dir, tmp_path / "run", sets, mode) == 0
    faulted = Counter(r.faulted for r in server.requests if r.faulted)
    assert set(faulted) == set(TRANSIENT)
    assert sum(faulted.values()) >= 0.1 * len(server.requests)
    if mode == "open":  # evaluation's judge calls went through the same faulty endpoint
        assert "MatchAnswer" in {_schema_name(r) for r in server.requests}
    _assert_same_as_clean(tmp_path / "run", clean[mode], synth_dir)


@pytest.mark.parametrize("mode", MODES)
def test_schema_faults_are_reasked_and_leave_results_identical(mode, synth_dir, tmp_path, fake_server, clean):
    plan = FaultPlan(sequence=("schema",) * 3, rate=0.2, kinds=("schema",), seed=3)
    with fake_server(faults=plan, extra=PATIENT) as (server, sets):
        assert _run(synth_dir, tmp_path / "run", sets, mode) == 0
    n_faults = sum(r.faulted == "schema" for r in server.requests)
    reasks = [r for r in server.requests if any(m.get("content") == SCHEMA_FAULT_CONTENT for m in r.messages)]
    assert n_faults >= 3
    # Every invalid answer was shown back to the model with a request to correct it.
    assert len(reasks) >= n_faults
    _assert_same_as_clean(tmp_path / "run", clean[mode], synth_dir)
