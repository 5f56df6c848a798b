"""Per-stage accounting of model calls, tokens, images and cost.

Cost is ``None`` (unknown) rather than zero for models missing from the
price table, so a report never understates what a run cost.
"""

from __future__ import annotations

import threading
from typing import Optional

from viddiff.config import ModelPrice
from viddiff.schema import StageUsage


def call_cost(prices: dict[str, ModelPrice], model: str, prompt_tokens: int, completion_tokens: int) -> Optional[float]:
    """USD cost of one call, or ``None`` when ``model`` has no price entry."""
    price = prices.get(model)
    if price is None:
        return None
    return (prompt_tokens * price.input_per_mtok + completion_tokens * price.output_per_mtok) / 1e6


class UsageMeter:
    """Accumulates :class:`StageUsage` per stage name.

    A client keeps one for everything it did; callers may pass their own
    meter to a call to also collect, e.g., per-sample usage.
    """

    def __init__(self) -> None:
        self._stages: dict[str, StageUsage] = {}
        self._lock = threading.Lock()

    def record(self, stage: str, usage: StageUsage) -> None:
        with self._lock:
            current = self._stages.get(stage)
            self._stages[stage] = usage.model_copy() if current is None else current.add(usage)

    def by_stage(self) -> dict[str, StageUsage]:
        with self._lock:
            return {name: u.model_copy() for name, u in self._stages.items()}

    def total(self) -> StageUsage:
        total = StageUsage()
        for usage in self.by_stage().values():
            total = total.add(usage)
        return total

    def __repr__(self) -> str:
        return f"UsageMeter({self.by_stage()!r})"
