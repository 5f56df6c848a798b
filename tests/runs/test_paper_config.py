"""``configs/paper.yaml`` end to end against the scripted server: the requests the release would send
(``json_object``, no re-asks, a system message only for the differencer, and a neutral one), and an invalid
answer recorded as invalid after one call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from viddiff.cli import main
from viddiff.config import DataConfig
from viddiff.data.viddiffbench import load_dataset
from viddiff.differencer.prompts import SYSTEM_RELEASE
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer
from viddiff.testing.responders import FailingWhen, ScriptedModel

PAPER = Path(__file__).resolve().parents[2] / "configs" / "paper.yaml"


def _run(server: FakeOpenAIServer, synth_dir: Path, out: Path, *extra: str, command: str = "run") -> int:
    args = ["-q", command, "--config", str(PAPER), "--dataset", str(synth_dir), "--mode", "closed", "--output", str(out)]
    for item in offline_overrides(server.base_url, str(out.parent / f"{out.name}-cache.sqlite")):
        args += ["--set", item]
    return main([*args, *extra])


def _is_differencer(req: ChatRequest) -> bool:
    return '"answer_detailed"' in req.text


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")


@pytest.mark.slow
def test_paper_config_sends_what_the_release_sends(synth_dir, tmp_path, api_key) -> None:
    with FakeOpenAIServer(ScriptedModel()) as server:
        assert _run(server, synth_dir, tmp_path / "method") == 0, server.responder_errors
        method_requests = list(server.requests)
        assert _run(server, synth_dir, tmp_path / "baseline", "--model", "fake-vlm", command="baseline") == 0
        baseline_requests = server.requests[len(method_requests):]

    assert method_requests and baseline_requests
    for req in method_requests + baseline_requests:
        assert req.response_format == {"type": "json_object"}
        assert not any(m["role"] == "assistant" for m in req.messages)  # nothing was asked twice
        assert "coach" not in json.dumps(req.messages).lower()
    differencer = [r for r in method_requests if _is_differencer(r)]
    proposer = [r for r in method_requests if not _is_differencer(r)]
    assert differencer and proposer
    # the release sends a system message to its differencer only, and a neutral one
    assert all([m["role"] for m in r.messages] == ["user"] for r in proposer + baseline_requests)
    assert all(r.messages[0] == {"role": "system", "content": SYSTEM_RELEASE} for r in differencer)
    # the baseline's frames follow its text with no label between A's and B's (then the JSON instruction)
    for req in baseline_requests:
        kinds = [p["type"] for p in req.messages[0]["content"]]
        assert kinds == ["text", *["image_url"] * len(req.images), "text"]
    # linking by name, and the refinement shown the whole plan as JSON
    assert any('Refer to stages and differences by their "name"' in r.text for r in proposer)
    assert any("filter out" in r.text for r in proposer)


@pytest.mark.slow
def test_low_fps_sends_one_frame_three_times_as_released(synth_dir, tmp_path, api_key) -> None:
    with FakeOpenAIServer(ScriptedModel()) as server:
        out = tmp_path / "slow"
        fps_1 = ["--set", "data.fps_by_domain={fitness: 1, ballsports: 1}"]
        assert _run(server, synth_dir, out, *fps_1) == 0, server.responder_errors
        bursts = [r for r in server.requests if _is_differencer(r) and len(r.images) == 6]
    assert bursts, "the synthetic benchmark has motion (gt_1) differences"
    for req in bursts:
        assert "0.00 seconds apart" in req.text
    rows = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    triples = [kf[side]["frame_indices"] for row in rows for kf in row["keyframes"] for side in "ab"]
    assert any(len(t) == 3 and len(set(t)) == 1 for t in triples)


@pytest.mark.slow
def test_an_invalid_answer_is_asked_once_recorded_invalid_and_scored_wrong(synth_dir, tmp_path, api_key) -> None:
    invalid = json.dumps({"answer_detailed": "cannot decide", "answer": "both"})
    responder = FailingWhen(ScriptedModel(), _is_differencer, lambda req: invalid)
    samples = list(load_dataset(DataConfig(dataset=str(synth_dir))))
    counted = sum(len(s.closed_differences()) for s in samples)
    with FakeOpenAIServer(responder) as server:
        out = tmp_path / "invalid"
        _run(server, synth_dir, out)  # its exit status is the run-integrity rules' business
        asked = [r for r in server.requests if _is_differencer(r)]
    assert len(asked) == counted  # one call per difference: no re-asks
    predictions = json.loads((out / "predictions.json").read_text())
    assert [set(p.values()) for p in predictions] == [{None}] * len(samples)
    rows = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert all(p["raw_answers"] == [invalid] for row in rows for p in row["predictions"])
    overall = json.loads((out / "metrics.json").read_text())["metrics"]["overall"]
    assert (overall["n"], overall["correct"]) == (counted, 0)  # counted, and wrong (never guessed as "a")
