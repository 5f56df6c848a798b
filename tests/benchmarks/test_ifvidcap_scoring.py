"""IF-VidCap scoring over a real local chat server: verbatim re-asks (per item, and the released shared budget
with its stale spans), the 2,048-character judge view, the released reading of open answers, empty
responses, judge failures and checks that raise."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from viddiff.benchmarks.ifvidcap.data import Checklist, IfvidcapDataset, Instruction, sample_key
from viddiff.benchmarks.ifvidcap.prompts import EXTRACT_RETRY
from viddiff.benchmarks.ifvidcap.scoring import evaluate_ifvidcap
from viddiff.config import Config
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer
from viddiff.schema import Sample, VideoRef, VideoTask


def _dataset(*items: tuple[str, str, dict[str, Any]]) -> IfvidcapDataset:
    """(video_id, prompt_id, checklist) per instruction."""
    samples, instructions = [], {}
    for video_id, prompt_id, checklist in items:
        key = sample_key(video_id, prompt_id)
        samples.append(Sample(sample_key=key, action="f", action_name="f", action_description="", split="test",
                              domain="ifvidcap", videos=(VideoRef(path=f"/videos/{video_id}.mp4"),),
                              task=VideoTask(prompt="Describe it.")))
        instructions[key] = Instruction(video_id=video_id, prompt_id=prompt_id, field="f", prompt="Describe it.",
                                        checklist=Checklist.model_validate(checklist))
    return IfvidcapDataset(samples, "test", None, Path("/videos"), instructions=instructions)


def _rule(n: int, constraint: str, **params: Any) -> dict[str, Any]:
    return {"check_id": f"rule-{n:03d}", "constraint_id": constraint, "check_description": constraint,
            "parameters": {"content": None, **params}}


def _open(question: str, correct: str, options: list[str]) -> dict[str, Any]:
    return {"check_id": "open-001", "check_type": "correctness", "question": question, "options": options,
            "correct_answer": correct}


def _payload(req: ChatRequest) -> dict[str, Any]:
    text = next(t for t in req.texts if t.lstrip().startswith("{"))
    return json.JSONDecoder().raw_decode(text)[0]


def _score(tmp_path: Path, responder: Callable[[ChatRequest], str], dataset: IfvidcapDataset, responses: dict, *sets: str):
    with FakeOpenAIServer(responder) as server:
        cfg = Config().with_overrides([f"endpoints.default.base_url={server.base_url}", f"cache.path={tmp_path / 'c.sqlite'}",
                                       "endpoints.backoff_base_s=0.01", *sets])
        metrics = evaluate_ifvidcap(dataset, responses, cfg)
        return metrics, list(server.requests)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")


RESPONSE = "- a red car\n- a dog"


def _paraphrasing(times: dict[str, int]) -> Callable[[ChatRequest], str]:
    """Extractor answers with a paraphrase ``times[check_id]`` times, then with the response verbatim."""
    seen: dict[str, int] = {}

    def respond(req: ChatRequest) -> str:
        item = _payload(req)["checkitem"]
        seen[item["check_id"]] = seen.get(item["check_id"], 0) + 1
        if item["constraint_id"] == "count":
            return json.dumps({"content": ["(a red car),(a dog)"]})
        if seen[item["check_id"]] <= times.get(item["check_id"], 0):
            return json.dumps({"content": ["- A RED CAR\n- A DOG"]})  # not in the response
        return json.dumps({"content": [_payload(req)["response"]]})

    return respond


def test_a_span_not_in_the_response_is_re_asked_with_the_last_answer(tmp_path: Path) -> None:
    data = _dataset(("v", "01", {"ruled_based_check": [_rule(1, "unordered_list", symbol="-"), _rule(2, "length", unit="word", max_len=3)]}))
    metrics, requests = _score(tmp_path, _paraphrasing({"rule-001": 2}), data, {"v": [{"prompt_id": "01", "response": RESPONSE}]})
    first, second = metrics.outcomes[0].rules
    assert (first.calls, first.verbatim, first.passed) == (3, True, True)
    assert (second.calls, second.verbatim, second.passed) == (1, True, False)  # 5 words > 3
    retries = [r for r in requests if len(r.messages) == 4]
    assert len(retries) == 2
    system, user, assistant, retry = retries[0].messages
    assert system["role"] == "system" and assistant == {"role": "assistant", "content": json.dumps(["- A RED CAR\n- A DOG"])}
    assert EXTRACT_RETRY in retry["content"]
    assert metrics.unverified_spans == 0 and metrics.stale_spans == 0


def test_per_item_budget_scores_the_last_extraction_when_it_is_never_verbatim(tmp_path: Path) -> None:
    data = _dataset(("v", "01", {"ruled_based_check": [_rule(1, "unordered_list", symbol="-")]}))
    metrics, requests = _score(tmp_path, _paraphrasing({"rule-001": 99}), data, {"v": [{"prompt_id": "01", "response": RESPONSE}]},
                               "ifvidcap.span_tries=3")
    (rule,) = metrics.outcomes[0].rules
    assert (rule.calls, rule.verbatim, rule.passed, rule.spans) == (3, False, True, ["- A RED CAR\n- A DOG"])
    assert len(requests) == 3 and metrics.unverified_spans == 1


def test_the_released_shared_budget_leaves_later_items_stale(tmp_path: Path) -> None:
    checklist = {"ruled_based_check": [_rule(1, "unordered_list", symbol="-"), _rule(2, "case", case_type="lower"),
                                       _rule(3, "count", min_count=2, max_count=2)]}
    data = _dataset(("v", "01", checklist))
    responses = {"v": [{"prompt_id": "01", "response": RESPONSE}]}
    metrics, requests = _score(tmp_path, _paraphrasing({"rule-001": 99}), data, responses,
                               "ifvidcap.span_tries=2", "ifvidcap.span_budget=per_instruction")
    first, second, third = metrics.outcomes[0].rules
    assert first.calls == 2 and not first.stale and first.verbatim is False
    # the budget is spent: the case item and even the count item are not asked and reuse rule-001's spans
    assert (second.calls, second.stale, second.spans, second.passed) == (0, True, ["- A RED CAR\n- A DOG"], False)
    assert (third.calls, third.stale, third.passed) == (0, True, False)
    assert len(requests) == 2 and metrics.stale_spans == 2
    per_item, _ = _score(tmp_path / "b", _paraphrasing({"rule-001": 99}), data, responses, "ifvidcap.span_tries=2")
    assert [r.passed for r in per_item.outcomes[0].rules] == [True, True, True]
    assert [r.stale for r in per_item.outcomes[0].rules] == [False, False, False]


def test_the_judges_see_2048_characters_and_spans_are_checked_against_the_whole_response(tmp_path: Path) -> None:
    long = "x" * 2500 + " TAIL END"

    def respond(req: ChatRequest) -> str:
        assert len(_payload(req)["response"]) == 2048
        return json.dumps({"content": ["TAIL END"]})  # beyond what it saw, but in the response

    data = _dataset(("v", "01", {"ruled_based_check": [_rule(1, "prefix_suffix", suffix="END")]}))
    metrics, _ = _score(tmp_path, respond, data, {"v": [{"prompt_id": "01", "response": long}]})
    (rule,) = metrics.outcomes[0].rules
    assert rule.verbatim is True and rule.passed and rule.calls == 1


@pytest.mark.parametrize(
    "answer, correct, passed",
    [("B. blue", "B", True), ("B", "B", True), ("b", "B", False), ("yes", "yes", True), ("Yes", "yes", False)],
)
def test_open_answers_are_read_as_released(tmp_path: Path, answer: str, correct: str, passed: bool) -> None:
    def respond(req: ChatRequest) -> str:
        assert "video" not in _payload(req)  # the judge never sees the video
        return json.dumps({"answer": answer, "result_explanation": "because", "result_confidence": 5})

    options = ["yes", "no"] if correct == "yes" else ["A. red", "B. blue"]
    data = _dataset(("v", "01", {"open_ended_check": [{"check_content": "c", "check_items": [_open("Q?", correct, options)]}]}))
    metrics, _ = _score(tmp_path, respond, data, {"v": [{"prompt_id": "01", "response": "A blue sky."}]})
    (item,) = metrics.outcomes[0].groups[0].items
    assert item.passed is passed and metrics.scores.open.csr_micro == (100.0 if passed else 0.0)


def test_an_empty_response_is_not_judged_and_satisfies_nothing(tmp_path: Path) -> None:
    data = _dataset(("v", "01", {"ruled_based_check": [_rule(1, "keyword", keyword="cat", keyword_type="exclude")],
                                  "open_ended_check": [{"check_content": "c", "check_items": [_open("Q?", "yes", ["yes", "no"])]}]}))
    metrics, requests = _score(tmp_path, lambda req: pytest.fail("no request expected"), data, {"v": [{"prompt_id": "01", "response": "  "}]})
    assert requests == [] and metrics.empty_responses == ["v/01"]
    assert metrics.scores.overall.csr_micro == 0.0 and metrics.scores.overall.constraints == 2


def test_judge_failures_fail_the_item_or_drop_the_video(tmp_path: Path) -> None:
    def respond(req: ChatRequest) -> str:
        return "not json" if "Q?" in req.text else json.dumps({"content": [_payload(req)["response"]]})

    data = _dataset(
        ("bad", "01", {"ruled_based_check": [_rule(1, "plain_text")],
                       "open_ended_check": [{"check_content": "c", "check_items": [_open("Q?", "yes", ["yes", "no"])]}]}),
        ("good", "01", {"ruled_based_check": [_rule(1, "plain_text"), _rule(2, "json_object", schema={"type": "bogus"})]}),
    )
    responses = {"bad": [{"prompt_id": "01", "response": "Plain."}], "good": [{"prompt_id": "01", "response": '{"a": 1}'}]}
    metrics, _ = _score(tmp_path, respond, data, responses, "ifvidcap.judge_reasks=1")
    assert len(metrics.item_errors) == 2
    assert any("bad/01 open-001: the judge gave no valid answer" in e for e in metrics.item_errors)
    assert any("good/01 rule-002: the json_object check raised SchemaError" in e for e in metrics.item_errors)
    assert metrics.scores.overall.constraints == 4 and metrics.scores.overall.satisfied_constraints == 1
    dropped, _ = _score(tmp_path, respond, data, responses, "ifvidcap.judge_reasks=1", "ifvidcap.on_judge_failure=drop_video")
    assert dropped.dropped_videos == ["bad", "good"] and dropped.n_scored == 0
    assert dropped.scores.overall.isr is None
