"""Our open-ended score for VidPair-Halluc: a text judge grades each answer against the reference, 0 to 10.

The release publishes no open-ended scorer (no prompt, no scale) although the project page reports an
"Open Desc." column, so this is ours, labelled as ours everywhere, and never printed beside the paper's
columns. One judge call per open question with a reference answer and a non-empty answer, all in flight at
once (the chat client bounds concurrency), cached. A missing or empty answer scores 0 without a call; a judge
answer still invalid after ``eval.max_reasks`` re-asks is left out and listed.
"""

from __future__ import annotations

import asyncio
from typing import Optional, Union

from pydantic import BaseModel, ConfigDict, Field
from tqdm.auto import tqdm

from viddiff.backends.chat import ChatModel
from viddiff.backends.messages import system_message, user_message
from viddiff.benchmarks.vidpair.prompts import JUDGE_SYSTEM, judge_prompt
from viddiff.config import ModelCallConfig
from viddiff.errors import InvalidAnswerError

JUDGE_STAGE = "vidpair_judge"


class DescriptionScoreAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    score: int = Field(ge=0, le=10)
    explanation: str


OpenOutcome = Union[DescriptionScoreAnswer, str, None]
"""The judge's grade, the problem of a failed judgement, or ``None`` (no answer: scored 0, not judged)."""


async def judge_open(
    client: ChatModel, call: ModelCallConfig, items: list[tuple[str, str, Optional[str]]], max_reasks: int
) -> list[OpenOutcome]:
    """Grade ``(question, reference, answer)`` triples (see the module docstring)."""
    judge = client.with_max_reasks(max_reasks)
    bar = tqdm(total=sum(1 for *_, a in items if a and a.strip()), desc="judging open answers", unit="answer", disable=None)

    async def one(question: str, reference: str, answer: Optional[str]) -> OpenOutcome:
        if not answer or not answer.strip():
            return None
        messages = [system_message(JUDGE_SYSTEM), user_message(judge_prompt(question, reference, answer.strip()))]
        try:
            return await judge.complete_json(call, messages, DescriptionScoreAnswer, stage=JUDGE_STAGE, meter=client.usage)
        except InvalidAnswerError as exc:
            return f"{exc}; left out"
        finally:
            bar.update(1)

    try:
        return list(await asyncio.gather(*(one(*item) for item in items)))
    finally:
        bar.close()
        await judge.aclose()
