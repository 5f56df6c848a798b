"""Fixtures for the reliability tests: broken and unusual videos, and fake servers with their own fault plans."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Callable, ContextManager, Iterator, Optional

import av
import numpy as np
import pytest

from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import FakeOpenAIServer, FaultPlan
from viddiff.testing.responders import ScriptedModel
from viddiff.video.write import write_video

HUGE_SIZE = (4320, 7680)  # 8K UHD, (height, width)


def _moving_square(n: int, height: int = 96, width: int = 128, seed: int = 0) -> list[np.ndarray]:
    """Frames with a bright square drifting right over noise, so CLIP and the scripted VLM see content."""
    rng = np.random.default_rng(seed)
    frames = []
    for i in range(n):
        frame = rng.integers(0, 60, (height, width, 3), dtype=np.uint8)
        x = (i * 7) % (width - 24)
        frame[30:54, x : x + 24] = 230
        frames.append(frame)
    return frames


def _zero_frame_video(path: Path) -> Path:
    """A valid AVI that declares an MPEG-4 video stream but holds no frame of it (MP4 would drop the stream)."""
    with av.open(str(path), "w") as container:
        stream = container.add_stream("mpeg4", rate=12)
        stream.width, stream.height, stream.pix_fmt = 128, 96, "yuv420p"
        container.start_encoding()
    return path


def _audio_only(path: Path) -> Path:
    """An .mp4 holding a short AAC track and no video stream (what a phone's voice memo looks like)."""
    with av.open(str(path), "w") as container:
        stream = container.add_stream("aac", rate=16000)
        for i in range(8):
            frame = av.AudioFrame.from_ndarray(np.zeros((1, 1024), dtype=np.float32), format="fltp", layout="mono")
            frame.sample_rate, frame.pts = 16000, i * 1024
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    return path


@pytest.fixture(scope="session")
def media(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Good, odd and broken inputs for ``compare``/``run``, written once per session."""
    root = tmp_path_factory.mktemp("rel-media")
    ok = write_video(root / "ok.mp4", _moving_square(24), 12)
    data = ok.read_bytes()
    truncated = root / "truncated.mp4"
    truncated.write_bytes(data[: len(data) // 2])  # the moov index sits at the end: cut, the file cannot be opened
    garbage = root / "garbage.mp4"
    garbage.write_bytes(np.random.default_rng(1).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    empty = root / "empty.mp4"
    empty.write_bytes(b"")
    loop = root / "loop.mp4"
    loop.symlink_to(loop.name)  # a path that exists as a name but can never be opened, even by root
    return {
        "ok": ok,
        "ok_b": write_video(root / "ok_b.mp4", _moving_square(24, seed=3)[::-1], 12),
        "fps30": write_video(root / "fps30.mp4", _moving_square(60, seed=2), 30),
        "one_frame": write_video(root / "one_frame.mp4", _moving_square(1), 12),
        "truncated": truncated,
        "garbage": garbage,
        "empty": empty,
        "loop": loop,
        "zero_frames": _zero_frame_video(root / "zero_frames.avi"),
        "audio_only": _audio_only(root / "audio_only.mp4"),
        "missing": root / "missing.mp4",
    }


@pytest.fixture(scope="session")
def huge_video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two 7680x4320 frames (an 8K upload); encoding is the slow part, so it is made once."""
    height, width = HUGE_SIZE
    frame = np.zeros((height, width, 3), dtype=np.uint8)
    frame[: height // 2, : width // 3] = 220
    frames = [frame, frame[::-1].copy()]
    return write_video(tmp_path_factory.mktemp("rel-huge") / "uhd8k.mp4", frames, 4, options={"preset": "ultrafast"})


ServerFactory = Callable[..., ContextManager[tuple[FakeOpenAIServer, list[str]]]]


@pytest.fixture
def fake_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ServerFactory:
    """``with fake_server(faults=..., cache=name) as (server, sets):`` a private scripted server and the
    ``--set`` arguments of an offline run against it (fast retries; a fresh cache per ``cache`` name)."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    @contextlib.contextmanager
    def start(
        faults: Optional[FaultPlan] = None, cache: str = "cache", extra: tuple[str, ...] = ()
    ) -> Iterator[tuple[FakeOpenAIServer, list[str]]]:
        with FakeOpenAIServer(ScriptedModel(), faults=faults) as server:
            items = offline_overrides(server.base_url, str(tmp_path / f"{cache}.sqlite"))
            items += ["endpoints.backoff_max_s=0.05", *extra]
            yield server, [x for item in items for x in ("--set", item)]

    return start


@pytest.fixture
def dataset_with(synth_dir: Path, tmp_path: Path) -> Callable[[dict[int, tuple[Path, Path]]], Path]:
    """A copy of the synthetic benchmark (absolute video paths) with some samples' videos replaced."""

    def make(replace: dict[int, tuple[Path, Path]]) -> Path:
        out = tmp_path / "dataset"
        out.mkdir()
        rows = [json.loads(line) for line in (synth_dir / "dataset.jsonl").read_text().splitlines()]
        for i, row in enumerate(rows):
            videos = [{**v, "path": str(synth_dir / v["path"])} for v in json.loads(row["videos"])]
            if i in replace:
                videos = [{**v, "path": str(p), "frames_trim": None} for v, p in zip(videos, replace[i])]
            row["videos"] = json.dumps(videos)
        (out / "dataset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        return out

    return make

