"""Audit end-to-end fixtures: a position-biased server beside the session's scripted one, and the command."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator

import pytest

from viddiff.cli import main
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.responders import AlwaysA


@pytest.fixture(scope="session")
def always_a_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(AlwaysA()) as server:
        yield server


@pytest.fixture
def audit(synth_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., int]:
    """``audit(server, out, *args, cache=..., dataset=...)``: ``viddiff audit`` against ``server`` with tiny
    random CLIP, the cache in this test's tmp dir (``cache`` names the file), on the synthetic benchmark."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")

    def run(
        server: FakeOpenAIServer, out: Path, *args: str, cache: str = "cache.sqlite", dataset: Path = synth_dir
    ) -> int:
        sets = [a for item in offline_overrides(server.base_url, str(tmp_path / cache)) for a in ("--set", item)]
        return main(["audit", "--dataset", str(dataset), "--output", str(out), *sets, *args])

    return run
