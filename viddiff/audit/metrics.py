"""Consistency and hallucination metrics of an audit: one method's answers in three orders.

Pure: per-difference records (the answer in the original order, with A and B
swapped, and with each video against itself) in, a pydantic model out.

Why these numbers: accuracy alone hides answer bias. A method that always says
``a`` scores the ground truth's share of ``a``; a swap of the videos exposes it
(its answers never flip), and two identical videos expose invented differences
(a method that sees none should answer ``c``).

No valid answer (``None``: invalid, or the sample failed) never makes a method look better: it counts as
wrong in the accuracies and as "did not flip" in the swap-flip rate; the same-video decisive rate, where
lower is better, leaves it out of ``n``, and :class:`Unanswered` counts it in every variant.
"""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict

from viddiff.eval.groups import group_by, key_order, natural_order, split_order
from viddiff.eval.stats import Rate, proportion

Answer = Optional[Literal["a", "b", "c"]]
"""A verdict; ``None`` = no valid answer (invalid, or the sample failed) — never a decision."""
_FLIP = {"a": "b", "b": "a"}


class AuditRecord(BaseModel):
    """One difference statement of one sample and the method's answer in each variant."""

    model_config = ConfigDict(extra="forbid")

    sample_key: str
    split: str
    action: str
    action_name: str
    key: str
    description: str
    gt: Answer = None
    """Ground truth in the original order (``None`` for proposed statements, open mode)."""
    original: Answer = None
    swapped: Answer = None
    """Answer with A and B swapped (consistent = the original answer flipped)."""
    same: Answer = None
    """Answer with each video of the pair compared with itself (no difference = ``c``)."""

    @property
    def labelled(self) -> bool:
        return self.gt in ("a", "b")


class Unanswered(BaseModel):
    """Statements without a valid answer in each variant (invalid answers, failed samples)."""

    model_config = ConfigDict(extra="forbid")

    original: int
    swapped: int
    same: int


class AuditStats(BaseModel):
    """The audit numbers for one group of records (a split, an action, a difference, or all)."""

    model_config = ConfigDict(extra="forbid")

    n_differences: int
    swap_flip_rate: Rate
    """Among statements answered ``a``/``b`` in the original order, the share whose answer flips when the
    videos are swapped (1.0 = consistent; a position-biased method scores near 0)."""
    same_video_decisive_rate: Rate
    """Among statements answered about two identical videos, the share answered ``a``/``b`` instead of ``c``
    (0.0 = no invented differences; 1.0 by construction for a method that may only answer ``a``/``b``)."""
    same_video_a_share: Rate
    """Share of ``a`` among the ``a``/``b`` answers about identical videos: with nothing to tell the videos
    apart, an unbiased method splits evenly (the paper's same-video check), a position-biased one does not."""
    a_share: Rate
    """Share of ``a`` among the ``a``/``b`` answers in the original order."""
    gt_a_share: Optional[float]
    """Share of ``a`` in the ground truth of the same statements, those labelled and answered ``a``/``b``
    (``None`` without labels)."""
    a_share_diff: Rate
    """``a_share - gt_a_share`` (0 = balanced, ±1 = answer bias); the interval is ``a_share``'s, shifted,
    since the ground truth is fixed and only the answers vary."""
    accuracy_original: Rate
    accuracy_swapped: Rate
    """Accuracy with A and B swapped, against the flipped ground truth."""
    accuracy_debiased: Rate
    """Mean of the two accuracies (order-debiased): the mean of per-statement scores 0, ½, 1."""
    pair_accuracy: Rate
    """Share of statements answered correctly in both orders (a guesser scores ~25%, a position-biased
    method ~0)."""
    unanswered: Unanswered


class GroupStats(BaseModel):
    model_config = ConfigDict(extra="forbid")

    split: str
    action: str
    action_name: str
    key: Optional[str] = None
    description: Optional[str] = None
    stats: AuditStats


class AuditMetrics(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: Literal["closed", "open"]
    overall: AuditStats
    splits: dict[str, AuditStats]
    by_action: list[GroupStats]
    """Worst first (see :func:`worst_first`)."""
    by_difference: list[GroupStats]
    """Worst first."""
    records: list[AuditRecord]




def audit_stats(records: list[AuditRecord]) -> AuditStats:
    decided = [r for r in records if r.original in ("a", "b")]
    labelled = [r for r in records if r.labelled]
    same_answered = [r for r in records if r.same is not None]
    same_decided = [r for r in same_answered if r.same in ("a", "b")]
    right_original = [r.original == r.gt for r in labelled]
    right_swapped = [r.swapped == _FLIP[r.gt] for r in labelled]  # type: ignore[index]
    a_share = proportion(sum(r.original == "a" for r in decided), len(decided))
    decided_labelled = [r for r in decided if r.labelled]
    gt_a_share = sum(r.gt == "a" for r in decided_labelled) / len(decided_labelled) if decided_labelled else None
    return AuditStats(
        n_differences=len(records),
        swap_flip_rate=proportion(sum(r.swapped == _FLIP[r.original] for r in decided), len(decided)),  # type: ignore[index]
        same_video_decisive_rate=proportion(len(same_decided), len(same_answered)),
        same_video_a_share=proportion(sum(r.same == "a" for r in same_decided), len(same_decided)),
        a_share=a_share,
        gt_a_share=gt_a_share,
        a_share_diff=_shifted(a_share, gt_a_share),
        accuracy_original=proportion(sum(right_original), len(labelled)),
        accuracy_swapped=proportion(sum(right_swapped), len(labelled)),
        accuracy_debiased=proportion(sum((o + s) / 2 for o, s in zip(right_original, right_swapped)), len(labelled)),
        pair_accuracy=proportion(sum(o and s for o, s in zip(right_original, right_swapped)), len(labelled)),
        unanswered=Unanswered(
            original=sum(r.original is None for r in records),
            swapped=sum(r.swapped is None for r in records),
            same=sum(r.same is None for r in records),
        ),
    )


def _shifted(rate: Rate, by: Optional[float]) -> Rate:
    if rate.value is None or by is None:
        return Rate(n=rate.n, count=0, value=None, ci_low=None, ci_high=None)
    return Rate(
        n=rate.n,
        count=rate.count,
        value=rate.value - by,
        ci_low=rate.ci_low - by,  # type: ignore[operator]
        ci_high=rate.ci_high - by,  # type: ignore[operator]
    )


def score_audit(records: list[AuditRecord], mode: Literal["closed", "open"]) -> AuditMetrics:
    """All audit numbers: overall, per split, per action and per difference (worst first)."""
    splits = group_by(records, lambda r: r.split, split_order)
    actions = group_by(
        records, lambda r: (r.split, r.action, r.action_name), lambda k: (split_order(k[0]), natural_order(k[1]))
    )
    diffs = group_by(
        records,
        lambda r: (r.split, r.action, r.action_name, r.key, r.description),
        lambda k: (split_order(k[0]), natural_order(k[1]), key_order(k[3]), k[4]),
    )
    return AuditMetrics(
        mode=mode,
        overall=audit_stats(records),
        splits={split: audit_stats(group) for split, group in splits},
        by_action=worst_first(
            [GroupStats(split=k[0], action=k[1], action_name=k[2], stats=audit_stats(g)) for k, g in actions]
        ),
        by_difference=worst_first(
            [
                GroupStats(split=k[0], action=k[1], action_name=k[2], key=k[3], description=k[4], stats=audit_stats(g))
                for k, g in diffs
            ]
        ),
        records=records,
    )


def worst_first(rows: list[GroupStats]) -> list[GroupStats]:
    """Least reliable first: lowest pair accuracy (when labelled), then lowest swap-flip rate, then highest
    same-video decisive rate; rows without a number sort last. ``sorted`` is stable, so ties keep dataset order."""

    def badness(row: GroupStats) -> tuple:
        s = row.stats
        return (
            _or_last(s.pair_accuracy.value),
            _or_last(s.swap_flip_rate.value),
            _or_last(None if s.same_video_decisive_rate.value is None else -s.same_video_decisive_rate.value),
        )

    return sorted(rows, key=badness)


def _or_last(value: Optional[float]) -> tuple[int, float]:
    return (1, 0.0) if value is None else (0, value)
