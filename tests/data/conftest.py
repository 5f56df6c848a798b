"""Fixtures for the data tests: a small synthetic benchmark, the published repo layouts and a local Hub serving them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import pytest

from viddiff.data.synthetic import write_synthetic_benchmark

if TYPE_CHECKING:
    from viddiff.testing.fake_hf import FakeHubServer

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


@pytest.fixture(scope="session")
def layout_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One folder per published VidDiffBench repo layout (our own rows), written once per session."""
    from viddiff.testing.hub_layouts import LAYOUTS, write_layout

    root = tmp_path_factory.mktemp("layouts")
    return {repo: write_layout(repo, root / repo.replace("/", "--")) for repo in LAYOUTS}


@pytest.fixture
def fake_hub(layout_dirs: dict[str, Path]) -> Iterator["FakeHubServer"]:
    """A local Hub serving every layout as the ``main`` branch of its repo (fresh request log and faults per test)."""
    from viddiff.testing.fake_hf import FakeHubServer

    with FakeHubServer({repo: {"main": folder} for repo, folder in layout_dirs.items()}) as server:
        yield server


@pytest.fixture
def hub_env(fake_hub: "FakeHubServer", tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Point huggingface_hub at ``fake_hub`` and every cache and data folder at this test's tmp dir.

    Returns the same settings as environment variables, for subprocesses.
    """
    env = {
        "HF_ENDPOINT": fake_hub.url,
        "HF_HUB_CACHE": str(tmp_path / "hf-cache"),
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
        "HF_HUB_DISABLE_TELEMETRY": "1",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    return env
