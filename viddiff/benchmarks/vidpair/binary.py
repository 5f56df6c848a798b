"""Binary (yes/no) scoring exactly as the VidPair-Halluc release does it, both released scorers (pure).

The release scores *entries*: one story (here: one pair and aspect) with its questions, each asked of every
video of the entry (here: a question group). Two kinds of unit come out of an entry:

- **question pair** (the code's ``vid_pair``): one question across the videos of the entry, counted when at
  least one of its answers is valid, correct when every valid answer is right;
- **video pair** (the code's ``text_pair``): the questions on one video, counted when its answers to all of
  them are valid (``videoqa``) or to at least two (``clipqa``), correct when those are all right.

Their pooled accuracy is the weighted accuracy ``(vid_correct + text_correct) / (vid_total + text_total)``.
``FP_rate = FP / total_qa`` and ``Pct_Diff = (model_yes - gt_yes) / total_qa`` divide by the number of valid
answers, not by the GT-no count or the number of questions. Invalid answers (read as unknown) are left out
of every count. The two scorers differ:

=================  ==============================================  ============================================
                   ``videoqa`` (``evaluate/videoqa.py``)           ``clipqa`` (``evaluate/clipqa.py``)
=================  ==============================================  ============================================
ground truth       read like an answer (``Yes`` = ``yes``)          compared as written (``Yes`` never matches)
``gt_yes``         every question of a kept entry                  validly answered questions only
entry skipped if   no answers; < 2 questions; a question with no    no answers; < 2 answers that contain
                   answer at all (*); < 2 videos; < 2 answers       ``yes``/``no`` and are not a failure string
                   that are not a failure string
video pair         the video answered validly on every question    the video answered validly on >= 2 questions
=================  ==============================================  ============================================

(*) ``videoqa.py`` skips an entry whose question key is missing from its predictions file, and scores one whose
key is there without valid answers. The release's inference script (``evaluate/clipqa_gpt4o.py``) writes the key
for every question it asks and records a call that still fails after 5 tries as the answer ``API_ERROR``, so a
question no call answered is a key whose answers are all ``API_ERROR``. ``vidpair.unanswered_question=score_entry``
reads a missing answer that way, exactly as released: the entry is scored under its other rules, the question
counted in ``gt_yes`` and in no unit, and the missing answers count in the pairing check, as ``API_ERROR`` is not
one of its failure strings. Our default, ``skip_entry``, skips the entry instead: a missing answer here is a
failed sample that ``--resume`` retries, not a verdict.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Literal, Optional, Sequence

from pydantic import BaseModel, ConfigDict

from viddiff.benchmarks.vidpair.answers import clipqa_valid, read_yes_no, videoqa_counts_as_prediction

Scorer = Literal["videoqa", "clipqa"]
Unanswered = Literal["skip_entry", "score_entry"]
ItemStatus = Literal["scored", "invalid", "no_response", "entry_skipped"]


@dataclass(frozen=True)
class BinaryItem:
    """One yes/no question on one video with the method's answer (``None``: no answer, e.g. a failed sample)."""

    key: str
    entry: str
    group: str
    video: str
    expected: str
    response: Optional[str]


@dataclass(frozen=True)
class ItemOutcome:
    reading: Optional[str]
    """The release's reading of the answer (``None`` without an answer)."""
    status: ItemStatus
    correct: Optional[bool]
    """``None`` unless scored."""
    skip_reason: Optional[str] = None


class BinaryCounts(BaseModel):
    """The release's counters, summed over entries (so any group of entries can be scored)."""

    model_config = ConfigDict(extra="forbid")

    entries: int = 0
    skipped_entries: int = 0
    vid_pair_total: int = 0
    vid_pair_correct: int = 0
    text_pair_total: int = 0
    text_pair_correct: int = 0
    total_qa: int = 0
    """Valid answers."""
    model_yes: int = 0
    gt_yes: int = 0
    """As the chosen scorer counts it (see the module docstring)."""
    fp: int = 0

    def __add__(self, other: "BinaryCounts") -> "BinaryCounts":
        return BinaryCounts(**{k: getattr(self, k) + getattr(other, k) for k in BinaryCounts.model_fields})


@dataclass(frozen=True)
class EntryResult:
    counts: BinaryCounts
    outcomes: dict[str, ItemOutcome]
    skip_reason: Optional[str]


def _grouped(items: Sequence[BinaryItem]) -> dict[str, list[BinaryItem]]:
    groups: dict[str, list[BinaryItem]] = defaultdict(list)
    for item in items:
        groups[item.group].append(item)
    return dict(groups)


def _skipped(items: Sequence[BinaryItem], reason: str) -> EntryResult:
    outcomes = {
        i.key: ItemOutcome(
            reading=None if i.response is None else read_yes_no(i.response),
            status="no_response" if i.response is None else "entry_skipped",
            correct=None,
            skip_reason=reason,
        )
        for i in items
    }
    return EntryResult(BinaryCounts(entries=1, skipped_entries=1), outcomes, reason)


RELEASED_FAILED_CALL = "API_ERROR"
"""The answer the release's inference script records for a call that still fails after its 5 tries."""


def _videoqa_skip(items: Sequence[BinaryItem], groups: dict[str, list[BinaryItem]], unanswered_question: Unanswered) -> Optional[str]:
    # score_entry: a missing answer is the release's API_ERROR, a string its pairing check counts
    failed_call = RELEASED_FAILED_CALL if unanswered_question == "score_entry" else None
    answers = [failed_call if i.response is None else i.response for i in items]
    if all(a is None for a in answers):
        return "no answer to any of its questions"
    if len(groups) < 2:
        return "fewer than two questions (the release needs a positive and a negative question)"
    unanswered = [g for g, members in groups.items() if all(i.response is None for i in members)]
    if unanswered and unanswered_question == "skip_entry":
        return f"question {unanswered[0].split(':', 1)[-1]!r} has no answer on any video (read as its key missing)"
    if len({i.video for i in items}) < 2:
        return "its questions are on fewer than two videos"
    if sum(videoqa_counts_as_prediction(a) for a in answers) < 2:
        return "fewer than two answers that are not a failure string"
    return None


def _clipqa_skip(items: Sequence[BinaryItem]) -> Optional[str]:
    if all(i.response is None for i in items):
        return "no answer to any of its questions"
    if sum(clipqa_valid(i.response) for i in items) < 2:
        return "fewer than two valid answers (containing yes or no)"
    return None


def score_entry(items: Sequence[BinaryItem], scorer: Scorer, unanswered_question: Unanswered = "skip_entry") -> EntryResult:
    """The release's counters for one entry, and what became of each answer (``unanswered_question``: see the
    module docstring; ``videoqa`` only)."""
    groups = _grouped(items)
    reason = _videoqa_skip(items, groups, unanswered_question) if scorer == "videoqa" else _clipqa_skip(items)
    if reason is not None:
        return _skipped(items, reason)
    if scorer == "clipqa":  # only the questions with some answer are "predicted" keys
        groups = {g: m for g, m in groups.items() if any(i.response is not None for i in m)}
    gt: dict[str, dict[str, str]] = {}
    pred: dict[str, dict[str, str]] = {}
    for g, members in groups.items():
        gt[g], pred[g] = {}, {}
        for i in members:  # a later row for the same video overwrites an earlier one, as the release's dicts do
            gt[g][i.video] = read_yes_no(i.expected) if scorer == "videoqa" else i.expected
            if i.response is not None and (scorer == "videoqa" or clipqa_valid(i.response)):
                pred[g][i.video] = read_yes_no(i.response)
    counts = BinaryCounts(entries=1)
    if scorer == "videoqa":
        counts.gt_yes = sum(v == "yes" for by_video in gt.values() for v in by_video.values())
    for g in groups:
        answered = [(truth, pred[g][v]) for v, truth in gt[g].items() if pred[g].get(v) in ("yes", "no")]
        for truth, p in answered:
            counts.total_qa += 1
            counts.model_yes += p == "yes"
            counts.fp += p == "yes" and truth == "no"
            if scorer == "clipqa":
                counts.gt_yes += truth == "yes"
        if answered:
            counts.vid_pair_total += 1
            counts.vid_pair_correct += all(truth == p for truth, p in answered)
    _video_pairs(gt, pred, scorer, counts)
    outcomes = {i.key: _outcome(i, scorer) for i in items}
    return EntryResult(counts, outcomes, None)


def _video_pairs(gt: dict[str, dict[str, str]], pred: dict[str, dict[str, str]], scorer: Scorer, counts: BinaryCounts) -> None:
    if scorer == "videoqa":
        videos = set.intersection(*(set(by_video) for by_video in gt.values()))
    else:
        videos = set().union(*(set(by_video) for by_video in gt.values()))
    for video in sorted(videos):
        pairs = [(gt[g][video], pred[g][video]) for g in gt if video in gt[g] and pred[g].get(video) in ("yes", "no")]
        if scorer == "videoqa" and len(pairs) < len(gt):
            continue
        if len(pairs) < 2:
            continue
        counts.text_pair_total += 1
        counts.text_pair_correct += all(truth == p for truth, p in pairs)


def _outcome(item: BinaryItem, scorer: Scorer) -> ItemOutcome:
    if item.response is None:
        return ItemOutcome(reading=None, status="no_response", correct=None)
    reading = read_yes_no(item.response)
    valid = reading != "unknown" if scorer == "videoqa" else clipqa_valid(item.response)
    if not valid:
        return ItemOutcome(reading=reading, status="invalid", correct=None)
    truth = read_yes_no(item.expected) if scorer == "videoqa" else item.expected
    return ItemOutcome(reading=reading, status="scored", correct=reading == truth)


def score_entries(
    items: Sequence[BinaryItem], scorer: Scorer, unanswered_question: Unanswered = "skip_entry"
) -> dict[str, EntryResult]:
    """Every entry's result, by entry (entries in first-appearance order)."""
    by_entry: dict[str, list[BinaryItem]] = defaultdict(list)
    for item in items:
        by_entry[item.entry].append(item)
    return {entry: score_entry(members, scorer, unanswered_question) for entry, members in by_entry.items()}


class BinaryScores(BaseModel):
    """The release's binary numbers for a group of entries (fractions; reports show x100)."""

    model_config = ConfigDict(extra="forbid")

    counts: BinaryCounts
    question_pair_acc: Optional[float]
    """The code's ``vid_pair_qACC``: one question right on every video of its pair."""
    video_pair_acc: Optional[float]
    """The code's ``text_pair_qACC``: every question right on one video."""
    weighted_acc: Optional[float]
    """The pooled accuracy of both kinds of unit (the code's ``weighted_qACC`` / per-category ``wACC``)."""
    fp_rate: Optional[float]
    """``FP / total_qa``: yes-answers to GT-no questions over all valid answers."""
    pct_diff: Optional[float]
    """``(model_yes - gt_yes) / total_qa``, signed."""


def binary_scores(counts: BinaryCounts, *, overall: bool) -> BinaryScores:
    """Rates from counters. ``overall``: the weighted accuracy is undefined when either kind of unit is missing
    (``clipqa.py``'s overall rule); per group a missing kind just weighs nothing (its per-category rule)."""
    c = counts
    q = c.vid_pair_correct / c.vid_pair_total if c.vid_pair_total else None
    v = c.text_pair_correct / c.text_pair_total if c.text_pair_total else None
    units = c.vid_pair_total + c.text_pair_total
    weighted = None
    if units and (not overall or (q is not None and v is not None)):
        weighted = (c.vid_pair_correct + c.text_pair_correct) / units
    return BinaryScores(
        counts=c,
        question_pair_acc=q,
        video_pair_acc=v,
        weighted_acc=weighted,
        fp_rate=c.fp / c.total_qa if c.total_qa else None,
        pct_diff=(c.model_yes - c.gt_yes) / c.total_qa if c.total_qa else None,
    )
