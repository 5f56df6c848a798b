"""Small statistics helpers shared by the closed and open scorers.

Kept separate so the scorers stay pure bookkeeping and the statistical
choices (which test, which interval) are visible in one place.
"""

from __future__ import annotations

from typing import Optional

from pydantic import BaseModel, ConfigDict
from scipy.stats import beta, binomtest


class Accuracy(BaseModel):
    """Correct-out-of-total with a two-sided binomial test against chance (0.5).

    Closed mode is a two-way choice, so 0.5 is chance; the p-value says how
    surprising the observed accuracy would be for a coin-flipping method.
    """

    model_config = ConfigDict(extra="forbid")

    n: int
    correct: int
    accuracy: Optional[float]
    """``None`` when nothing was counted (no ``a``/``b`` ground truth)."""
    p_value: Optional[float]
    ci_low: Optional[float]
    ci_high: Optional[float]
    """95% Clopper-Pearson interval of the accuracy."""


def accuracy(correct: int, n: int) -> Accuracy:
    """Accuracy with binomial test and exact 95% interval; ``None`` fields when ``n == 0``."""
    if correct < 0 or n < 0 or correct > n:
        raise ValueError(f"need 0 <= correct <= n, got correct={correct}, n={n}")
    if n == 0:
        return Accuracy(n=0, correct=0, accuracy=None, p_value=None, ci_low=None, ci_high=None)
    test = binomtest(correct, n, p=0.5, alternative="two-sided")
    ci = test.proportion_ci(confidence_level=0.95, method="exact")
    return Accuracy(
        n=n,
        correct=correct,
        accuracy=correct / n,
        p_value=float(test.pvalue),
        ci_low=float(ci.low),
        ci_high=float(ci.high),
    )


def rate(count: int, n: int) -> Optional[float]:
    """``count / n``, or ``None`` for an empty group (never a misleading 0.0)."""
    return count / n if n else None


def mean_of(values: list[Optional[float]]) -> Optional[float]:
    """Unweighted mean of the defined values (the benchmark's "Avg" over splits)."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


class Rate(BaseModel):
    """``count`` of ``n`` with a 95% interval; ``value`` is ``None`` when ``n`` is 0."""

    model_config = ConfigDict(extra="forbid")

    n: int
    count: float
    value: Optional[float]
    ci_low: Optional[float]
    ci_high: Optional[float]


def proportion(count: float, n: int) -> Rate:
    """``count / n`` with the exact (Clopper-Pearson) 95% interval.

    ``count`` may be fractional (a sum of per-statement scores in [0, 1]); the same beta quantiles then
    give the interval, which is conservative there: a score in [0, 1] with mean ``p`` varies no more than
    a 0/1 outcome with mean ``p``.
    """
    if n == 0:
        return Rate(n=0, count=0, value=None, ci_low=None, ci_high=None)
    if not 0 <= count <= n:
        raise ValueError(f"need 0 <= count <= n, got count={count}, n={n}")
    low = float(beta.ppf(0.025, count, n - count + 1)) if count > 0 else 0.0
    high = float(beta.ppf(0.975, count + 1, n - count)) if count < n else 1.0
    return Rate(n=n, count=count, value=count / n, ci_low=low, ci_high=high)
