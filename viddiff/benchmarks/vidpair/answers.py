"""How the VidPair-Halluc release reads answers, exactly, and where that reading is fragile (pure functions).

Yes/no (``extract_yes_no`` in both released binary scorers): lower-case and strip; a few exact strings
("", "unknown", "error", "file not found", ...) are unknown; then an answer *starting with* ``yes`` or ``no``,
else one *containing* ``yes``, else one containing ``no``. Plain substrings, no word boundaries: "I do not know"
reads as no ("not"), "The eyes are closed. No." as yes ("eyes"), "None" as no. :func:`fragile_trigger` names
the word behind every reading that a whole-word reading would not give, so reports can count them.

Multiple choice (``extract_answer_sequence`` of ``evaluate_mcq.py``, clip level, the mode its ``main`` runs):
strip, upper-case, delete all whitespace, then compare strings exactly: "A, C" is not "AC", "CA" is not "AC",
"Answer: B" is not "B". :func:`lenient_letters` is our diagnostic reading, used only to count answers that
miss on form alone.
"""

from __future__ import annotations

import re
from typing import Any, Literal, Optional, Sequence

YesNo = Literal["yes", "no", "unknown"]

UNKNOWN_ANSWERS = frozenset(
    {"", "unknown", "文件未找到", "file not found", "video not found", "error", "无法处理", "cannot process"}
)
"""Exact (stripped, lower-cased) answers both binary scorers read as unknown."""
CLIPQA_INVALID = UNKNOWN_ANSWERS | {"推理失败", "inference failed"}
"""``clipqa.py``'s ``is_valid_prediction`` refuses these too."""
VIDEOQA_LOOSE_INVALID = frozenset({"", "unknown", "文件未找到", "file not found", "video not found"})
"""``videoqa.py``'s pairing check counts every other answer as a prediction (so "error" counts there)."""


def read_yes_no(answer: Any) -> YesNo:
    """The release's reading of a yes/no answer (``extract_yes_no``)."""
    if not isinstance(answer, str):
        return "unknown"
    text = answer.strip().lower()
    if text in UNKNOWN_ANSWERS:
        return "unknown"
    if text.startswith("yes"):
        return "yes"
    if text.startswith("no"):
        return "no"
    if "yes" in text:
        return "yes"
    if "no" in text:
        return "no"
    return "unknown"


def clipqa_valid(answer: Optional[str]) -> bool:
    """``clipqa.py``'s ``is_valid_prediction``: present, not a known failure string, and containing yes or no."""
    if answer is None:
        return False
    text = str(answer).strip().lower()
    return text not in CLIPQA_INVALID and ("yes" in text or "no" in text)


def videoqa_counts_as_prediction(answer: Optional[str]) -> bool:
    """Whether ``videoqa.py``'s pairing check counts the answer (looser than a yes/no reading)."""
    return answer is not None and answer.strip().lower() not in VIDEOQA_LOOSE_INVALID


def word_yes_no(answer: str) -> YesNo:
    """A whole-word reading (ours, only to find fragile readings): first word yes/no, else the only one of the
    two words that occurs."""
    words = re.findall(r"[a-z]+", answer.lower())
    if not words:
        return "unknown"
    if words[0] in ("yes", "no"):
        return words[0]  # type: ignore[return-value]
    has_yes, has_no = "yes" in words, "no" in words
    if has_yes != has_no:
        return "yes" if has_yes else "no"
    return "unknown"


def fragile_trigger(answer: Optional[str]) -> Optional[str]:
    """The word that made the release read yes or no where the whole word says otherwise ("not", "know",
    "eyes", "none", ...); ``None`` when the reading is sound or unknown."""
    if answer is None:
        return None
    reading = read_yes_no(answer)
    if reading == "unknown" or reading == word_yes_no(answer):
        return None
    text = answer.strip().lower()
    words = re.findall(r"[a-z]+", text)
    if text.startswith(reading) and words:
        return words[0]
    return next((w for w in words if reading in w), reading)


def read_letters(answer: Any) -> Any:
    """The release's multiple-choice reading (``extract_answer_sequence``): non-strings unchanged, else
    upper-cased with all whitespace removed."""
    if not isinstance(answer, str):
        return answer
    return "".join(answer.strip().upper().split())


def lenient_letters(answer: str, letters: Sequence[str]) -> str:
    """Our diagnostic reading: the option letters an answer names, in order ("A, C" and "Answer: A and C" ->
    "AC"); only used to count answers the release's exact reading fails on form alone."""
    text = answer.upper()
    allowed = set(letters) or set("ABCDEFGHIJ")
    named = [c for c in re.findall(r"\b([A-Z])\b", text) if c in allowed]
    if named:
        return "".join(named)
    compact = re.sub(r"[^A-Z]", "", text)
    return compact if compact and set(compact) <= allowed else ""
