"""Single-video tasks, ``baseline.task_frames``: a fixed frame count sampled as the VidPair-Halluc release samples
it, frames tiled into one grid image (white bands, size cap, PNG), and pair-aware requests, over real HTTP."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from viddiff.config import Config
from viddiff.methods.lmm.baseline import LMMBaseline
from viddiff.methods.lmm.grid import frame_grid
from viddiff.methods.lmm.video_task import OTHER_VIDEO_LABEL, TASK_VIDEO_LABEL
from viddiff.schema import Sample, VideoRef, VideoTask
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.video import read_video
from viddiff.video.timing import segment_centres
from viddiff.video.write import write_video


def test_segment_centres_follow_the_release_rule_with_half_even_rounding() -> None:
    # 450 frames, 16 segments: step 449/16 = 28.0625, start int(14.03) = 14; k=8 gives 224.5, rounded to 224.
    got = segment_centres(450, 16).tolist()
    assert got[:3] == [14, 42, 70] and got[8] == 14 + 224 and got[15] == 14 + 421
    # A clip shorter than the count repeats frames: step 9/16, round(0.5625 k), 4.5 -> 4.
    assert segment_centres(10, 16).tolist() == [0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 6, 6, 7, 7, 8, 8]
    with pytest.raises(ValueError):
        segment_centres(0, 16)


def _counting_clip(path: Path, n: int, fps: float = 8.0) -> Path:
    """Frame i is a flat grey of value 8 * i, so a decoded frame says which one it is."""
    frames = np.stack([np.full((32, 48, 3), 8 * i, np.uint8) for i in range(n)])
    write_video(path, frames, fps, options={"crf": "0", "preset": "ultrafast"})
    return path


def test_read_video_with_a_count_decodes_exactly_those_frames(tmp_path: Path) -> None:
    video = read_video(_counting_clip(tmp_path / "v.mp4", 30), count=16)
    expected = segment_centres(30, 16)
    assert video.frame_indices.tolist() == expected.tolist() and video.stride is None
    means = video.frames.reshape(16, -1).mean(axis=1)
    assert np.allclose(means, 8 * expected, atol=3)
    assert video.fps == pytest.approx(16 / (30 / 8.0))


def test_a_short_clip_repeats_frames_to_reach_the_count(tmp_path: Path) -> None:
    video = read_video(_counting_clip(tmp_path / "short.mp4", 10), count=16)
    assert len(video.frames) == 16 and video.frame_indices.tolist() == segment_centres(10, 16).tolist()
    assert np.array_equal(video.frames[1], video.frames[2])  # both frame 1


def test_frame_grid_tiles_row_by_row_with_white_bands_and_white_spare_cells() -> None:
    frames = np.stack([np.full((8, 10, 3), 10 * (i + 1), np.uint8) for i in range(10)])
    grid = np.asarray(frame_grid(frames, band_px=2, max_side=None))
    assert grid.shape == (4 * 8 + 3 * 2, 4 * 10 + 3 * 2, 3)  # ceil(sqrt(10)) = 4: a 4 x 4 grid
    assert (grid[10:18, 24:34] == 70).all()  # row 1, column 2: frame 6
    assert (grid[8:10, :] == 255).all() and (grid[:, 10:12] == 255).all()  # bands
    assert (grid[30:38, 12:22] == 255).all()  # cell 13 has no frame: white


def test_frame_grid_shrinks_to_the_cap_truncating_sides() -> None:
    frames = np.zeros((16, 360, 640, 3), np.uint8)
    grid = frame_grid(frames, band_px=50, max_side=1920)
    # 4*640 + 150 = 2710 wide, 4*360 + 150 = 1590 high; both sides times 1920/2710, truncated as the release
    # truncates them: 2710 * (1920/2710) is 1919.9999... in floating point, so the long side is 1919.
    assert grid.size == (1919, 1126)


def _sample(video: Path, other: Path, pair_aware: bool) -> Sample:
    return Sample(
        sample_key="q1", action="P1/color", action_name="pair P1", action_description="", split="binary",
        domain="vidpair-halluc", videos=(VideoRef(path=str(video)), VideoRef(path=str(other))),
        task=VideoTask(prompt="Is the disc red? Answer Yes or No.", pair_aware=pair_aware),
    )


def _ask(tmp_path: Path, sample: Sample, *overrides: str):
    with FakeOpenAIServer(lambda req: "Yes.") as server:
        config = Config().with_overrides(
            [*offline_overrides(server.base_url, str(tmp_path / "c.sqlite")), "baseline.model=fake-vlm", *overrides]
        )

        async def go():
            method = LMMBaseline(config)
            try:
                return await method.aprocess(sample, "qa")
            finally:
                await method.aclose()

        result = asyncio.run(go())
        (request,) = server.requests
    return result, request


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    dark, bright = tmp_path / "dark.mp4", tmp_path / "bright.mp4"
    write_video(dark, np.full((20, 36, 48, 3), 30, np.uint8), 8.0)
    write_video(bright, np.full((20, 36, 48, 3), 220, np.uint8), 8.0)
    return dark, bright


def test_the_release_gpt4o_setting_sends_one_png_grid_after_the_words(tmp_path: Path, pair, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    result, req = _ask(
        tmp_path, _sample(*pair, pair_aware=False), "baseline.temperature=0.2",
        "baseline.max_tokens=512", "baseline.task_frames.count=16", "baseline.task_frames.layout=grid",
        "baseline.image.max_side=null",
    )
    assert result.response == "Yes."
    assert [m["role"] for m in req.messages] == ["user"] and req.texts == ["Is the disc red? Answer Yes or No."]
    (image,) = req.images
    assert image.mime == "image/png" and image.size == (4 * 48 + 150, 4 * 36 + 150)
    assert req.body["temperature"] == 0.2 and req.body["max_tokens"] == 512
    assert "16 tiled in 1 grid image" in result.notes[0]


def test_pair_aware_grids_show_the_task_video_first_then_the_other_labelled(tmp_path: Path, pair, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    dark, bright = pair
    sample = _sample(bright, dark, pair_aware=True).model_copy(
        update={"task": VideoTask(prompt="Is the disc red?", video=1, pair_aware=True)}
    )
    result, req = _ask(tmp_path, sample, "baseline.task_frames.count=4", "baseline.task_frames.layout=grid")
    assert req.texts == ["Is the disc red?", TASK_VIDEO_LABEL, OTHER_VIDEO_LABEL]
    first, second = (float(np.asarray(i.image.convert("L")).mean()) for i in req.images)
    assert first < second  # the task's video (index 1: dark) first, its partner (bright) second; bands are white in both
    assert any("pair-aware" in n for n in result.notes)


def test_pair_aware_frames_share_the_frame_budget(tmp_path: Path, pair, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    result, req = _ask(tmp_path, _sample(*pair, pair_aware=True), "baseline.max_images=6")
    assert len(req.images) <= 6
    labels = [i for i, t in enumerate(req.texts) if t in (TASK_VIDEO_LABEL, OTHER_VIDEO_LABEL)]
    assert labels == [1, 2] and req.texts[0] == "Is the disc red? Answer Yes or No."
    means = [float(np.asarray(i.image.convert("L")).mean()) for i in req.images]
    half = len(means) // 2
    assert max(means[:half]) < 100 < min(means[half:])  # the task's (dark) frames, then the other's (bright)


def test_without_pair_aware_the_partner_is_never_sent(tmp_path: Path, pair, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    result, req = _ask(tmp_path, _sample(*pair, pair_aware=False))
    assert all(float(np.asarray(i.image.convert("L")).mean()) < 100 for i in req.images)
    assert TASK_VIDEO_LABEL not in req.texts


def test_a_pair_aware_task_needs_a_second_video() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="pair-aware task needs"):
        Sample(sample_key="x", action="a", action_name="a", action_description="", split="s", domain="d",
               videos=(VideoRef(path="v.mp4"),), task=VideoTask(prompt="q", pair_aware=True))
