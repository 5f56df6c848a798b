"""Phone videos through the Python API: keyframe times and the spacing told to the VLM are true times,
and portrait clips reach the VLM upright (real files, real HTTP to the local fake server)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import viddiff
from viddiff.config import load_config
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.video.write import write_video

BURST_THEN_GAPS = [i / 30 for i in range(21)] + [0.7 + 0.5 * k for k in range(1, 8)]


def moving_bar(n: int, height: int = 48, width: int = 64) -> list[np.ndarray]:
    frames = []
    for i in range(n):
        frame = np.full((height, width, 3), 40, np.uint8)
        frame[:, (4 * i) % (width - 8):(4 * i) % (width - 8) + 8] = 220
        frames.append(frame)
    return frames


@pytest.fixture
def offline_config(offline_sets: list[str]):
    # uniform stages keep the keyframes predictable: no CLIP needed
    return load_config(None, [*offline_sets[1::2], "localizer.method=uniform", "data.default_fps=4"])


def differencer_texts(server: FakeOpenAIServer, since: int) -> list[str]:
    return [
        " ".join(r.texts) for r in server.requests[since:]
        if "Which video is the statement more true of" in " ".join(r.texts)
    ]


def test_vfr_keyframe_times_and_prompt_spacing_are_true(
    tmp_path: Path, offline_config, scripted_server: FakeOpenAIServer
) -> None:
    vfr = write_video(tmp_path / "phone.mp4", moving_bar(len(BURST_THEN_GAPS)), 30, times_s=BURST_THEN_GAPS)
    cfr = write_video(tmp_path / "camera.mp4", moving_bar(40), 10)
    seen = len(scripted_server.requests)
    result = viddiff.compare(
        vfr, cfr, action="barbell back squat", differences=["the bar moves faster"], config=offline_config
    )
    diff = result.differences[0]
    # every reported time is the presentation time of the reported frame (not index / average fps)
    assert diff.times_a == pytest.approx([BURST_THEN_GAPS[f] for f in diff.keyframes_a], abs=1e-3)
    assert diff.times_b == pytest.approx([f / 10 for f in diff.keyframes_b], abs=1e-3)
    assert any("variable frame rate" in note for note in result.notes)
    assert len(diff.times_a) == 3 and len(set(np.diff(diff.times_a).round(3))) > 1  # unevenly spaced
    (text,) = differencer_texts(scripted_server, seen)
    listed_a = ", ".join(f"{t - diff.times_a[0]:.2f}" for t in diff.times_a)
    listed_b = ", ".join(f"{t - diff.times_b[0]:.2f}" for t in diff.times_b)
    assert f"Seconds since each video's first shown frame: video A {listed_a}; video B {listed_b}." in text
    assert "consecutive frames are" not in text  # one average spacing would misstate them


def test_even_spacing_keeps_the_one_sentence(tmp_path: Path, offline_config, scripted_server: FakeOpenAIServer) -> None:
    a = write_video(tmp_path / "a.mp4", moving_bar(40), 10)
    b = write_video(tmp_path / "b.mp4", moving_bar(40), 10)
    seen = len(scripted_server.requests)
    result = viddiff.compare(a, b, action="barbell back squat", differences=["the bar moves faster"], config=offline_config)
    diff = result.differences[0]
    assert len(diff.times_a) == 3 and not any("variable" in n for n in result.notes)
    (text,) = differencer_texts(scripted_server, seen)
    gap = diff.times_a[1] - diff.times_a[0]
    assert f"consecutive frames are {gap:.2f} seconds apart" in text


def test_portrait_phone_clip_reaches_the_vlm_upright(
    tmp_path: Path, offline_config, scripted_server: FakeOpenAIServer
) -> None:
    upright = np.zeros((64, 48, 3), np.uint8)
    upright[:16] = 255  # a bright top band: the "head" of the portrait frame
    stored = np.rot90(upright, -1)  # the sensor's landscape frame; the display matrix turns it back
    phone = write_video(tmp_path / "portrait.mov", [stored.copy()] * 10, 10, display_rotation=90)
    seen = len(scripted_server.requests)
    viddiff.compare(phone, phone, action="squat", differences=["the head is higher"], config=offline_config)
    images = [img for r in scripted_server.requests[seen:] for img in r.images]
    assert images
    for part in images:
        pixels = np.asarray(part.image.convert("L"), dtype=float)
        assert part.size[0] < part.size[1]  # portrait: width < height
        assert pixels[: pixels.shape[0] // 4].mean() > 200 > pixels[pixels.shape[0] // 2:].mean() + 100
