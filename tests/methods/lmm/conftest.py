"""Fixtures for the LMM baseline tests: a 3-pair synthetic benchmark, its frames as the baseline must
sample them, and a helper that runs ``viddiff baseline`` against a fake OpenAI-compatible server."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from viddiff.cli import main
from viddiff.config import BaselineConfig, DataConfig
from viddiff.data.synthetic import write_synthetic_benchmark
from viddiff.data.viddiffbench import load_dataset
from viddiff.schema import Sample
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.video import VideoFrames, read_video_ref

RunBaseline = Callable[..., tuple[int, Path]]


@pytest.fixture(scope="session")
def baseline_synth(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Squat (fitness, easy, 8 fps source) and free throw (ballsports, medium, 20 fps);
    one B is a PNG directory, one A is trimmed."""
    out = tmp_path_factory.mktemp("baseline-synth")
    write_synthetic_benchmark(out, pairs=3, seed=5)
    return out


@pytest.fixture(scope="session")
def baseline_samples(baseline_synth: Path) -> list[Sample]:
    return list(load_dataset(DataConfig(dataset=str(baseline_synth))))


@pytest.fixture(scope="session")
def domain_frames(baseline_samples: list[Sample]) -> dict[str, tuple[VideoFrames, VideoFrames]]:
    """Per sample: A and B read independently at the baselines' own per-domain fps (what the baseline must send)."""

    def fps(domain: str) -> float:
        return BaselineConfig().fps_by_domain.get(domain, DataConfig().default_fps)

    return {
        s.sample_key: (read_video_ref(s.videos[0], fps(s.domain)), read_video_ref(s.videos[1], fps(s.domain)))
        for s in baseline_samples
    }


@pytest.fixture
def run_baseline(tmp_path: Path, baseline_synth: Path, monkeypatch: pytest.MonkeyPatch) -> RunBaseline:
    """``run_baseline(server, mode, *extra_args, output=name)`` → (exit code, output dir); one cache per test."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")

    def run(server: FakeOpenAIServer, mode: str, *extra: str, output: str = "out") -> tuple[int, Path]:
        out = tmp_path / output
        args = ["-q", "baseline", "--model", "fake-vlm", "--dataset", str(baseline_synth), "--mode", mode]
        args += ["--output", str(out)]
        for item in offline_overrides(server.base_url, str(tmp_path / "cache.sqlite")):
            args += ["--set", item]
        return main([*args, *extra]), out

    return run
