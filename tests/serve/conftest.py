"""Fixtures of the ``viddiff serve`` tests: one server for the package, its model stand-in, clips."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from serve_helpers import LIMITS, Served, StandInModel, serve_config

from viddiff.data.synth_clips import Clip, render
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.service import ServerThread
from viddiff.video.write import write_video


@pytest.fixture(scope="session")
def serve_model() -> Iterator[FakeOpenAIServer]:
    """The model endpoint of the serve tests: their own, because tests slow it down (``latency_s``) to catch
    jobs queued or running."""
    with FakeOpenAIServer(StandInModel()) as server:
        yield server


@pytest.fixture(scope="session")
def clips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Tiny synthetic clips (96x64, 3 s at 8 fps): an MP4 pair, a WebM and an AVI."""
    out = tmp_path_factory.mktemp("serve-clips")
    made = {}
    for name, colour, direction, suffix, codec in (
        ("a", "red", "left to right", ".mp4", "libx264"),
        ("b", "blue", "right to left", ".mp4", "libx264"),
        ("webm", "green", "left to right", ".webm", "libvpx-vp9"),
        ("avi", "yellow", "left to right", ".avi", "mpeg4"),
    ):
        made[name] = write_video(out / f"{name}{suffix}", render(Clip(colour, direction, n_frames=24)), 8.0, codec=codec)
    return made


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory, serve_model: FakeOpenAIServer) -> Iterator[Served]:
    data_dir = tmp_path_factory.mktemp("serve-data")
    with ServerThread(data_dir, serve_config(serve_model, data_dir, LIMITS)) as server:
        yield Served(server, serve_model)
