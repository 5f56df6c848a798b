"""Judge prompt for ViDiC-1K: answer one checklist question from a generated description alone.

The judge never sees the videos: a checklist item is credited only when the
description itself says (or clearly implies) the right thing. The rules
follow the ViDiC-1K protocol: default to "the same" unless a difference is
stated; accept a difference only on explicit content or reasonable
inference; judge broad wording by its main idea. As in the reference judge,
the prompt says whether the item checks a similarity or a difference, since
the questions are phrased differently for the two kinds.

``PROMPT_VERSION`` is recorded in ``metrics.json`` and must change whenever
the wording or the answer format changes: scores from different judge
prompts are not comparable.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from viddiff.schema import ChecklistKind

PROMPT_VERSION = "vidic-judge-1"

JUDGE_SYSTEM = (
    "You grade written comparisons of two videos. You have not seen the videos and must not guess what they "
    "show: you judge only from the text you are given, and you answer only in JSON."
)

_KIND_NOTE: dict[str, str] = {
    "similarity": "This question checks an aspect in which the two videos are expected to be the same.",
    "difference": "This question checks an aspect in which the two videos may differ.",
}

_TEMPLATE = """\
A system watched two videos, Video A and Video B, and wrote the description below of how they are alike \
and how they differ.

<description>
{description}
</description>

Checklist question ({kind}): {note}
<question>
{question}
</question>

Answer the question with "yes" or "no" using only what the description says, by these rules:
1. Default to "the same": when the description states no difference for the aspect the question is about, \
the two videos count as the same in that aspect.
2. Accept a difference only when the description states it explicitly, or when it follows from what is stated \
by reasonable inference. Do not invent details the description does not give.
3. Judge broad or loosely worded statements by their main idea: a statement that captures the gist of the \
difference counts, even if it is less specific or worded differently than the question.

Answer with a JSON object {{"answer": "yes" or "no", "explanation": "<one or two sentences naming the part \
of the description you relied on, or saying that it states nothing about this aspect>"}}."""


class VidicJudgeAnswer(BaseModel):
    """The judge's verdict on one checklist question; case and surrounding spaces of ``answer`` are forgiven."""

    model_config = ConfigDict(extra="forbid")

    answer: Literal["yes", "no"]
    explanation: str

    @field_validator("answer", mode="before")
    @classmethod
    def _normalise(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value


def judge_prompt(description: str, question: str, kind: ChecklistKind) -> str:
    """The user message for one checklist item."""
    return _TEMPLATE.format(description=description.strip(), question=question.strip(), kind=kind, note=_KIND_NOTE[kind])
