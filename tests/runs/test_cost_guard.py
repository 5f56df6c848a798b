"""``run.max_cost_usd``: the projection from a run's first samples (issue 11, item 8)."""

from __future__ import annotations

import pytest

from viddiff.config import Config, ConfigError
from viddiff.runs.cost_guard import CostGuard, check_prices
from viddiff.errors import CostLimitError
from viddiff.schema import StageUsage


def _usage(cost):
    return {"proposer": StageUsage(calls=1, cost_usd=cost)}


def test_no_budget_never_stops():
    guard = CostGuard(None, 10, 0.0)
    for _ in range(10):
        guard.add(_usage(None))


def test_projection_waits_for_the_first_samples_then_stops_above_the_budget():
    guard = CostGuard(1.0, 10, 0.0)
    guard.add(_usage(0.15))
    guard.add(_usage(0.15))  # 2 samples: too few to project from
    with pytest.raises(CostLimitError, match=r"3 samples cost \$0.45 \(about \$0.150 each\), so this run's 10 samples project to \$1.50"):
        guard.add(_usage(0.15))


def test_within_budget_goes_on_and_earlier_spending_counts():
    guard = CostGuard(1.0, 4, 0.3)
    for _ in range(3):
        guard.add(_usage(0.1))  # 0.3 before + 0.3 now + 0.1 to come = 0.7
    with pytest.raises(CostLimitError, match=r"cost so far, \$1.05, is above run.max_cost_usd=\$1.00"):
        CostGuard(1.0, 4, 1.0).add(_usage(0.05))


def test_unknown_cost_cannot_be_tracked():
    with pytest.raises(CostLimitError, match="proposer have no price"):
        CostGuard(1.0, 4, 0.0).add(_usage(None))


def test_prices_are_required_up_front_for_the_methods_models():
    cfg = Config().with_overrides(["run.max_cost_usd=5"])
    check_prices(cfg, {"proposer": cfg.proposer, "differencer": cfg.differencer})  # the defaults have prices
    custom = cfg.with_overrides(["baseline.model=my-vlm"])
    with pytest.raises(ConfigError, match="'my-vlm' \\(baseline\\) has no price"):
        check_prices(custom, {"baseline": custom.baseline})
    unbudgeted = Config().with_overrides(["baseline.model=my-vlm"])
    check_prices(unbudgeted, {"baseline": unbudgeted.baseline})  # no budget, no need


def test_small_budgets_and_costs_are_printed_with_enough_digits():
    """Issue 22: "$0.00 ... above $0.00" said nothing; each amount keeps two significant digits, and amounts that
    differ never print the same."""
    with pytest.raises(CostLimitError) as info:
        CostGuard(0.001, 10, 0.0).add(_usage(0.00137))
    assert str(info.value).startswith("stopped: the estimated cost so far, $0.0014, is above run.max_cost_usd=$0.0010;")
    guard = CostGuard(0.004, 10, 0.0)
    for _ in range(2):
        guard.add(_usage(0.00042))
    with pytest.raises(CostLimitError) as info:
        guard.add(_usage(0.00042))
    assert str(info.value).startswith(
        "stopped: 3 samples cost $0.0013 (about $0.000420 each), so this run's 10 samples project to $0.0042 in "
        "all, above run.max_cost_usd=$0.0040;"
    )


def test_a_real_run_with_a_tiny_budget_says_what_it_spent(synth_dir, scripted_server, offline_sets, tmp_path, capsys):
    from viddiff.cli import main

    out = tmp_path / "run"
    args = ["-q", "run", "--dataset", str(synth_dir), "--mode", "closed", "--output", str(out), *offline_sets,
            "--set", "run.max_cost_usd=0.0001", "--set", "run.max_samples_in_flight=1"]
    assert main(args) == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "$0.00 " not in line and "$0.00," not in line and "run.max_cost_usd=$0.00010" in line, line
