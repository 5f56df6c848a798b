"""Aligning two phones' videos by their sound: clips written with PyAV, sharing one noise burst (a clap)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import av
import numpy as np
import pytest

from viddiff.pose.sync import SyncError, audio_offset, has_audio

RATE = 48000


def clip(path: Path, seconds: float, burst_at: Optional[float], seed: int, with_audio: bool = True) -> Path:
    """A short mp4 (grey frames at 30 fps; AAC mono) whose sound is quiet room noise with, at ``burst_at`` s, a
    0.1 s burst of loud noise (the same burst in every clip: one clap heard by two phones)."""
    rng = np.random.default_rng(seed)
    sound = rng.normal(0, 0.003, int(seconds * RATE)).astype(np.float32)
    if burst_at is not None:
        burst = np.random.default_rng(99).normal(0, 0.4, int(0.1 * RATE)).astype(np.float32)
        start = int(burst_at * RATE)
        sound[start : start + len(burst)] += burst
    with av.open(str(path), "w") as container:
        video = container.add_stream("libx264", rate=30)
        video.width, video.height, video.pix_fmt = 64, 64, "yuv420p"
        audio = container.add_stream("aac", rate=RATE, layout="mono") if with_audio else None
        for i in range(int(seconds * 30)):
            frame = av.VideoFrame.from_ndarray(np.full((64, 64, 3), 100, np.uint8), format="rgb24")
            container.mux(video.encode(frame))
        container.mux(video.encode())
        if audio is not None:
            chunk = 1024
            for i in range(0, len(sound), chunk):
                frame = av.AudioFrame.from_ndarray(sound[None, i : i + chunk], format="fltp", layout="mono")
                frame.sample_rate, frame.pts = RATE, i
                container.mux(audio.encode(frame))
            container.mux(audio.encode())
    return path


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("audio_sync")
    return {
        "main": clip(folder / "main.mp4", 3.0, 1.0, seed=1),
        "later": clip(folder / "later.mp4", 3.0, 1.3, seed=2),  # started 0.3 s earlier: hears the clap at 1.3 s
        "quiet": clip(folder / "quiet.mp4", 3.0, None, seed=3),
        "silent": clip(folder / "silent.mp4", 1.0, None, seed=4, with_audio=False),
    }


def test_the_offset_is_found_from_a_shared_clap(clips) -> None:
    found = audio_offset(clips["main"], clips["later"])
    assert found.method == "audio" and found.score > 0.5
    assert abs(found.offset_s - 0.3) < 0.005  # the AAC encoder's priming delay is the same in both files
    assert abs(audio_offset(clips["later"], clips["main"]).offset_s + 0.3) < 0.005


def test_sound_without_a_distinct_event_is_refused(clips) -> None:
    with pytest.raises(SyncError, match="could not be aligned by audio"):
        audio_offset(clips["main"], clips["quiet"])


def test_a_video_without_sound_says_so(clips) -> None:
    assert has_audio(clips["main"]) and not has_audio(clips["silent"])
    with pytest.raises(SyncError, match="has no audio track"):
        audio_offset(clips["main"], clips["silent"])
