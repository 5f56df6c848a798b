"""The words a model reads for a VidPair-Halluc question, and our open-ended judge's prompt (all our own wording).

The release's GPT-4o script sends one user message: an instruction for the question's type, a line
``Question: <question>``, then one grid image of the video; no system message. :func:`task_prompt` keeps that
shape with our own instruction text, which says how the frames are shown (one grid image, or frames in order)
and, for pair-aware answering (beyond the paper), which of two videos the question is about.
"""

from __future__ import annotations

import re
from typing import Sequence

PROMPT_VERSION = "vidpair-v1"
"""Version of the task and judge wording below; recorded with every score."""

INTRO = "You are an expert at answering questions about videos."
FRAMES_NOTE = "The images are frames of the video, in time order."
GRID_NOTE = (
    "The image shows keyframes of the video arranged in a grid, in time order from left to right and top to "
    "bottom, with white bands between them."
)
PAIR_FRAMES_NOTE = (
    "Two videos are shown, each as frames in time order: Video 1, which the question is about, and Video 2, the "
    "other video of its pair, shown only for comparison. They share a background but may differ in what happens "
    "in front of it. Answer about Video 1 only."
)
PAIR_GRID_NOTE = (
    "Two videos are shown, each as one image of its keyframes arranged in a grid (time order from left to right "
    "and top to bottom, white bands between frames): Video 1, which the question is about, and Video 2, the other "
    "video of its pair, shown only for comparison. They share a background but may differ in what happens in "
    "front of it. Answer about Video 1 only."
)
INSTRUCTIONS = {
    "binary": "Answer the question about the video with Yes or No only.",
    "multiple_choice": (
        "Answer the multiple-choice question about the video. Reply with only the letter or letters of the "
        "correct options (for example A, or AC), with no other text."
    ),
    "open_ended": "Answer the question briefly, naming the main events, people and objects that appear in the video.",
}
QUESTION_MARK = "\nQuestion: "


def with_options(question: str, choices: Sequence[tuple[str, str]]) -> str:
    """The question as the model reads it: the options listed after it (``A. text``), unless the question's
    own text already lists every one of them."""
    if not choices or all(_listed(question, letter, text) for letter, text in choices):
        return question
    return question.rstrip() + "\n" + "\n".join(f"{letter}. {text}" for letter, text in choices)


def _listed(question: str, letter: str, text: str) -> bool:
    return re.search(rf"(^|\s|\(){re.escape(letter)}[.):]\s*{re.escape(text.strip())}", question) is not None


def task_prompt(question_type: str, question: str, *, grid: bool, pair_aware: bool) -> str:
    """Instruction, then ``Question: ...`` (see the module docstring)."""
    if pair_aware:
        note = PAIR_GRID_NOTE if grid else PAIR_FRAMES_NOTE
    else:
        note = GRID_NOTE if grid else FRAMES_NOTE
    return f"{INTRO} {note} {INSTRUCTIONS[question_type]}{QUESTION_MARK}{question}"


JUDGE_SYSTEM = (
    "You grade short answers about videos against a reference answer written by people who watched the video. "
    "You do not see the video."
)
JUDGE_PROMPT = (
    "A model answered an open question about a video. Compare its answer with the reference answer and give an "
    "integer score from 0 to 10: 10 when the answer states what the reference states and adds nothing that "
    "contradicts it or is absent from it; lower scores for missing key content; the lowest scores when the answer "
    "describes objects, people, actions or events that the reference does not support (a hallucination). Say in "
    "one sentence why.\n\n"
    "<question>\n{question}\n</question>\n\n<reference>\n{reference}\n</reference>\n\n"
    "<answer>\n{answer}\n</answer>\n\n"
    'Reply in JSON: {{"score": <0-10>, "explanation": "<one sentence>"}}'
)
"""Our open-ended judge (the release publishes none): not the paper's "Open Desc." score."""


def judge_prompt(question: str, reference: str, answer: str) -> str:
    return JUDGE_PROMPT.format(question=question, reference=reference, answer=answer)
