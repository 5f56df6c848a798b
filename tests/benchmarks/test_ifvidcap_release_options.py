"""IF-VidCap edge cases where the released scorer differs from our defaults, each a named option: a blank
response (``ifvidcap.empty_response``) and an instruction the response file does not answer
(``ifvidcap.missing_response``). Response files on disk, the judge over a real local chat server; every
number worked out by hand below."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from viddiff.benchmarks.ifvidcap.data import Checklist, IfvidcapDataset, Instruction, sample_key
from viddiff.benchmarks.ifvidcap.scoring import IfvidcapMetrics, evaluate_ifvidcap
from viddiff.config import Config, load_config
from viddiff.schema import Sample, VideoRef, VideoTask
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer

REPO = Path(__file__).resolve().parents[2]
RESPONSE = "- a red car\n- a dog"
CHECKLIST = {
    "ruled_based_check": [
        {"check_id": "rule-001", "constraint_id": "unordered_list", "parameters": {"content": None, "symbol": "-"}},
        {"check_id": "rule-002", "constraint_id": "keyword",
         "parameters": {"content": None, "keyword": "cat", "keyword_type": "exclude"}},
        {"check_id": "rule-003", "constraint_id": "plain_text", "parameters": {"content": None}},
    ],
    "open_ended_check": [{"check_content": "names the car's colour", "check_items": [
        {"check_id": "open-001", "check_type": "correctness", "question": "Which colour is the car?",
         "options": ["A. red", "B. blue"], "correct_answer": "A"}]}],
}
"""On RESPONSE: a ``-`` list (yes), no "cat" (yes), plain text (no: it has list lines), colour A (yes): 3 of 4.
On a blank response: no list (no), no "cat" (yes), plain text (yes), the judge cannot say A (no): 2 of 4."""


def _dataset(*keys: tuple[str, str]) -> IfvidcapDataset:
    samples, instructions = [], {}
    for video_id, prompt_id in keys:
        key = sample_key(video_id, prompt_id)
        samples.append(Sample(sample_key=key, action="f", action_name="f", action_description="", split="test",
                              domain="ifvidcap", videos=(VideoRef(path=f"/videos/{video_id}.mp4"),),
                              task=VideoTask(prompt="Describe it as a list.")))
        instructions[key] = Instruction(video_id=video_id, prompt_id=prompt_id, field="f", prompt="Describe it as a list.",
                                        checklist=Checklist.model_validate(CHECKLIST))
    return IfvidcapDataset(samples, "test", None, Path("/videos"), instructions=instructions)


def _judge(req: ChatRequest) -> str:
    """Extracts the whole response as the span; answers the colour question A only when there is a response."""
    payload = json.JSONDecoder().raw_decode(next(t for t in req.texts if t.lstrip().startswith("{")))[0]
    if "checkitem" in payload:
        return json.dumps({"content": [payload["response"]]})
    return json.dumps({"answer": "A" if payload["response"].strip() else "B", "result_explanation": "-"})


def _score(
    tmp_path: Path, dataset: IfvidcapDataset, file: dict[str, Any], *sets: str, base: Config | None = None
) -> tuple[IfvidcapMetrics, int]:
    path = tmp_path / "responses.json"
    path.write_text(json.dumps(file), encoding="utf-8")
    with FakeOpenAIServer(_judge) as server:
        cfg = (base or Config()).with_overrides(
            [f"endpoints.default.base_url={server.base_url}", "cache.enabled=false", *sets]
        )
        metrics = evaluate_ifvidcap(dataset, path, cfg)
        return metrics, len(server.requests)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")


def test_a_blank_response_satisfies_nothing_unless_judged_as_released(tmp_path: Path) -> None:
    dataset = _dataset(("v1", "01"), ("v1", "02"))
    file = {"v1": [{"prompt_id": "01", "response": RESPONSE}, {"prompt_id": "02", "response": ""}]}
    ours, calls = _score(tmp_path, dataset, file)
    # 3 of 4 on the response, 0 of 4 on the blank one: CSR micro 3/8
    assert (ours.scores.overall.satisfied_constraints, ours.scores.overall.constraints) == (3, 8)
    assert ours.scores.overall.csr_micro == pytest.approx(37.5) and calls == 4  # only the answered instruction
    released, calls = _score(tmp_path, dataset, file, "ifvidcap.empty_response=judge")
    # the blank response is extracted and checked as written: 2 of 4 (no "cat", plain text): CSR micro 5/8
    assert (released.scores.overall.satisfied_constraints, released.scores.overall.constraints) == (5, 8)
    assert released.scores.overall.csr_micro == pytest.approx(62.5) and calls == 8
    assert released.empty_responses == ["v1/02"] and released.settings["empty_response"] == "judge"
    blank = next(o for o in released.outcomes if o.sample_key == "v1/02")
    assert [r.passed for r in blank.rules] == [False, True, True] and blank.status == "judged"


def test_a_video_the_file_does_not_answer_counts_blank_unless_left_out_as_released(tmp_path: Path) -> None:
    # v2 is missing from the file; v3 is there but answers only one of its two instructions
    dataset = _dataset(("v1", "01"), ("v2", "01"), ("v3", "01"), ("v3", "02"))
    file = {"v1": [{"prompt_id": "01", "response": RESPONSE}], "v3": [{"prompt_id": "01", "response": RESPONSE}]}
    ours, _ = _score(tmp_path, dataset, file)
    # 3 + 0 + 3 + 0 of 4 each: CSR micro 6/16
    assert ours.scores.overall.csr_micro == pytest.approx(37.5) and ours.n_scored == 4 and ours.left_out_videos == []
    released, calls = _score(tmp_path, dataset, file, "ifvidcap.missing_response=leave_out")
    # the released script scores only v1: 3/4; v3 goes too (its responses do not line up with its prompts)
    assert released.scores.overall.csr_micro == pytest.approx(75.0) and calls == 4
    assert released.left_out_videos == ["v2", "v3"] and (released.n_samples, released.n_scored) == (4, 1)
    assert [o.sample_key for o in released.outcomes] == ["v1/01"]


def test_a_null_response_counts_unanswered_and_the_paper_config_drops_its_video_as_released(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 42: a file with ``"response": null`` (an inference script's failed call) was refused. The released
    scorer fails on it (``response[:max_token]`` raises, the video is caught and never written), so under
    ``--config paper`` the video leaves the metrics; by default it is an unanswered instruction, scored blank."""
    dataset = _dataset(("v1", "01"), ("v2", "01"), ("v2", "02"))
    file = {"v1": [{"field": "f", "prompt_id": "01", "response": RESPONSE}],
            "v2": [{"field": "f", "prompt_id": "01", "response": None}, {"field": "f", "prompt_id": "02", "response": RESPONSE}]}
    ours, calls = _score(tmp_path, dataset, file)
    # 3 + 0 + 3 of 4 each: CSR micro 6/12; the null one is not judged
    assert ours.scores.overall.csr_micro == pytest.approx(50.0) and calls == 8 and ours.empty_responses == ["v2/01"]
    assert "a null response for 1 instruction(s) (v2/01); they count as unanswered" in caplog.text
    released, calls = _score(tmp_path, dataset, file, base=load_config("paper"))
    # the release scores v1 alone (3 of 4); v2 goes, with its answered instruction
    assert released.scores.overall.csr_micro == pytest.approx(75.0) and calls == 4
    assert released.left_out_videos == ["v2"] and [o.sample_key for o in released.outcomes] == ["v1/01"]


def test_the_release_config_switches_both_on() -> None:
    paper, ours = load_config(REPO / "configs" / "paper.yaml").ifvidcap, Config().ifvidcap
    assert (paper.empty_response, paper.missing_response) == ("judge", "leave_out")
    assert (ours.empty_response, ours.missing_response) == ("unsatisfied", "blank")
