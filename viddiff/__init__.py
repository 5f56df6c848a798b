"""viddiff: video action differencing (the VidDiff method and the VidDiffBench evaluation).

Public API: ``compare``, ``VidDiff``, ``Config``, ``load_benchmark``, ``evaluate``.
Imports are resolved lazily so ``import viddiff`` (and ``viddiff --help``) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "compare": "viddiff.api",
    "describe": "viddiff.api",
    "VidDiff": "viddiff.api",
    "ComparisonResult": "viddiff.api",
    "Config": "viddiff.config",
    "load_config": "viddiff.config",
    "load_benchmark": "viddiff.benchmarks",
    "evaluate": "viddiff.eval",
    "evaluate_dataset": "viddiff.benchmarks",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'viddiff' has no attribute {name!r}")
