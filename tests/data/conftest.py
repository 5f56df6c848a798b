"""Fixtures for the data tests: one small synthetic benchmark shared by the whole session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from viddiff.data.synthetic import write_synthetic_benchmark

SYNTH_PAIRS = 4
SYNTH_SEED = 3


@pytest.fixture(scope="session")
def synth_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``dataset.jsonl`` of a 4-pair synthetic benchmark (pairs 0-3 cover every storage layout)."""
    return write_synthetic_benchmark(tmp_path_factory.mktemp("synth"), pairs=SYNTH_PAIRS, seed=SYNTH_SEED)


@pytest.fixture(scope="session")
def synth_seed() -> int:
    return SYNTH_SEED


@pytest.fixture(scope="session")
def synth_rows(synth_file: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in synth_file.read_text().splitlines()]
