"""A model that follows the JSON schema it is sent is never refused (issue 11, item 11).

Every stage that asks for JSON is driven end to end by ``SchemaFollowingModel``, which answers each
request with a small valid instance of the request's own schema and knows nothing else. A check the
code makes without stating it in the schema would show up as a re-ask or a failed sample.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from viddiff.cli import main
from viddiff.benchmarks.vidic.synthetic import write_synthetic_vidic
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer
from viddiff.testing.schema_model import SchemaFollowingModel

REASK = "Your previous answer was not valid"
STAGE_SCHEMAS = {
    ("run", "closed"): {"StagesAnswer", "LinksAnswer", "AnswerAB"},
    ("run", "open"): {"DifferencesAnswer", "StagesAnswer", "LinksAnswer", "AnswerAB", "MatchAnswer", "FlipAnswer"},
    ("run", "describe"): {"DimensionDifferencesAnswer", "AnswerABC", "ChecklistJudgeAnswer"},
    ("run", "closed-one-call"): {"ProposalAnswer", "AnswerAB"},
    ("run", "open-one-call"): {"ProposalAnswer", "AnswerAB", "MatchAnswer", "FlipAnswer"},
    ("baseline", "closed"): {"ClosedAnswer"},
    ("baseline", "open"): {"OpenAnswer"},
    ("baseline", "describe"): {"ChecklistJudgeAnswer"},
}
ONE_CALL = "-one-call"
"""A mode with this suffix runs with ``proposer.calls=one`` (differences, stages and links in one call)."""


@pytest.fixture(scope="module")
def vidic_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("schema-vidic")
    write_synthetic_vidic(out, pairs=2, seed=2)
    return out


def _schema_name(request: ChatRequest) -> str:
    return ((request.response_format or {}).get("json_schema") or {}).get("name", "")


@pytest.mark.parametrize(("command", "mode"), list(STAGE_SCHEMAS), ids=[f"{c}-{m}" for c, m in STAGE_SCHEMAS])
def test_every_stage_accepts_any_answer_its_schema_allows(
    command, mode, synth_dir, vidic_dir, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    model = SchemaFollowingModel()
    out = tmp_path / "run"
    variant = mode
    mode = mode.removesuffix(ONE_CALL)
    with FakeOpenAIServer(model) as server:
        sets = [x for s in offline_overrides(server.base_url, str(tmp_path / "c.sqlite")) for x in ("--set", s)]
        sets += ["--set", "endpoints.max_reasks=0", "--set", "eval.max_reasks=0"]  # a refusal fails at once
        if variant.endswith(ONE_CALL):
            sets += ["--set", "proposer.calls=one"]
        if mode == "describe":
            target = ["--benchmark", "vidic", "--dataset", str(vidic_dir)]
            sets += ["--set", "vidic.n_differences=3"]
        else:
            target = ["--dataset", str(synth_dir), "--mode", mode]
        if command == "baseline":
            target = ["--model", "fake-vlm", *target, "--set", "baseline.max_images=8"]
        code = main(["-q", command, *target, "--output", str(out), *sets])
    assert code == 0, capsys.readouterr().err
    assert not (out / "errors.json").exists()
    assert not server.responder_errors
    assert not [r for r in server.requests if any(REASK in str(m.get("content")) for m in r.messages)]
    seen = Counter(_schema_name(r) for r in server.requests if r.response_format is not None)
    assert STAGE_SCHEMAS[(command, variant)] <= set(seen), seen
    if variant.endswith(ONE_CALL):  # one proposer call per sample, nothing else of the proposer's
        assert not {"DifferencesAnswer", "StagesAnswer", "LinksAnswer"} & set(seen), seen
    metrics = json.loads((out / "metrics.json").read_text())
    if (command, mode) == ("run", "open"):  # the judge matched something, so the opposite check ran too
        assert metrics["metrics"]["overall"]["found"] + metrics["metrics"]["overall"]["wrong_letter"] >= 1
    if mode == "describe":
        assert metrics["counts"]["judge_failures"] == 0
