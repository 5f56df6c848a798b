"""The JSON layer alone: how JSON is asked for, how answers are parsed and checked, how re-asks go."""

from __future__ import annotations

import asyncio
from typing import Optional

import pytest
from pydantic import BaseModel

from viddiff.backends.llm.json_answers import (
    ask_until_valid,
    instruction,
    parse_answer,
    response_format,
    with_instruction,
)
from viddiff.errors import InvalidAnswerError


class Verdict(BaseModel):
    answer: str


class Scripted:
    """A ``send`` that answers from a script and keeps what it was sent."""

    def __init__(self, *answers: Optional[str]):
        self.answers = list(answers)
        self.sent: list[list[dict]] = []

    async def __call__(self, messages: list[dict]) -> Optional[str]:
        self.sent.append(messages)
        return self.answers.pop(0)


def _ask(send: Scripted, validate=None, max_reasks: int = 2) -> tuple[Verdict, str]:
    messages = [{"role": "user", "content": "which?"}]
    return asyncio.run(
        ask_until_valid(send, messages, Verdict, validate, mode="json_object", max_reasks=max_reasks, model="m", stage="s")
    )


def test_json_schema_mode_sends_the_schema_and_json_object_mode_spells_it_out() -> None:
    strict = response_format(Verdict, "json_schema")
    assert strict["type"] == "json_schema" and strict["json_schema"]["name"] == "Verdict"
    assert strict["json_schema"]["schema"]["required"] == ["answer"]
    assert response_format(Verdict, "json_object") == {"type": "json_object"}
    assert '"answer"' in instruction(Verdict, "json_object") and "schema" in instruction(Verdict, "json_schema")


def test_the_instruction_is_appended_without_touching_the_callers_messages() -> None:
    text_only = [{"role": "user", "content": "q"}]
    with_parts = [{"role": "user", "content": [{"type": "text", "text": "q"}]}]
    assert with_instruction(text_only, "JSON!")[-1]["content"] == "q\n\nJSON!"
    assert with_instruction(with_parts, "JSON!")[-1]["content"][-1] == {"type": "text", "text": "JSON!"}
    assert text_only == [{"role": "user", "content": "q"}] and len(with_parts[0]["content"]) == 1


def test_a_fenced_answer_parses_and_validation_rejects_with_value_error() -> None:
    assert parse_answer('```json\n{"answer": "a"}\n```', Verdict) == Verdict(answer="a")

    def only_b(v: Verdict) -> None:
        if v.answer != "b":
            raise ValueError("answer must be b")

    with pytest.raises(ValueError, match="answer must be b"):
        parse_answer('{"answer": "a"}', Verdict, only_b)


def test_an_invalid_answer_is_sent_back_with_what_was_wrong() -> None:
    send = Scripted("not json", None, '{"answer": "a"}')
    answer, raw = _ask(send)
    assert (answer, raw) == (Verdict(answer="a"), '{"answer": "a"}')
    first_reask, second_reask = send.sent[1][-2:], send.sent[2][-2:]
    assert first_reask[0] == {"role": "assistant", "content": "not json"}
    assert "Your previous answer was not valid" in first_reask[1]["content"]
    assert "the answer was empty" in second_reask[1]["content"]


def test_after_the_last_reask_the_error_keeps_the_last_answer() -> None:
    send = Scripted('{"answer": 1}', '{"answer": 2}')
    with pytest.raises(InvalidAnswerError, match=r"m \(s\) gave no valid Verdict answer in 2 attempts") as info:
        _ask(send, max_reasks=1)
    assert info.value.raw == '{"answer": 2}' and info.value.stage == "s" and "answer: Input should be" in str(info.value)
