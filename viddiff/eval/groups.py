"""Ordering and grouping of per-difference records into report rows.

Shared by the closed and open scorers so both modes break results down the
same way (split, action, difference) and list them in the same order.
"""

from __future__ import annotations

import re
from typing import Callable, Generic, Hashable, Iterable, TypeVar

from pydantic import BaseModel, ConfigDict

from viddiff.schema import SPLITS

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)
S = TypeVar("S")


def key_order(key: str) -> tuple[int, str]:
    """Difference keys sort numerically ("2" before "10"); non-digit keys last."""
    return (int(key), key) if key.isdigit() else (10**9, key)


def split_order(split: str) -> tuple[int, str]:
    """Benchmark splits in difficulty order, then any other split by name."""
    return (SPLITS.index(split), split) if split in SPLITS else (len(SPLITS), split)


def natural_order(text: str) -> tuple:
    """``fitness_2`` before ``fitness_10``."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))


def group_by(items: Iterable[T], key: Callable[[T], K], order: Callable[[K], object]) -> list[tuple[K, list[T]]]:
    """Items grouped by ``key``, groups sorted by ``order(key)``, items kept in input order."""
    groups: dict[K, list[T]] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return sorted(groups.items(), key=lambda kv: order(kv[0]))


class ActionRow(BaseModel, Generic[S]):
    """Metrics of one action (within one split)."""

    model_config = ConfigDict(extra="forbid")

    split: str
    action: str
    action_name: str
    stats: S


class DifferenceRow(BaseModel, Generic[S]):
    """Metrics of one annotated difference of one action, across its samples."""

    model_config = ConfigDict(extra="forbid")

    split: str
    action: str
    action_name: str
    key: str
    name: str
    description: str
    stats: S


class RecordBase(BaseModel):
    """Fields every per-difference record carries (closed and open): which ground-truth difference."""

    model_config = ConfigDict(extra="forbid")

    index: int
    """Position of the sample in dataset order."""
    sample_key: str
    split: str
    action: str
    action_name: str
    key: str
    name: str
    description: str


R = TypeVar("R", bound=RecordBase)


def by_split(records: list[R]) -> list[tuple[str, list[R]]]:
    return group_by(records, lambda r: r.split, split_order)


def by_action(records: list[R]) -> list[tuple[tuple[str, str, str], list[R]]]:
    return group_by(
        records,
        lambda r: (r.split, r.action, r.action_name),
        lambda k: (split_order(k[0]), natural_order(k[1])),
    )


def by_difference(records: list[R]) -> list[tuple[tuple[str, str, str, str, str, str], list[R]]]:
    return group_by(
        records,
        lambda r: (r.split, r.action, r.action_name, r.key, r.name, r.description),
        lambda k: (split_order(k[0]), natural_order(k[1]), key_order(k[3]), k[4], k[5]),
    )
