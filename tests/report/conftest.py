"""Fixtures for report tests: a stand-in model with hostile text, a WebM pair any Chromium plays."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from viddiff.data.synth_actions import ACTIONS
from viddiff.data.synthetic import render_performance
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.report_pages import HostileModel
from viddiff.video.write import write_video


@pytest.fixture(scope="session")
def hostile_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(HostileModel()) as server:
        yield server


@pytest.fixture
def hostile_sets(tmp_path: Path, hostile_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``--set`` arguments for an offline run against the hostile model, with a fresh cache."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    out: list[str] = []
    for item in offline_overrides(hostile_server.base_url, str(tmp_path / "cache.sqlite")):
        out += ["--set", item]
    return out


@pytest.fixture(scope="session")
def webm_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One synthetic squat as VP9 WebM (plays in any Chromium build); B is the same squat at half speed."""
    spec = ACTIONS[0]
    params = {p.name: (p.low + p.high) / 2 for p in spec.params}
    frames = list(render_performance(spec, params))
    out = tmp_path_factory.mktemp("webm")
    a = write_video(out / "squat a.webm", frames, spec.fps, codec="libvpx-vp9")
    b = write_video(out / "squat b.webm", [f for f in frames for _ in (0, 1)], spec.fps, codec="libvpx-vp9")
    return a, b


@pytest.fixture
def cli(capsys: pytest.CaptureFixture):
    """Run ``viddiff`` in-process: ``(exit code, stdout, stderr)``."""
    from viddiff.cli import main

    def run(argv: list[str]) -> tuple[int, str, str]:
        rc = main(argv)
        captured = capsys.readouterr()
        return rc, captured.out, captured.err

    return run
