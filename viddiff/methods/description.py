"""Describe mode's last step: verified differences → a text about the pair.

A checklist judge (description benchmarks) reads only this text and defaults to "the videos are the
same" unless a difference is stated, so the renderer states each verified
difference explicitly for both videos ("In Video A …; in Video B …"), keeps
similarities short, and says nothing about what was never verified:
differences the VLM gave no valid answer on are left out (the caller counts
them in the sample's notes), never guessed.
"""

from __future__ import annotations

from typing import Optional

from viddiff.schema import DIMENSION_NAMES, DIMENSIONS
from viddiff.schema import Difference, Prediction

NOTHING_ESTABLISHED = "No differences or similarities between the two videos could be established."


def render_description(differences: list[Difference], predictions: list[Prediction]) -> str:
    """One section per dimension in ``viddiff.schema.DIMENSIONS`` order (differences first, then similarities), then
    an "Other" section for differences without a known category; empty sections are left out.

    ``a``/``b`` verdicts become differences, ``c`` verdicts similarities; differences without a valid
    verdict (``None`` or no prediction at all) are omitted.
    """
    verdicts = {p.key: p.prediction for p in predictions}
    groups: dict[Optional[str], tuple[list[str], list[str]]] = {c: ([], []) for c in (*DIMENSIONS, None)}
    for diff in differences:
        verdict = verdicts.get(diff.key)
        found, similar = groups[diff.category if diff.category in DIMENSIONS else None]
        if verdict in ("a", "b"):
            found.append(difference_sentence(diff, verdict))
        elif verdict == "c":
            similar.append(similarity_sentence(diff))
    sections = []
    for category, (found, similar) in groups.items():
        if found or similar:
            title = DIMENSION_NAMES[category] if category is not None else "other"
            lines = "\n".join(f"- {line}" for line in found + similar)
            sections.append(f"{title[:1].upper()}{title[1:]}:\n{lines}")
    return "\n\n".join(sections) or NOTHING_ESTABLISHED


def difference_sentence(diff: Difference, verdict: str) -> str:
    """Both sides of a difference from one statement and its contrast, in A-then-B order.

    Without a contrast (a difference not proposed in describe mode), the statement is said to hold
    more of the video it was judged more true of.
    """
    more, less = ("A", "B") if verdict == "a" else ("B", "A")
    if not diff.contrast:
        return f"In Video {more} more than in Video {less}, {_clause(diff.description)}."
    said = {more: _clause(diff.description), less: _clause(diff.contrast)}
    return f"In Video A, {said['A']}; in Video B, {said['B']}."


def similarity_sentence(diff: Difference) -> str:
    """A ``c`` verdict, kept short: the aspect the videos share."""
    return f"Similar in both videos: {_clause(diff.name)}."


def omitted_note(predictions: list[Prediction]) -> list[str]:
    """The sample note for verdicts left out of the description because no valid answer came back."""
    invalid = [p.key for p in predictions if p.prediction is None]
    if not invalid:
        return []
    return [f"{len(invalid)} difference(s) without a valid verdict left out of the description: {', '.join(invalid)}"]


def _clause(text: str) -> str:
    """A statement as a clause inside a sentence: trimmed, final punctuation dropped, and an initial
    capital lowered only on a common opening word ("The camera…" → "the camera…"), so names keep theirs."""
    text = " ".join(text.split()).rstrip(".;:, ")
    first = text.split(" ", 1)[0]
    return text[:1].lower() + text[1:] if first.lower() in _OPENING_WORDS else text


_OPENING_WORDS = frozenset(
    "the a an this that these those there it its they their he his she her one each both more less some".split()
)
