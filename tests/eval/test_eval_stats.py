import math

import pytest
from scipy.stats import binomtest

from viddiff.eval.stats import accuracy, mean_of, rate


def test_accuracy_matches_scipy_binomial_test() -> None:
    acc = accuracy(37, 50)
    assert acc.accuracy == pytest.approx(0.74)
    assert acc.p_value == pytest.approx(binomtest(37, 50, 0.5).pvalue)
    assert acc.ci_low < 0.74 < acc.ci_high


def test_chance_level_is_not_significant() -> None:
    assert accuracy(5, 10).p_value == pytest.approx(1.0)


def test_empty_group_has_no_numbers() -> None:
    acc = accuracy(0, 0)
    assert acc.accuracy is None and acc.p_value is None and acc.ci_low is None


def test_inconsistent_counts_rejected() -> None:
    with pytest.raises(ValueError, match="correct <= n"):
        accuracy(3, 2)


def test_rate_and_mean_skip_empty() -> None:
    assert rate(1, 4) == 0.25
    assert rate(0, 0) is None
    assert math.isclose(mean_of([0.5, None, 1.0]), 0.75)
    assert mean_of([None]) is None
