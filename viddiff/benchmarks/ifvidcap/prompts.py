"""IF-VidCap prompts, in this project's words, following the benchmark's protocol.

- ``caption_system``: the captioner's system message (the benchmark's test-model prompt: a controlled
  caption that follows the instructions strictly, the frame rate named, nothing added around it);
- ``extract_system``: the span extractor's system message. It is shown the response and one rule item
  (as the checklist holds it, ``content`` null) and returns the spans to check, copied verbatim;
- ``extract_retry``: what the extractor is told when a span is not found in the response;
- ``open_system``: the open-question judge's system message. It answers one multiple-choice or yes/no
  question from the response alone (the video is never shown).

The user messages are JSON built by the scorer, as in the released pipeline. The texts are templates
(``viddiff.templates``): ``ifvidcap.prompt_files`` replaces them with a user's files (for instance the
authors' wording); ``PROMPT_VERSION`` names the built-in texts, and the hash of the texts used is recorded.
"""

from __future__ import annotations

from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, field_validator

from viddiff.config import IfvidcapPromptFiles
from viddiff.templates import TemplateSet, load_templates

PROMPT_VERSION = "ifvidcap-1"

CAPTION_SYSTEM = """\
You write controlled captions of videos. Using the video and the instructions below, write the caption the \
instructions ask for, accurately and exactly in the requested form. The video is shown to you at {fps} frames \
per second. Follow every instruction to the letter. Write only the caption: no greeting, no introduction, no \
closing remark and no explanation of what you did.

The instructions:"""

EXTRACT_SYSTEM = """\
You are an extraction step in an automatic checker of video captions. You receive a JSON object with a \
"response" (a caption written by a model) and a "checkitem" (one formatting constraint the caption must meet). \
Your only job is to copy out of the response the text that the constraint has to be checked on. You do not \
judge whether the constraint is met: a program does that afterwards, on exactly the text you return.

The checkitem has a "constraint_id", a "check_description" saying what is required, and "parameters" for the \
program (its "content" is empty: that is what you fill in). The constraint types:
- plain_text: the text must be plain prose, without lists, tables or JSON.
- json_object / json_array: the text must be a JSON object / array matching a schema.
- unordered_list / ordered_list: the text must be a bulleted / numbered list, one item per line.
- table: the text must be a Markdown table with the given column names.
- keyword: the text must include / must not include a word or phrase.
- markdown: the text must use a Markdown element (heading, bold, highlight, italic, code).
- prefix_suffix: the text must start and/or end with given strings.
- delimiter: parts of the text must be separated by a given symbol.
- length: the text must have a number of words, sentences, paragraphs or characters within bounds.
- count: the described things must be present in a number within bounds.
- case: the English words must be upper case, lower case or title case.
- language: the text must be in English / in Chinese.

Rules:
1. Return {"content": [...]}: a list of strings. The program checks every string and the constraint holds \
only if all of them pass, so use several strings only when the text to check is in separate places.
2. Copy character for character. Do not correct, reformat, shorten, translate or explain; do not add or drop \
characters at either end (this matters for prefix and suffix checks); keep Markdown marks such as ** where \
they are part of the text.
3. Give the whole part the constraint is about: a whole list or a whole JSON value as one string, a whole \
table as one string.
4. For a length or language check on list items, leave out the list markers ("-", "1.", "A.") and give the \
item texts; for a language check leave out structural characters such as braces.
5. For count, do not copy text: return one string that lists the things actually present, each in \
parentheses, separated by commas, like "(a red car),(a dog),(a tree)". List every one that is there, even \
more or fewer than the constraint asks for. If none is there, return [""].
6. If the response has nothing the constraint could be checked on (no table at all, say), return [""].

Answer with the JSON object only."""

EXTRACT_RETRY = """\
At least one string you returned does not occur in the response exactly as you wrote it, so it is not an \
extraction. Extract again: every string must be an exact, unchanged copy of a part of the response, with \
nothing rephrased, added or interpreted."""

OPEN_SYSTEM = """\
You evaluate video captions. You receive a JSON object with the "prompt" the captioner was given, its \
"response", a "question" about the response and the answer "options". You have not seen the video: answer \
only from what the response actually says, and choose the option that fits it best. Questions with options \
"yes" and "no" ask whether the response does something; answer "yes" or "no". Other questions have lettered \
options; answer with the letter alone (A, B, C or D).

Answer with a JSON object {"answer": <the letter, or "yes"/"no">, "result_explanation": <one or two \
sentences citing the response>, "result_confidence": <1 to 5>}."""

BUILT_IN = {
    "caption_system": CAPTION_SYSTEM,
    "extract_system": EXTRACT_SYSTEM,
    "extract_retry": EXTRACT_RETRY,
    "open_system": OPEN_SYSTEM,
}


def ifvidcap_templates(files: Optional[dict[str, Optional[str]]] = None) -> TemplateSet:
    """The templates to use: the user's files (``ifvidcap.prompt_files``) where given, else the built-in ones."""
    return load_templates(IfvidcapPromptFiles.FAMILY, files or {}, BUILT_IN)


def caption_system(templates: TemplateSet, fps: float) -> str:
    return templates["caption_system"].render(fps=f"{fps:g}")


class SpanAnswer(BaseModel):
    """The extractor's spans; a bare string is read as one span, as the released checker reads it."""

    model_config = ConfigDict(extra="ignore")

    content: list[str]

    @field_validator("content", mode="before")
    @classmethod
    def _one_string(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class OpenJudgeAnswer(BaseModel):
    """The open-question judge's choice; ``answer`` is read as released (its first letter if that is A-D)."""

    model_config = ConfigDict(extra="ignore")

    answer: str = Field(min_length=1)
    result_explanation: str = ""
    result_confidence: Optional[int] = None

    @field_validator("result_confidence", mode="before")
    @classmethod
    def _lenient_confidence(cls, value: Any) -> Any:
        try:
            return int(value)
        except (TypeError, ValueError):
            return None


def read_choice(answer: str) -> str:
    """The released reading: the first character when it is one of A-D, else the whole answer, unchanged
    (so "B. blue" reads ``B``, while "Yes" stays "Yes" and fails against "yes")."""
    return answer[0] if answer[0] in "ABCD" else answer
