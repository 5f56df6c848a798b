"""Judge prompt for ViDiC-1K: answer one checklist question from a generated description alone.

The judge never sees the videos: a checklist item is credited only when the
description itself says (or clearly implies) the right thing. The rules
follow the ViDiC-1K protocol: default to "the same" unless a difference is
stated; accept a difference only on explicit content or reasonable
inference. The judge is told whether an item is a similarity or a difference
item (the two kinds are phrased differently) but never which answer to
expect, and a loosely worded statement earns a difference item only if it
gives the specific detail the question asks about.

The texts are templates (``viddiff.templates``): ``vidic.prompt_files``
replaces them with a user's files. ``PROMPT_VERSION`` names the built-in
texts and must change whenever they or the answer format change; the hash of
the texts actually used is recorded in ``metrics.json``.
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, field_validator

from viddiff.benchmarks.vidic.data import ChecklistKind
from viddiff.config import VidicPromptFiles
from viddiff.templates import TemplateSet, load_templates

PROMPT_VERSION = "vidic-judge-2"

JUDGE_SYSTEM = (
    "You grade written comparisons of two videos. You have not seen the videos and must not guess what they "
    "show: you judge only from the text you are given, and you answer only in JSON."
)

KIND_NOTES: dict[str, str] = {
    "similarity": "It is a similarity item of the checklist.",
    "difference": "It is a difference item of the checklist.",
}
"""What the judge is told about an item's kind: the kind only, never the answer it should expect."""

JUDGE_TEMPLATE = """\
A system watched two videos, Video A and Video B, and wrote the description below of how they are alike \
and how they differ.

<description>
{description}
</description>

Checklist question ({kind}): {kind_note}
<question>
{question}
</question>

Answer the question with "yes" or "no" using only what the description says, by these rules:
1. Default to "the same": when the description states no difference for the aspect the question is about, \
the two videos count as the same in that aspect.
2. Accept a difference only when the description states it explicitly, or when it follows from what is stated \
by reasonable inference. Do not invent details the description does not give.
3. Wording may differ from the question's, but the content must not be vaguer: a statement supports a \
difference only if it gives the specific detail the question asks about (which way, what, where). A remark \
that the videos differ in that aspect without that detail does not.

Answer with a JSON object {"answer": "yes" or "no", "explanation": "<one or two sentences naming the part \
of the description you relied on, or saying that it states nothing about this aspect>"}."""

BUILT_IN = {"system": JUDGE_SYSTEM, "judge": JUDGE_TEMPLATE}


def vidic_templates(files: Optional[dict[str, Optional[str]]] = None) -> TemplateSet:
    """The judge templates to use: the user's files (``vidic.prompt_files``) where given, else the built-in ones."""
    return load_templates(VidicPromptFiles.FAMILY, files or {}, BUILT_IN)


class ChecklistJudgeAnswer(BaseModel):
    """The judge's verdict on one checklist question; case and surrounding spaces of ``answer`` are forgiven."""

    model_config = ConfigDict(extra="forbid")

    answer: Literal["yes", "no"]
    explanation: str

    @field_validator("answer", mode="before")
    @classmethod
    def _normalise(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value


def judge_prompt(description: str, question: str, kind: ChecklistKind, templates: Optional[TemplateSet] = None) -> str:
    """The user message for one checklist item."""
    return (templates or vidic_templates())["judge"].render(
        description=description.strip(), question=question.strip(), kind=kind, kind_note=KIND_NOTES[kind]
    )
