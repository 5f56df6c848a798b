"""Closed-mode scoring: accuracy over ground-truth ``a``/``b`` differences.

Pure: validated predictions and samples in, a ``ClosedMetrics`` model out.
Ground truth ``c``/null is not counted; a prediction of ``c``, null, or a
missing key counts wrong (never skipped, so declining to answer cannot raise
accuracy). Accuracy is micro-averaged within a split; "Avg" is the
unweighted mean over the splits present, as in the paper's tables.
"""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict

from viddiff.errors import PredictionFormatError
from viddiff.eval.groups import (
    ActionRow,
    DifferenceRow,
    RecordBase,
    by_action,
    by_difference,
    by_split,
    key_order,
)
from viddiff.eval.stats import Accuracy, accuracy, mean_of, rate
from viddiff.schema import Sample
from viddiff.console import count_of


class ClosedRecord(RecordBase):
    """One annotated difference of one sample and what was predicted for it."""

    gt: Optional[str]
    prediction: Optional[str]
    missing: bool
    """The predictions had no entry for this key (``prediction`` is then None)."""
    counted: bool
    """Ground truth is ``a`` or ``b``."""
    correct: bool


class Balance(BaseModel):
    """Letter balance over counted differences: a position-bias indicator.

    A method that says ``a`` far more often than the ground truth does is
    leaning on video order rather than content.
    """

    model_config = ConfigDict(extra="forbid")

    gt_a: int
    gt_b: int
    pred_a: int
    pred_b: int
    pred_c: int
    pred_null: int
    missing: int
    gt_a_fraction: Optional[float]
    pred_a_fraction: Optional[float]
    """Fraction of ``a`` among the ``a``/``b`` predictions."""


class ClosedMetrics(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: Literal["closed"] = "closed"
    splits: dict[str, Accuracy]
    avg: Optional[float]
    """Unweighted mean of the per-split accuracies."""
    overall: Accuracy
    """Micro-average over every counted difference (all splits pooled)."""
    balance: Balance
    by_action: list[ActionRow[Accuracy]]
    by_difference: list[DifferenceRow[Accuracy]]
    n_samples: int
    n_differences: int
    """Annotated differences, counted or not."""
    records: list[ClosedRecord]


def score_closed(samples: list[Sample], predictions: list[dict]) -> ClosedMetrics:
    """Score validated closed predictions (``load_predictions(..., "closed", samples)``)."""
    if len(predictions) != len(samples):
        raise PredictionFormatError(
            f"{count_of(len(predictions), 'prediction item')} for {count_of(len(samples), 'sample')}"
        )
    records = [rec for i, (s, p) in enumerate(zip(samples, predictions)) for rec in _sample_records(i, s, p)]
    counted = [r for r in records if r.counted]
    splits = {split: _accuracy(group) for split, group in by_split(counted)}
    return ClosedMetrics(
        splits=splits,
        avg=mean_of([a.accuracy for a in splits.values()]),
        overall=_accuracy(counted),
        balance=_balance(counted),
        by_action=[
            ActionRow[Accuracy](split=k[0], action=k[1], action_name=k[2], stats=_accuracy(g))
            for k, g in by_action(counted)
        ],
        by_difference=[
            DifferenceRow[Accuracy](
                split=k[0], action=k[1], action_name=k[2], key=k[3], name=k[4], description=k[5], stats=_accuracy(g)
            )
            for k, g in by_difference(counted)
        ],
        n_samples=len(samples),
        n_differences=len(records),
        records=records,
    )


def _sample_records(index: int, sample: Sample, prediction: dict) -> list[ClosedRecord]:
    out = []
    for key in sorted(sample.differences, key=key_order):
        diff = sample.differences[key]
        gt = sample.labels.get(key)
        pred = prediction.get(key)
        counted = gt in ("a", "b")
        out.append(
            ClosedRecord(
                index=index,
                sample_key=sample.sample_key,
                split=sample.split,
                action=sample.action,
                action_name=sample.action_name,
                key=key,
                name=diff.name,
                description=diff.description,
                gt=gt,
                prediction=pred,
                missing=key not in prediction,
                counted=counted,
                correct=counted and pred == gt,
            )
        )
    return out


def _accuracy(records: list[ClosedRecord]) -> Accuracy:
    return accuracy(sum(r.correct for r in records), len(records))


def _balance(counted: list[ClosedRecord]) -> Balance:
    gt_a = sum(r.gt == "a" for r in counted)
    pred_a = sum(r.prediction == "a" for r in counted)
    pred_b = sum(r.prediction == "b" for r in counted)
    missing = sum(r.missing for r in counted)
    return Balance(
        gt_a=gt_a,
        gt_b=len(counted) - gt_a,
        pred_a=pred_a,
        pred_b=pred_b,
        pred_c=sum(r.prediction == "c" for r in counted),
        pred_null=sum(r.prediction is None and not r.missing for r in counted),
        missing=missing,
        gt_a_fraction=rate(gt_a, len(counted)),
        pred_a_fraction=rate(pred_a, pred_a + pred_b),
    )
