"""``run.max_cost_usd``: the projection from a run's first samples (issue 11, item 8), and reservations for the
samples in flight (issue 32, item 4)."""

from __future__ import annotations

import asyncio
import json

import pytest

from viddiff.config import Config, ConfigError
from viddiff.runs.cost_guard import CostGuard, check_prices, sample_size
from viddiff.errors import CostLimitError
from viddiff.schema import StageUsage


def _usage(cost):
    return {"proposer": StageUsage(calls=1, cost_usd=cost)}


def _run_one(guard: CostGuard, cost, size: float = 1.0) -> None:
    """Admit one sample (it must be admitted at once), then count what it cost."""
    reservation = asyncio.run(guard.admit(size))
    assert reservation is not None, guard.stop_reason
    guard.finish(reservation, _usage(cost))


def test_no_budget_never_stops():
    guard = CostGuard(None, 10, 0.0)
    for _ in range(10):
        _run_one(guard, None)
    assert guard.admission() == "start" and guard.stop_reason is None


def test_projection_waits_for_the_first_samples_then_stops_starting_samples():
    guard = CostGuard(1.0, 10, 0.0)
    _run_one(guard, 0.15)
    _run_one(guard, 0.15)  # 2 samples: too few to project from
    assert guard.admission() == "start"
    _run_one(guard, 0.15)
    assert guard.admission() == "stop" and not guard.over_limit
    assert guard.stop_reason == "3 samples cost $0.45 (about $0.150 each), so this run's 10 samples project to $1.50 in all"
    message = str(guard.stop_error(0.45, 3, 10))
    assert message.startswith("stopped at run.max_cost_usd=$1.00: 3 samples cost $0.45")
    assert "spent $0.45 in all (usage.json); 3 of 10 samples finished" in message and "--resume" in message


def test_samples_in_flight_hold_their_projected_cost():
    """Issue 32, item 4: concurrent samples must not start on money that samples in flight will spend."""
    guard = CostGuard(1.0, 3, 0.1)
    first = asyncio.run(guard.admit(2))
    assert guard.admission() == "wait"  # no cost known yet: one sample at a time
    guard.finish(first, _usage(0.2))  # 0.1 per difference; 0.1 + 0.2 spent
    held = [asyncio.run(guard.admit(size)) for size in (3, 2)]  # 0.3 + 0.2 reserved: 0.8 of 1.0
    assert guard.reserved == pytest.approx(0.5)
    assert guard.admission(3) == "wait"  # 0.3 more would pass 1.0 while two samples are still running
    assert guard.admission(2) == "start"
    guard.finish(held[0], _usage(0.3))
    guard.finish(held[1], _usage(0.2))
    assert guard.admission(2) == "start" and guard.admission(5) == "stop"
    assert guard.stop_reason == "it has cost $0.80, and the next sample could bring it to $1.30"


def test_a_sample_dearer_than_reserved_stops_the_run_at_once():
    guard = CostGuard(1.0, 4, 0.3)
    _run_one(guard, 0.5)
    assert not guard.over_limit
    _run_one(guard, 0.1, size=0.1)  # reserved 0.05 of the 0.2 left, cost 0.1: fits
    reservation = asyncio.run(guard.admit(0.1))
    guard.finish(reservation, _usage(0.25))
    assert guard.over_limit and guard.stop_reason == "the cost so far, $1.15, is above it"


def test_earlier_spending_that_used_the_budget_starts_nothing():
    guard = CostGuard(1.0, 4, 1.0)
    assert guard.admission() == "stop"
    assert guard.stop_reason == "earlier attempts in this directory already cost $1.00, the whole budget of $1.00"


def test_unknown_cost_cannot_be_tracked():
    guard = CostGuard(1.0, 4, 0.0)
    with pytest.raises(CostLimitError, match="proposer have no price"):
        _run_one(guard, None)


def test_sample_size_counts_the_differences_asked_about(synth_dir):
    from viddiff.data.viddiffbench import load_dataset

    sample = load_dataset(Config().with_overrides([f"data.dataset={synth_dir}"]).data)[0]
    assert sample_size(sample, "closed") == len(sample.closed_differences()) >= 1
    assert sample_size(sample, "open") == sample.n_differences_open
    assert sample_size(sample, "caption") == 1


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
    guard = CostGuard(0.001, 10, 0.0)
    _run_one(guard, 0.00137)
    assert str(guard.stop_error(0.00137, 1, 10)).startswith(
        "stopped at run.max_cost_usd=$0.0010: the cost so far, $0.0014, is above it; spent $0.0014 in all"
    )
    guard = CostGuard(0.004, 10, 0.0)
    for _ in range(3):
        _run_one(guard, 0.00042)
    assert str(guard.stop_error(0.00126, 3, 10)).startswith(
        "stopped at run.max_cost_usd=$0.0040: 3 samples cost $0.0013 (about $0.000420 each), so this run's 10 "
        "samples project to $0.0042 in all; spent $0.0013 in all"
    )


def test_a_real_run_with_a_tiny_budget_says_what_it_spent(synth_dir, scripted_server, offline_sets, tmp_path, capsys):
    from viddiff.cli import main

    out = tmp_path / "run"
    args = ["-q", "run", "--dataset", str(synth_dir), "--mode", "closed", "--output", str(out), *offline_sets,
            "--set", "run.max_cost_usd=0.0001", "--set", "run.max_samples_in_flight=1"]
    assert main(args) == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "$0.00 " not in line and "$0.00," not in line and "run.max_cost_usd=$0.00010" in line, line


def test_concurrent_samples_stop_before_the_budget_and_keep_their_outputs(
    synth_dir, scripted_server, offline_sets, tmp_path, capsys
):
    """Issue 32, item 4, over real HTTP: with three samples in flight, a budget that pays for two stopped the run
    saying less than it spent, with every sample finished and no predictions or scores written. Now the third
    sample never starts, the line says what usage.json records, and the finished samples are scored."""
    from viddiff.cli import main

    out = tmp_path / "run"
    args = ["-q", "run", "--dataset", str(synth_dir), "--mode", "closed", "--output", str(out), *offline_sets,
            "--set", "run.max_cost_usd=0.0007", "--set", "run.max_samples_in_flight=3"]
    assert main(args) == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    usage = json.loads((out / "usage.json").read_text())
    spent = sum(stage["cost_usd"] for stage in usage["by_stage"].values())
    assert 0 < spent <= 0.0007
    assert f"spent ${spent:.5f} in all (usage.json)" in line, line
    finished = [json.loads(row)["sample_key"] for row in (out / "samples.jsonl").read_text().splitlines()]
    assert 0 < len(finished) < 3 and f"{len(finished)} of 3 samples finished" in line
    assert not (out / "failures.jsonl").exists()  # nothing was cut off half-way
    assert len(json.loads((out / "predictions.json").read_text())) == len(finished)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["counts"]["samples"] == len(finished)
    assert f"Incomplete: {len(finished)} of 3 samples are scored" in (out / "report.md").read_text()
