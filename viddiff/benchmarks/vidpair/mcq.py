"""Multiple-choice scoring as the VidPair-Halluc release does it (``evalaute/evaluate_mcq.py``, clip level; pure).

Answers and ground truth are read with :func:`~.answers.read_letters` (upper case, whitespace removed) and
compared as strings: order and punctuation count. Only questions that have an answer are scored (a missing
answer is dropped, not wrong); an entry with no answer at all is skipped. Every scored answer is a true
positive when it matches and a false positive otherwise, and ``FN`` is fixed at 0, so the release's
precision, recall and "F1" all equal ``TP / (TP + FP)``: **the "MCQ F1" is exact-match accuracy**.

The release's pair accuracy (``qACC``) pairs files named ``*_0.mp4`` with ``*_1.mp4`` and ``*_2.mp4``; on the
published pairs it becomes: one question right on both the positive and the adversarial video.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Optional, Sequence

from pydantic import BaseModel, ConfigDict

from viddiff.benchmarks.vidpair.answers import lenient_letters, read_letters
from viddiff.benchmarks.vidpair.binary import ItemOutcome


@dataclass(frozen=True)
class ChoiceItem:
    key: str
    entry: str
    group: str
    role: Optional[str]
    expected: str
    response: Optional[str]
    letters: tuple[str, ...]
    """The option letters, for the diagnostic reading only."""


class MCQCounts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    entries: int = 0
    skipped_entries: int = 0
    tp: int = 0
    fp: int = 0
    pair_total: int = 0
    pair_correct: int = 0
    form_only_misses: int = 0
    """Wrong under the exact reading, right under a lenient one ("A, C" for "AC"): fragile by form alone."""

    def __add__(self, other: "MCQCounts") -> "MCQCounts":
        return MCQCounts(**{k: getattr(self, k) + getattr(other, k) for k in MCQCounts.model_fields})


class MCQScores(BaseModel):
    model_config = ConfigDict(extra="forbid")

    counts: MCQCounts
    f1: Optional[float]
    """The release's "F1" = ``TP / (TP + FP)`` = exact-match accuracy over answered questions."""
    pair_acc: Optional[float]
    """Share of questions right on both videos of their pair (the release's ``qACC``, on the published pairs)."""


def score_choice_entry(items: Sequence[ChoiceItem]) -> tuple[MCQCounts, dict[str, ItemOutcome]]:
    counts = MCQCounts(entries=1)
    if all(i.response is None for i in items):
        reason = "no answer to any of its questions"
        counts.skipped_entries = 1
        return counts, {i.key: ItemOutcome(reading=None, status="no_response", correct=None, skip_reason=reason) for i in items}
    outcomes: dict[str, ItemOutcome] = {}
    for i in items:
        if i.response is None:
            outcomes[i.key] = ItemOutcome(reading=None, status="no_response", correct=None)
            continue
        reading = read_letters(i.response)
        right = reading == read_letters(i.expected)
        counts.tp += right
        counts.fp += not right
        counts.form_only_misses += not right and lenient_letters(i.response, i.letters) == read_letters(i.expected)
        outcomes[i.key] = ItemOutcome(reading=reading, status="scored", correct=right)
    by_group: dict[str, dict[str, bool]] = defaultdict(dict)
    for i in items:
        outcome = outcomes[i.key]
        if outcome.correct is not None and i.role is not None:
            by_group[i.group][i.role] = outcome.correct
    for roles in by_group.values():
        if len(roles) == 2:
            counts.pair_total += 1
            counts.pair_correct += all(roles.values())
    return counts, outcomes


def score_choice_entries(items: Sequence[ChoiceItem]) -> dict[str, tuple[MCQCounts, dict[str, ItemOutcome]]]:
    by_entry: dict[str, list[ChoiceItem]] = defaultdict(list)
    for item in items:
        by_entry[item.entry].append(item)
    return {entry: score_choice_entry(members) for entry, members in by_entry.items()}


def mcq_scores(counts: MCQCounts) -> MCQScores:
    answered = counts.tp + counts.fp
    return MCQScores(
        counts=counts,
        f1=counts.tp / answered if answered else None,
        pair_acc=counts.pair_correct / counts.pair_total if counts.pair_total else None,
    )
