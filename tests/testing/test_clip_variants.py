"""The identical-movement copies of bench/pose_trust.py are what they claim: read back from the files they wrote,
each copy of a real clip (tests/data/pose2sim, shrunk first so the test is fast) has the claimed frames, times,
size and display rotation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from viddiff.testing.clip_variants import (
    REENCODE_CRF,
    SLOW_FACTOR,
    VARIANTS,
    Variant,
    build_variant,
    resized_copy,
    side_by_side,
    vfr_times,
)
from viddiff.video import probe_video, read_video

CLIP = Path(__file__).resolve().parents[1] / "data" / "pose2sim" / "p2s_single_cam01.mp4"
WIDTH, HEIGHT = 180, 320


@pytest.fixture(scope="module")
def small_clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real clip at 180x320 (every frame, 60 fps): the copies' source."""
    return resized_copy(CLIP, tmp_path_factory.mktemp("source") / "small.mp4", WIDTH, HEIGHT)


@pytest.fixture(scope="module")
def source_frames(small_clip: Path) -> np.ndarray:
    return read_video(small_clip).frames


@pytest.fixture(scope="module")
def variants(small_clip: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Variant]:
    out = tmp_path_factory.mktemp("variants")
    return {name: build_variant(small_clip, name, out) for name in VARIANTS}


def gap(a: np.ndarray, b: np.ndarray) -> float:
    """Mean absolute pixel difference of two frame stacks."""
    return float(np.abs(a.astype(np.float64) - b.astype(np.float64)).mean())


@pytest.mark.parametrize("name", VARIANTS)
def test_each_copy_reads_back_with_the_claimed_frames_times_and_size(
    name: str, variants: dict[str, Variant], source_frames: np.ndarray
) -> None:
    variant = variants[name]
    probe = probe_video(variant.path)
    video = read_video(variant.path)
    n = len(source_frames)
    assert len(video.frames) == n and len(variant.source_frames) == n
    assert video.frames.shape[1:3] == (variant.height, variant.width)
    assert video.times_s == pytest.approx(variant.times_s, abs=1e-6)
    assert probe.variable_frame_rate == variant.variable_frame_rate
    assert variant.duration_s == pytest.approx((video.times_s[-1] - video.times_s[0]) * n / (n - 1), rel=0.02)
    turns = {0: "upright", 90: "rotated 90° counter-clockwise", 270: "rotated 90° clockwise"}
    assert probe.orientation.describe() == turns[variant.display_rotation]

    frames, claimed = video.frames, source_frames[variant.source_frames]
    if variant.mirrored:
        frames = frames[:, :, ::-1]
    if name == "half_size":
        claimed = np.stack([_shrunk(f, variant.width, variant.height) for f in claimed])
    if name == "pad":
        bar = (variant.width - WIDTH) // 2
        assert frames[:, :, :bar].max() < 40 and frames[:, :, -bar:].max() < 40  # black bars
        frames = frames[:, :, bar:bar + WIDTH]
    # the claimed source frames, and clearly not the frames 20 further on
    assert gap(frames, claimed) < min(7.0, 0.6 * gap(frames, np.roll(claimed, 20, axis=0)))
    if variant.reversed:
        assert gap(frames, source_frames) > 2 * gap(frames, claimed), "played backwards, not forwards"
    if variant.mirrored:
        assert gap(video.frames, claimed) > 5 * gap(frames, claimed), "mirrored, not as shot"


def _shrunk(frame: np.ndarray, width: int, height: int) -> np.ndarray:
    import cv2

    return cv2.resize(frame, (width, height), interpolation=cv2.INTER_AREA)


def test_stored_frames_of_the_rotated_copies_are_turned(variants: dict[str, Variant]) -> None:
    """The file itself holds sideways frames (wider than high); only its display matrix stands them up."""
    import av

    for name in ("rotate90", "rotate270"):
        with av.open(str(variants[name].path)) as container:
            stream = container.streams.video[0]
            assert (stream.codec_context.width, stream.codec_context.height) == (HEIGHT, WIDTH)


def test_slow_copies_last_one_and_a_half_times_as_long_and_the_vfr_one_is_uneven(variants: dict[str, Variant]) -> None:
    source = variants["reencode"]
    for name in ("slow_cfr", "slow_vfr"):
        slow = variants[name]
        assert slow.time_scale == SLOW_FACTOR
        assert slow.duration_s == pytest.approx(SLOW_FACTOR * source.duration_s, rel=0.01)
    intervals = np.diff(read_video(variants["slow_vfr"].path).times_s)
    assert intervals.std() > 0.1 * intervals.mean()  # uneven, as claimed
    assert np.diff(read_video(variants["slow_cfr"].path).times_s) == pytest.approx(SLOW_FACTOR / 60, abs=1e-6)


def test_the_reencoded_copy_is_compressed_harder(variants: dict[str, Variant]) -> None:
    assert variants["reencode"].description == f"H.264 at CRF {REENCODE_CRF}"
    assert variants["reencode"].path.stat().st_size < variants["mirrored"].path.stat().st_size


def test_vfr_times_are_strictly_increasing_milliseconds_with_the_asked_mean() -> None:
    times = vfr_times(100, 60.0, 1.5)
    assert times[0] == 0 and (np.diff(times) > 0).all()
    assert np.allclose(times * 1000, np.round(times * 1000))
    assert times[-1] == pytest.approx(99 * 1.5 / 60, abs=0.002)


def test_side_by_side_puts_each_clip_in_its_half(
    small_clip: Path, variants: dict[str, Variant], tmp_path: Path, source_frames: np.ndarray
) -> None:
    wide_path = side_by_side(small_clip, variants["reversed"].path, tmp_path / "wide.mp4", half_width=WIDTH, height=HEIGHT)
    wide = read_video(wide_path)
    assert wide.frames.shape[1:3] == (HEIGHT, 2 * WIDTH)
    left, right = wide.frames[:, :, :WIDTH], wide.frames[:, :, WIDTH:]
    assert gap(left, source_frames) < 0.6 * gap(right, source_frames)
    assert gap(right, source_frames[::-1]) < 0.6 * gap(left, source_frames[::-1])


def test_an_unknown_variant_is_refused(small_clip: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown variant 'sepia'"):
        build_variant(small_clip, "sepia", tmp_path)
