"""VidCapBench prompts (this project's words, the released protocol) and the two ways a grade is read.

- ``answer``: one question answered from the caption alone, in a short sentence or phrase;
- ``grade``: the answer graded against the reference: 2 (correct and complete), 1 (partly, without
  contradiction), 0 (not mentioned), -1 (contradicts or misrepresents), with the released scorer's rules
  for misidentified subjects, specific entities, pronouns and near colours.

Templates (``viddiff.templates``): ``vidcapbench.prompt_files`` replaces them. Grades are A (2), B (1),
C (0), D (-1). ``vidcapbench.grade_reading`` picks how a reply becomes a grade: ``structured`` reads the
``score`` field of a JSON answer; ``substring`` is the released reading of the whole reply text.
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, field_validator

from viddiff.config import VidcapbenchPromptFiles
from viddiff.templates import TemplateSet, load_templates

PROMPT_VERSION = "vidcapbench-1"
Grade = Literal["A", "B", "C", "D"]
GRADE_OF_SCORE: dict[int, Grade] = {2: "A", 1: "B", 0: "C", -1: "D"}
GRADE_NAMES: dict[str, str] = {
    "A": "correct", "B": "partly correct, no contradiction", "C": "not mentioned", "D": "contradiction",
}

ANSWER = """\
You answer questions about a video (or an image) using only a detailed written description of it. Keep your \
answer to a short sentence or a phrase.

Description:
{caption}

Question:
{question}"""

GRADE = """\
You are an impartial, objective judge of answers a language model gave to questions. Decide how fully and \
accurately the predicted answer conveys the correct answer: first understand what the question and the \
correct answer say, then check whether the predicted answer reflects it, and give a short analysis explaining \
your score.

Score it on this scale:
- 2: the predicted answer conveys the correct answer completely and accurately.
- 1: the predicted answer mentions the correct answer, but imprecisely or incompletely, without contradicting it.
- 0: the predicted answer does not mention the correct answer at all.
- -1: the predicted answer contradicts the correct answer or misrepresents part of it.
Rules:
(1) If the predicted answer names a subject the correct answer does not, and it is probably a \
misidentification of a subject of the correct answer, score -1.
(2) If the correct answer is about a specific entity, judge first whether that subject is mentioned or \
contradicted; only if the subject is right, judge its attributes, states or actions.
(3) If the correct answer refers to its subject only by a pronoun ("it", "the person"), judge only the \
attributes, states or actions.
(4) If the predicted answer names a colour with a different but similar word, score 1.
(5) Give your result as a JSON object {"score": <2, 1, 0 or -1>, "analysis": "<your analysis>"}.

Question: {question}
Correct Answer: {answer}
Predicted Answer: {prediction}

Your Result:"""

BUILT_IN = {"answer": ANSWER, "grade": GRADE}


def vidcapbench_templates(files: Optional[dict[str, Optional[str]]] = None) -> TemplateSet:
    return load_templates(VidcapbenchPromptFiles.FAMILY, files or {}, BUILT_IN)


class CaptionGrade(BaseModel):
    """The grader's structured answer; ``score`` may come as a number or its text ("-1")."""

    model_config = ConfigDict(extra="ignore")

    score: Literal[2, 1, 0, -1]
    analysis: str = ""

    @field_validator("score", mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value.strip())
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return value


def read_grade_substring(reply: str) -> Optional[Grade]:
    """The released reading of a grader's reply: "2" anywhere gives A, else "-1" gives D, else "1" gives B,
    else "0" gives C, else no grade. Digits in the analysis count too ("2 people" reads A; "10" reads B)."""
    for token, grade in (("2", "A"), ("-1", "D"), ("1", "B"), ("0", "C")):
        if token in reply:
            return grade  # type: ignore[return-value]
    return None
