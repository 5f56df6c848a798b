"""Benchmarks as plug-ins: a registry of :class:`~viddiff.benchmarks.base.Benchmark` objects by name.

``viddiff run/eval/baseline/audit/ablate/data --benchmark NAME`` and ``data.benchmark`` look the benchmark
up here; every step that depends on the benchmark (loading, checking, synthetic fixtures, the predictions
file, scoring, reports) is one of its methods. Built-in benchmarks are imported on first use; plug-ins
outside the package register themselves either with :func:`register` or through an entry point in the
group ``viddiff.benchmarks`` (``name = "package.module:OBJECT"``), so the command line knows them too.
See docs/extending.md.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from pydantic import BaseModel

from viddiff.benchmarks.base import Benchmark
from viddiff.config import Config
from viddiff.data.dataset import Dataset
from viddiff.plugins import BENCHMARKS
from viddiff.schema import Mode

ENTRY_POINT_GROUP = BENCHMARKS.group


def register(benchmark: Benchmark) -> Benchmark:
    """Make ``benchmark`` available under ``benchmark.name`` (for plug-ins that are imported, not installed)."""
    return BENCHMARKS.register(benchmark.name, benchmark)


def names() -> list[str]:
    """Every benchmark name: the built-in ones, the registered ones, then installed plug-ins."""
    return BENCHMARKS.names()


def get(name: str) -> Benchmark:
    """The benchmark called ``name``; an unknown name is a :class:`~viddiff.errors.ConfigError` listing the known ones."""
    return BENCHMARKS.get(name)


def of(cfg: Config) -> Benchmark:
    """The benchmark ``cfg.data.benchmark`` names."""
    return get(cfg.data.benchmark)


def load_benchmark(cfg: Config, splits: Optional[Sequence[str]] = None, *, fetch_videos: bool = True) -> Dataset:
    """The dataset of ``cfg.data.benchmark``, filtered like every command filters it.

    ``fetch_videos=False`` when only the annotations are needed (scoring): a benchmark that downloads
    videos on demand then skips them.
    """
    return of(cfg).load(cfg, splits, fetch_videos=fetch_videos)


def resolve_mode(cfg: Config, mode: Optional[str]) -> Mode:
    """The task mode to run or score on ``cfg.data.benchmark`` (its only one when none is given)."""
    return of(cfg).resolve_mode(mode)


def evaluate_dataset(
    dataset: Dataset, predictions: Any, mode: Mode, cfg: Config, client: Optional[Any] = None
) -> BaseModel:
    """Score predictions (a file or the parsed object) against a loaded benchmark selection."""
    return get(dataset.benchmark).score(dataset, predictions, mode, cfg, client)


__all__ = ["Benchmark", "evaluate_dataset", "get", "load_benchmark", "names", "of", "register", "resolve_mode"]
