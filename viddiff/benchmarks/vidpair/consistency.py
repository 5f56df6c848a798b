"""Beyond the paper: ``viddiff audit``'s consistency and bias numbers on VidPair-Halluc's pairs (pure).

``viddiff audit`` asks whether a comparison flips when A and B are swapped and whether it invents differences
between identical videos. A VidPair-Halluc pair asks the same of a single-video answer: one yes/no question on
two videos that share a background and differ in the foreground. When the truth differs between the two videos
the answer should flip with it (``answer_flip_rate``, the counterpart of ``swap_flip_rate``); when it is the same,
the answer should stay (``steady_rate``); ``pair_accuracy`` is the share right on both videos (missing or
unreadable answers count wrong there). The yes-bias numbers use the usual denominators, unlike the release's
``FP_rate`` and ``Pct_Diff`` (see :mod:`.binary`): ``yes_share`` among valid answers against the truth's
``gt_yes_share`` over the same answers, and ``false_yes_rate`` among valid answers to questions whose truth is no
(on the adversarial video alone: the model says it sees what only the other video shows).
"""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict

from viddiff.eval.stats import Rate, proportion

YesNo = Literal["yes", "no"]


class PairedAnswer(BaseModel):
    """One yes/no question asked of both videos of a pair, and the answers (the release's reading; ``None`` when
    unreadable or missing)."""

    model_config = ConfigDict(extra="forbid")

    pair_id: str
    aspect: str
    question: str
    truth_positive: YesNo
    truth_adversarial: YesNo
    answer_positive: Optional[YesNo]
    answer_adversarial: Optional[YesNo]


class PairConsistency(BaseModel):
    model_config = ConfigDict(extra="forbid")

    n_questions: int
    """Yes/no questions asked of both videos of a pair."""
    answer_flip_rate: Rate
    """Truth differs between the videos, both answered: the answers differ too."""
    steady_rate: Rate
    """Truth the same on both videos, both answered: the answers agree."""
    pair_accuracy: Rate
    """Right on both videos, over every paired question."""
    yes_share: Rate
    gt_yes_share: Optional[float]
    yes_share_diff: Optional[float]
    """``yes_share - gt_yes_share`` over the same valid answers (0 = no yes-bias)."""
    false_yes_rate: Rate
    """Valid answers to questions whose truth is no, answered yes (the usual false-positive rate)."""
    adversarial_false_yes_rate: Rate
    """The same, on the adversarial videos only."""


def pair_consistency(records: list[PairedAnswer]) -> PairConsistency:
    both = [r for r in records if r.answer_positive is not None and r.answer_adversarial is not None]
    differ = [r for r in both if r.truth_positive != r.truth_adversarial]
    same = [r for r in both if r.truth_positive == r.truth_adversarial]
    answers = [(r.truth_positive, r.answer_positive, "positive") for r in records] + [
        (r.truth_adversarial, r.answer_adversarial, "adversarial") for r in records
    ]
    valid = [(t, a, role) for t, a, role in answers if a is not None]
    yes = proportion(sum(a == "yes" for _, a, _ in valid), len(valid))
    gt_yes = sum(t == "yes" for t, _, _ in valid) / len(valid) if valid else None
    truth_no = [(a, role) for t, a, role in valid if t == "no"]
    adversarial_no = [a for a, role in truth_no if role == "adversarial"]
    return PairConsistency(
        n_questions=len(records),
        answer_flip_rate=proportion(sum(r.answer_positive != r.answer_adversarial for r in differ), len(differ)),
        steady_rate=proportion(sum(r.answer_positive == r.answer_adversarial for r in same), len(same)),
        pair_accuracy=proportion(
            sum(r.answer_positive == r.truth_positive and r.answer_adversarial == r.truth_adversarial for r in records),
            len(records),
        ),
        yes_share=yes,
        gt_yes_share=gt_yes,
        yes_share_diff=None if yes.value is None or gt_yes is None else yes.value - gt_yes,
        false_yes_rate=proportion(sum(a == "yes" for a, _ in truth_no), len(truth_no)),
        adversarial_false_yes_rate=proportion(sum(a == "yes" for a in adversarial_no), len(adversarial_no)),
    )
