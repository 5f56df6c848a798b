"""``run.max_cost_usd``: stop a run whose estimated model cost would exceed the budget.

After each sample (finished or failed) the guard adds what the sample's
calls cost (``endpoints.prices``) and, from the first few samples on,
projects the whole run: the cost of earlier attempts in the directory plus
this run's average per sample times the samples it still has to do. Above
the budget the run stops, resumable, before spending the rest. The
evaluation's judge calls (open mode, checklist judges) come after the samples and
are not part of the projection.
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping, Optional

from viddiff.config import Config, ConfigError, ModelCallConfig
from viddiff.errors import CostLimitError
from viddiff.schema import StageUsage

SAMPLES_BEFORE_PROJECTING = 3
"""Samples whose cost is averaged before projecting (fewer when the run has fewer)."""


def total_cost(usages: Iterable[dict[str, StageUsage]]) -> Optional[float]:
    """Summed cost of per-stage usages; ``None`` when any call's model has no price."""
    total: Optional[float] = 0.0
    for usage in usages:
        for stage in usage.values():
            total = None if total is None or stage.cost_usd is None else total + stage.cost_usd
    return total


def check_prices(cfg: Config, calls: Mapping[str, ModelCallConfig]) -> None:
    """With a budget set, every model the method calls (``calls``: stage → model) needs a price, or the
    guard could not work."""
    if cfg.run.max_cost_usd is None:
        return
    for stage, call in calls.items():
        if call.model not in cfg.endpoints.prices:
            raise ConfigError(
                f"run.max_cost_usd is set but model {call.model!r} ({stage}) has no price, so its cost cannot be "
                f"estimated; add --set endpoints.prices.{call.model}.input_per_mtok=... and "
                f"endpoints.prices.{call.model}.output_per_mtok=... (USD per million tokens)"
            )


class CostGuard:
    """Tracks one run's spending against ``limit`` (``None`` = no budget, never stops)."""

    def __init__(self, limit: Optional[float], n_todo: int, spent_before: Optional[float]):
        self.limit = limit
        self.n_todo = n_todo
        self.spent_before = spent_before or 0.0
        self.spent = 0.0
        self.n_done = 0

    def add(self, usage: dict[str, StageUsage]) -> None:
        """Count one sample's calls; raise :class:`CostLimitError` if the run would go over budget."""
        if self.limit is None:
            return
        cost = total_cost([usage])
        if cost is None:
            models = ", ".join(sorted(s for s, u in usage.items() if u.cost_usd is None))
            raise CostLimitError(
                f"stopped: run.max_cost_usd is set but calls of stage {models} have no price in endpoints.prices, "
                "so the cost cannot be tracked; add the model's price and re-run with --resume"
            )
        self.spent += cost
        self.n_done += 1
        so_far = self.spent_before + self.spent
        if so_far > self.limit:
            spent, limit = dollars(so_far, self.limit)
            raise CostLimitError(
                f"stopped: the estimated cost so far, {spent}, is above run.max_cost_usd={limit}; " + _advice()
            )
        if self.n_done < min(SAMPLES_BEFORE_PROJECTING, self.n_todo):
            return
        per_sample = self.spent / self.n_done
        projected = so_far + per_sample * (self.n_todo - self.n_done)
        if projected > self.limit:
            spent, total, limit = dollars(self.spent, projected, self.limit)
            (each,) = dollars(per_sample, extra_digits=1)
            raise CostLimitError(
                f"stopped: {self.n_done} samples cost {spent} (about {each} each), so this run's {self.n_todo} "
                f"samples project to {total} in all, above run.max_cost_usd={limit}; " + _advice()
            )


def dollars(*amounts: float, extra_digits: int = 0) -> tuple[str, ...]:
    """``$`` amounts with one number of decimals: at least 2, enough for two significant digits of the smallest,
    and more while two different amounts would print the same (a budget of $0.004 is not "$0.00")."""
    nonzero = [abs(a) for a in amounts if a]
    decimals = max([2] + [1 - math.floor(math.log10(a)) for a in nonzero])
    while decimals < _MAX_DECIMALS and len({f"{a:.{decimals}f}" for a in amounts}) < len(set(amounts)):
        decimals += 1
    return tuple(f"${a:.{decimals + extra_digits}f}" for a in amounts)


_MAX_DECIMALS = 8


def _advice() -> str:
    return (
        "finished samples are kept: raise run.max_cost_usd (it may change on --resume) or select fewer samples "
        "(--limit), then re-run with --resume"
    )
