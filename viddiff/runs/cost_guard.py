"""``run.max_cost_usd``: a run never starts a sample its budget cannot pay for.

Samples run concurrently, so a sample's cost is reserved before it starts, and the reservations of
the samples in flight plus this one must fit under the budget with what the run (and earlier attempts
in the directory) already spent. A sample's reservation is its size (the differences it asks about,
:func:`sample_size`) times the highest cost per difference of the samples finished so far. Until the
first sample's cost is known, one sample runs at a time. From the first few samples on, the whole run is also projected
(this run's average per sample times the samples it still has to do); above the budget the run stops
starting samples. Either way the samples in flight finish and are kept, and the run ends resumable,
saying what it really spent. Only a sample that cost more than its reservation can take the spending
over the budget; the run then stops at once, cancelling the rest. The evaluation's judge calls (open
mode, checklist judges) come after the samples and are not part of the budget.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from typing import Iterable, Literal, Mapping, Optional

from viddiff.config import Config, ConfigError, ModelCallConfig
from viddiff.errors import CostLimitError
from viddiff.schema import Mode, Sample, StageUsage

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


Admission = Literal["start", "wait", "stop"]


@dataclass(frozen=True)
class Reservation:
    """What an admitted sample may cost, held against the budget while it runs."""

    size: float
    usd: float


class CostGuard:
    """Admits one run's samples against ``limit`` (``None`` = no budget, admits everything, never stops)."""

    def __init__(self, limit: Optional[float], n_todo: int, spent_before: Optional[float]):
        self.limit = limit
        self.n_todo = n_todo
        self.spent_before = spent_before or 0.0
        self.spent = 0.0
        self.n_done = 0
        self.rate = 0.0
        """The highest cost per unit of sample size so far: what each unit of a sample in flight is reserved."""
        self.reserved = 0.0
        self.in_flight = 0
        self.stop_reason: Optional[str] = None
        """Why no more samples start (the budget's words), once the run stops."""
        self.over_limit = False
        """Spending went over the budget (a sample cost more than reserved): stop the samples in flight too."""
        self._changed = asyncio.Event()

    def admission(self, size: float = 1.0) -> Admission:
        """Whether a sample of ``size`` may start now, must wait for one in flight to finish, or must not start."""
        if self.limit is None:
            return "start"
        if self.stop_reason is not None:
            return "stop"
        so_far = self.spent_before + self.spent
        if self.n_done == 0:
            if so_far >= self.limit:
                spent, limit = dollars(so_far, self.limit)
                self.stop_reason = f"earlier attempts in this directory already cost {spent}, the whole budget of {limit}"
                return "stop"
            return "start" if self.in_flight == 0 else "wait"  # no cost known yet: one sample at a time
        need = self.rate * size
        if so_far + self.reserved + need <= self.limit:
            return "start"
        if self.in_flight:
            return "wait"
        spent, total = dollars(so_far, so_far + need)
        self.stop_reason = f"it has cost {spent}, and the next sample could bring it to {total}"
        return "stop"

    async def admit(self, size: float = 1.0) -> Optional[Reservation]:
        """Wait until a sample of ``size`` fits the budget and reserve its cost; ``None``: it must not start
        (``stop_reason``). Each reservation ends with :meth:`finish` or :meth:`release`."""
        while True:
            verdict = self.admission(size)
            if verdict == "start":
                reservation = Reservation(size=size, usd=self.rate * size)
                self.in_flight += 1
                self.reserved += reservation.usd
                return reservation
            if verdict == "stop":
                self._wake()  # the others waiting learn it too
                return None
            await self._changed.wait()

    def finish(self, reservation: Reservation, usage: dict[str, StageUsage]) -> None:
        """Count one admitted sample's calls (finished or failed) in place of its reservation.

        Raises :class:`CostLimitError` when a call's cost is unknown (nothing can be tracked then).
        """
        self.release(reservation)
        self._count(usage, reservation.size)

    def release(self, reservation: Reservation) -> None:
        """An admitted sample ended: its reservation is free (:meth:`finish` also counts what it cost)."""
        self.in_flight -= 1
        self.reserved = self.reserved - reservation.usd if self.in_flight else 0.0  # no rounding left over
        self._wake()

    def _count(self, usage: dict[str, StageUsage], size: float) -> None:
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
        self.rate = max(self.rate, cost / size)
        so_far = self.spent_before + self.spent
        if so_far > self.limit:
            self.over_limit = True
            self.stop_reason = self.stop_reason or f"the cost so far, {dollars(so_far)[0]}, is above it"
            return
        if self.stop_reason is not None or self.n_done < min(SAMPLES_BEFORE_PROJECTING, self.n_todo):
            return
        per_sample = self.spent / self.n_done
        projected = so_far + per_sample * (self.n_todo - self.n_done)
        if projected > self.limit:
            spent, total = dollars(self.spent, projected)
            (each,) = dollars(per_sample, extra_digits=1)
            self.stop_reason = (
                f"{self.n_done} samples cost {spent} (about {each} each), so this run's {self.n_todo} samples "
                f"project to {total} in all"
            )

    def stop_error(self, spent_in_all: Optional[float], n_finished: int, n_selected: int) -> CostLimitError:
        """The error a run stopped by its budget ends with: why, what it really spent, what was kept."""
        assert self.limit is not None and self.stop_reason is not None
        limit = dollars(self.limit)[0]
        spent = "an unknown amount" if spent_in_all is None else dollars(spent_in_all, self.limit)[0]
        return CostLimitError(
            f"stopped at run.max_cost_usd={limit}: {self.stop_reason}; spent {spent} in all (usage.json); "
            f"{n_finished} of {n_selected} samples finished, their predictions and scores are written; " + _advice()
        )

    def _wake(self) -> None:
        woken, self._changed = self._changed, asyncio.Event()
        woken.set()


def sample_size(sample: Sample, mode: Mode) -> float:
    """What a sample's cost grows with: the differences a method asks about (one differencer call each), at least 1."""
    if mode == "closed":
        asked = len(sample.closed_differences()) if sample.labels else len(sample.differences)
    elif mode in ("open", "describe"):
        asked = sample.n_differences_open or len(sample.differences)
    else:
        asked = 1
    return float(max(1, asked))


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
    return "raise run.max_cost_usd (it may change on --resume) or select fewer samples (--limit), then re-run with --resume"
