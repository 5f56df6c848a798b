"""Tests for viddiff.video: stride/trim arithmetic, both decoders, image folders, bad input.

Test videos carry their frame number as a 16-bit pattern of big black/white
blocks, which survives lossy compression and resizing, so every test can
check that the frames returned are exactly the frames asked for.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, Iterator, Optional

import av
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image, ImageOps

from viddiff import video
from viddiff.errors import VideoError
from viddiff.schema import VideoRef
from viddiff.video.write import write_video
from viddiff.video import VideoFrames, compute_stride, probe_video, read_video, read_video_ref, resolve_trim
from viddiff.video.orientation import EXIF_ORIENTATION_TAG, IDENTITY, MIRROR, Orientation, from_exif, quarter_turns_ccw
from viddiff.video.sources import PyAVSource, probe_file

GRID_ROWS, GRID_COLS = 6, 8  # code bits live in the first two rows of this block grid
N_BITS = 2 * GRID_COLS


def numbered_frame(index: int, height: int = 48, width: int = 64) -> np.ndarray:
    """A frame whose top two block rows spell ``index`` in binary (white = 1)."""
    frame = np.full((height, width, 3), 96, dtype=np.uint8)
    bh, bw = height // GRID_ROWS, width // GRID_COLS
    for bit in range(N_BITS):
        row, col = divmod(bit, GRID_COLS)
        frame[row * bh:(row + 1) * bh, col * bw:(col + 1) * bw] = 255 if index >> bit & 1 else 0
    return frame


def frame_number(frame: np.ndarray) -> int:
    """Read back the number drawn by :func:`numbered_frame`, at any frame size."""
    height, width = frame.shape[:2]
    value = 0
    for bit in range(N_BITS):
        row, col = divmod(bit, GRID_COLS)
        y = int((row + 0.5) * height / GRID_ROWS)
        x = int((col + 0.5) * width / GRID_COLS)
        value |= int(frame[y, x].mean() > 128) << bit
    return value


def frame_numbers(result: VideoFrames) -> list[int]:
    return [frame_number(f) for f in result.frames]


def numbered(n: int, height: int = 48, width: int = 64) -> Iterator[np.ndarray]:
    return (numbered_frame(i, height, width) for i in range(n))


@pytest.fixture(scope="module")
def videos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Small test videos: h264 at 30 and 12 fps, short-GOP h264 for seeking, VP9 webm, mpeg4 avi."""
    root = tmp_path_factory.mktemp("videos")
    vp9 = "libvpx-vp9"
    try:
        av.codec.Codec(vp9, "w")
    except Exception:
        vp9 = "vp9"
    return {
        "h264_30": write_video(root / "h264_30.mp4", numbered(90), 30),
        "h264_12": write_video(root / "h264_12.mp4", numbered(40), 12),
        "gop10": write_video(root / "gop10.mp4", numbered(120), 30, options={"g": "10", "keyint_min": "10"}),
        "vp9": write_video(root / "vp9.webm", numbered(45), 15, vp9),
        "mpeg4": write_video(root / "mpeg4.avi", numbered(36), 12, "mpeg4"),
    }


@pytest.fixture()
def image_dir(tmp_path: Path) -> Path:
    """12 numbered PNG frames created in reverse name order, plus a stray non-image file."""
    folder = tmp_path / "frames"
    folder.mkdir()
    for i in reversed(range(12)):
        Image.fromarray(numbered_frame(i)).save(folder / f"frame_{i:03d}.png")
    (folder / "notes.txt").write_text("not a frame")
    return folder


class LogRecords(logging.Handler):
    """Collect viddiff.video log records (usable inside hypothesis tests, unlike caplog)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())

    def __enter__(self) -> "LogRecords":
        logging.getLogger("viddiff.video").addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger("viddiff.video").removeHandler(self)


# --------------------------------------------------------------------------- arithmetic


@pytest.mark.parametrize(
    ("fps_original", "target", "stride", "warns"),
    [
        (30, None, 1, False),
        (30, 2, 15, False),
        (30, 30, 1, False),
        (25, 5, 5, False),
        (30, 4, 8, True),  # 7.5 rounds half up
        (12, 5, 2, True),  # 2.4
        (30, 60, 1, True),  # faster than the source
        (29.97, 29.97 / 3, 3, False),
    ],
)
def test_compute_stride(fps_original: float, target: Optional[float], stride: int, warns: bool) -> None:
    with LogRecords() as logs:
        assert compute_stride(fps_original, target) == stride
    assert len(logs.messages) == int(warns)


@given(target=st.floats(0.1, 60), k=st.integers(1, 40))
def test_stride_exact_multiples_do_not_warn(target: float, k: int) -> None:
    with LogRecords() as logs:
        assert compute_stride(target * k, target) == k
    assert logs.messages == []


@given(fps=st.floats(1, 240), target=st.floats(0.05, 240))
def test_stride_is_nearest_integer_ratio(fps: float, target: float) -> None:
    with LogRecords() as logs:
        stride = compute_stride(fps, target)
    ratio = fps / target
    assert stride >= 1
    assert abs(ratio - stride) <= 0.5 + 1e-9 or (ratio < 1 and stride == 1)
    assert len(logs.messages) <= 1


@pytest.mark.parametrize(("fps", "target"), [(0, 2), (-30, 2), (30, 0), (30, -1)])
def test_compute_stride_rejects_non_positive(fps: float, target: float) -> None:
    with pytest.raises(VideoError, match="must be > 0"):
        compute_stride(fps, target)


@given(
    n=st.integers(1, 300),
    start=st.one_of(st.none(), st.integers(0, 400)),
    end=st.one_of(st.none(), st.integers(0, 400)),
)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_resolve_trim_matches_slice_semantics(n: int, start: Optional[int], end: Optional[int]) -> None:
    expected = range(n)[slice(start, end)]
    if len(expected) == 0:
        with pytest.raises(VideoError, match="selects no frames"):
            resolve_trim((start, end), n, "clip.mp4")
        return
    with LogRecords() as logs:
        assert resolve_trim((start, end), n) == (expected.start, expected.stop)
    assert len(logs.messages) == int(end is not None and end > n)


@pytest.mark.parametrize("trim", [(-5, None), (None, -1), (-10, -2)])
def test_resolve_trim_refuses_negative(trim: tuple[Optional[int], Optional[int]]) -> None:
    with pytest.raises(VideoError, match="negative") as info:
        resolve_trim(trim, 50, "clip.mp4")
    assert "clip.mp4" in str(info.value)


def test_resolve_trim_needs_two_entries() -> None:
    with pytest.raises(VideoError, match="2 entries"):
        resolve_trim((1, 2, 3), 50, "clip.mp4")


@pytest.mark.parametrize(
    ("width", "height", "max_side", "expected"),
    [(64, 48, None, (64, 48)), (64, 48, 100, (64, 48)), (64, 48, 32, (32, 24)), (48, 64, 16, (12, 16)),
     (7680, 4320, 768, (768, 432)), (1000, 2, 10, (10, 1))],
)
def test_scaled_size(width: int, height: int, max_side: Optional[int], expected: tuple[int, int]) -> None:
    assert video.scaled_size(width, height, max_side) == expected


# --------------------------------------------------------------------------- decoding files


@pytest.mark.parametrize("backend", ["auto", "decord", "pyav"])
def test_read_at_target_fps(videos: dict[str, Path], backend: str) -> None:
    result = read_video(videos["h264_30"], target_fps=2, backend=backend)
    assert result.stride == 15
    assert result.fps == pytest.approx(2.0)
    assert result.fps_original == pytest.approx(30.0)
    assert result.frame_indices.dtype == np.int64
    assert result.frame_indices.tolist() == list(range(0, 90, 15))
    assert frame_numbers(result) == list(range(0, 90, 15))
    assert result.frames.shape == (6, 48, 64, 3) and result.frames.dtype == np.uint8
    assert result.times_s.tolist() == pytest.approx([0, 0.5, 1, 1.5, 2, 2.5])
    assert (result.start, result.end, result.n_frames_source) == (0, 90, 90)
    assert result.backend == ("pyav" if backend == "pyav" else "decord")


def test_inexact_target_fps_warns_and_reports_effective_fps(
    videos: dict[str, Path], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="viddiff.video"):
        result = read_video(videos["h264_12"], target_fps=5, backend="pyav")
    assert result.stride == 2 and result.fps == pytest.approx(6.0)
    assert frame_numbers(result) == list(range(0, 40, 2))
    assert sum("not an integer divisor" in r.getMessage() for r in caplog.records) == 1


@pytest.mark.parametrize("backend", ["decord", "pyav"])
@pytest.mark.parametrize(
    ("trim", "expected"),
    [((10, 50), range(10, 50, 3)), ((None, 20), range(0, 20, 3)), ((80, None), range(80, 90, 3)),
     ([89, 90], range(89, 90, 3)), (None, range(0, 90, 3))],
)
def test_trims_keep_source_indices(
    videos: dict[str, Path], backend: str, trim: Optional[tuple[Optional[int], Optional[int]]], expected: range
) -> None:
    result = read_video(videos["h264_30"], target_fps=10, frames_trim=trim, backend=backend)
    assert result.frame_indices.tolist() == list(expected)
    assert frame_numbers(result) == list(expected)
    assert (result.start, result.end) == (expected.start, expected.stop)
    assert result.times_s[0] == 0.0


def test_trim_end_past_video_is_clamped(videos: dict[str, Path], caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="viddiff.video"):
        result = read_video(videos["h264_30"], target_fps=5, frames_trim=(60, 500), backend="pyav")
    assert result.end == 90
    assert frame_numbers(result) == list(range(60, 90, 6))
    assert any("clamping" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    ("trim", "words"),
    [((95, None), "selects no frames"), ((40, 40), "selects no frames"), ((50, 10), "selects no frames"),
     ((-10, None), "negative"), ((None, -1), "negative")],
)
def test_bad_trims(videos: dict[str, Path], trim: tuple[Optional[int], Optional[int]], words: str) -> None:
    with pytest.raises(VideoError, match=words) as info:
        read_video(videos["h264_30"], frames_trim=trim)
    message = str(info.value)
    assert str(videos["h264_30"]) in message and "90" in message


@pytest.mark.parametrize("name", ["h264_30", "h264_12", "gop10", "vp9", "mpeg4"])
def test_backends_agree(videos: dict[str, Path], name: str) -> None:
    by_decord = read_video(videos[name], target_fps=4, frames_trim=(3, None), backend="decord")
    by_pyav = read_video(videos[name], target_fps=4, frames_trim=(3, None), backend="pyav")
    assert by_decord.frame_indices.tolist() == by_pyav.frame_indices.tolist()
    assert frame_numbers(by_decord) == frame_numbers(by_pyav) == by_pyav.frame_indices.tolist()
    assert np.abs(by_decord.frames.astype(int) - by_pyav.frames.astype(int)).mean() < 2.0
    assert probe_video(videos[name], backend="decord").n_frames == probe_video(videos[name], backend="pyav").n_frames


def test_vp9_webm_reads(videos: dict[str, Path]) -> None:
    info = probe_video(videos["vp9"], backend="pyav")
    assert (info.n_frames, info.fps, info.width, info.height) == (45, 15.0, 64, 48)
    result = read_video(videos["vp9"], target_fps=5)
    assert frame_numbers(result) == list(range(0, 45, 3))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    start=st.one_of(st.none(), st.integers(0, 119)),
    length=st.one_of(st.none(), st.integers(1, 130)),
    target=st.sampled_from([None, 30, 15, 10, 7, 3, 1]),
)
def test_pyav_seek_returns_exactly_the_wanted_frames(
    videos: dict[str, Path], start: Optional[int], length: Optional[int], target: Optional[float]
) -> None:
    end = None if length is None else (start or 0) + length
    result = read_video(videos["gop10"], target_fps=target, frames_trim=(start, end), backend="pyav")
    stride = compute_stride(30, target)
    expected = list(range(120)[slice(start, end, stride)])
    assert result.frame_indices.tolist() == expected
    assert frame_numbers(result) == expected


def test_pyav_counting_path_matches_pts_path(videos: dict[str, Path]) -> None:
    """Files without usable timestamps are decoded from the start and numbered by count."""
    source = PyAVSource(probe_file(videos["gop10"]))
    wanted = np.arange(37, 120, 9)
    by_pts = [frame_number(f) for f in source.iter_frames(wanted)]
    source.pts_table = None
    by_count = [frame_number(f) for f in source.iter_frames(wanted)]
    assert by_pts == by_count == wanted.tolist()


def test_max_side_resizes_each_frame(videos: dict[str, Path]) -> None:
    result = read_video(videos["h264_30"], target_fps=5, max_side=32, backend="pyav")
    assert result.frames.shape == (15, 24, 32, 3)
    assert frame_numbers(result) == list(range(0, 90, 6))
    unchanged = read_video(videos["h264_30"], target_fps=5, max_side=640)
    assert unchanged.frames.shape[1:3] == (48, 64)


def test_max_side_must_be_positive(videos: dict[str, Path]) -> None:
    with pytest.raises(VideoError, match="max_side"):
        read_video(videos["h264_30"], max_side=0)


def test_container_fps_wins_over_caller(videos: dict[str, Path], caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="viddiff.video"):
        result = read_video(videos["h264_30"], target_fps=10, fps_original=25)
        info = probe_video(videos["h264_30"], fps_original=25)
    assert result.fps_original == pytest.approx(30) and result.stride == 3
    assert info.fps == pytest.approx(30)
    assert any("disagrees" in r.getMessage() for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="viddiff.video"):
        read_video(videos["h264_30"], target_fps=10, fps_original=30.1)
    assert not any("disagrees" in r.getMessage() for r in caplog.records)


def test_read_video_ref(videos: dict[str, Path]) -> None:
    ref = VideoRef(path=str(videos["h264_12"]), fps_original=12, frames_trim=(4, 20))
    result = read_video_ref(ref, target_fps=6, max_side=16)
    assert result.frame_indices.tolist() == list(range(4, 20, 2))
    assert result.frames.shape[1:] == (12, 16, 3)


def test_probe_video_reports_file_facts(videos: dict[str, Path]) -> None:
    for backend in ("decord", "pyav"):
        info = probe_video(videos["h264_12"], backend=backend)
        assert (info.fps, info.n_frames, info.width, info.height, info.backend) == (12.0, 40, 64, 48, backend)
        assert info.path == str(videos["h264_12"])


# --------------------------------------------------------------------------- decord fallback


class BrokenReader:
    """Stands in for decord.VideoReader on a file decord cannot open."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise RuntimeError("decord cannot handle this stream")


def test_auto_falls_back_when_decord_cannot_open(
    videos: dict[str, Path], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import decord

    monkeypatch.setattr(decord, "VideoReader", BrokenReader)
    with caplog.at_level(logging.DEBUG, logger="viddiff.video"):
        result = read_video(videos["h264_30"], target_fps=6)
        info = probe_video(videos["h264_30"])
    assert result.backend == "pyav" and info.backend == "pyav"
    assert frame_numbers(result) == list(range(0, 90, 5))
    # the frames are right, so the user is not told about decord (only --debug shows it)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("decord cannot open it" in r.getMessage() for r in caplog.records)
    with pytest.raises(VideoError, match="decord cannot open") as err:
        read_video(videos["h264_30"], backend="decord")
    assert str(videos["h264_30"]) in str(err.value)


def test_auto_falls_back_when_decord_fails_mid_decode(
    videos: dict[str, Path], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import decord

    real_reader = decord.VideoReader

    class FailingBatches(real_reader):  # type: ignore[misc, valid-type]
        def get_batch(self, indices: list[int]) -> None:
            raise RuntimeError("corrupt packet")

    monkeypatch.setattr(decord, "VideoReader", FailingBatches)
    with caplog.at_level(logging.DEBUG, logger="viddiff.video"):
        result = read_video(videos["h264_30"], target_fps=3, frames_trim=(10, 70))
    assert result.backend == "pyav"
    assert frame_numbers(result) == list(range(10, 70, 10))
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("decord failed" in r.getMessage() for r in caplog.records)
    with pytest.raises(VideoError, match="try backend 'pyav'"):
        read_video(videos["h264_30"], backend="decord")


def test_works_without_decord_installed(videos: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "decord", None)
    for name, n, stride in (("h264_30", 90, 6), ("vp9", 45, 3)):
        result = read_video(videos[name], target_fps=5)
        assert result.backend == "pyav"
        assert frame_numbers(result) == list(range(0, n, stride))
        assert probe_video(videos[name]).backend == "pyav"
    with pytest.raises(VideoError, match="not installed"):
        read_video(videos["h264_30"], backend="decord")


# --------------------------------------------------------------------------- image directories


def test_image_dir_sorted_by_name(image_dir: Path) -> None:
    result = read_video(image_dir, target_fps=4, fps_original=12, frames_trim=(1, None))
    assert result.backend == "images"
    assert result.frame_indices.tolist() == [1, 4, 7, 10]
    assert frame_numbers(result) == [1, 4, 7, 10]
    assert result.frames.shape == (4, 48, 64, 3)
    info = probe_video(image_dir, fps_original=12)
    assert (info.n_frames, info.width, info.height, info.fps, info.backend) == (12, 64, 48, 12.0, "images")


def test_image_dir_ignores_backend_choice_and_resizes(image_dir: Path) -> None:
    result = read_video(image_dir, fps_original=12, backend="pyav", max_side=32)
    assert result.backend == "images"
    assert result.frames.shape == (12, 24, 32, 3)
    assert frame_numbers(result) == list(range(12))


def test_image_dir_needs_fps(image_dir: Path) -> None:
    with pytest.raises(VideoError, match="fps_original") as info:
        read_video(image_dir)
    assert str(image_dir) in str(info.value)


def test_image_dir_without_images(tmp_path: Path) -> None:
    (tmp_path / "readme.txt").write_text("no frames here")
    with pytest.raises(VideoError, match="no images") as info:
        read_video(tmp_path, fps_original=10)
    assert str(tmp_path) in str(info.value)


def test_image_dir_with_mixed_sizes(image_dir: Path) -> None:
    Image.fromarray(numbered_frame(99, 32, 32)).save(image_dir / "frame_099.png")
    with pytest.raises(VideoError, match="different sizes"):
        probe_video(image_dir, fps_original=10)


def test_image_dir_with_unreadable_image(image_dir: Path) -> None:
    bad = image_dir / "frame_005.png"
    bad.write_text("this is not a png")
    with pytest.raises(VideoError, match="unreadable image") as info:
        read_video(image_dir, fps_original=10)
    assert str(bad) in str(info.value)


def test_truncated_image_fails_at_decode(image_dir: Path) -> None:
    bad = image_dir / "frame_004.png"
    bad.write_bytes(bad.read_bytes()[:60])  # header intact, pixel data cut
    with pytest.raises(VideoError, match="unreadable image") as info:
        read_video(image_dir, fps_original=10)
    assert str(bad) in str(info.value)


# --------------------------------------------------------------------------- bad files


@pytest.mark.parametrize("backend", ["auto", "decord", "pyav"])
def test_missing_path(tmp_path: Path, backend: str) -> None:
    missing = tmp_path / "nope.mp4"
    with pytest.raises(VideoError, match="no such video") as info:
        read_video(missing, backend=backend)
    assert str(missing) in str(info.value)


@pytest.mark.parametrize("backend", ["auto", "decord", "pyav"])
def test_text_file_named_mp4(tmp_path: Path, backend: str) -> None:
    fake = tmp_path / "fake.mp4"
    fake.write_text("this is a text file pretending to be a video\n" * 20)
    with pytest.raises(VideoError) as info:
        read_video(fake, backend=backend)
    assert str(fake) in str(info.value)


@pytest.mark.parametrize("backend", ["auto", "pyav"])
def test_audio_only_file(tmp_path: Path, backend: str) -> None:
    path = tmp_path / "sound.m4a"
    with av.open(str(path), "w", format="mp4") as container:
        _mux_silence(container)
    with pytest.raises(VideoError, match="no video stream") as info:
        read_video(path, backend=backend)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("backend", ["auto", "pyav"])
def test_video_stream_without_frames(tmp_path: Path, backend: str) -> None:
    path = tmp_path / "empty.mkv"
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=30)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        _mux_silence(container)
    with pytest.raises(VideoError, match="no frames") as info:
        probe_video(path, backend=backend)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("backend", ["auto", "decord", "pyav"])
def test_truncated_mp4(tmp_path: Path, backend: str) -> None:
    path = write_video(tmp_path / "cut.mp4", numbered(30), 30)
    path.write_bytes(path.read_bytes()[:2000])
    with pytest.raises(VideoError) as info:
        read_video(path, backend=backend)
    assert str(path) in str(info.value)


def test_truncated_mkv_reads_the_frames_it_has(tmp_path: Path) -> None:
    path = write_video(tmp_path / "cut.mkv", numbered(60), 30)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    by_decord = read_video(path, backend="decord")
    by_pyav = read_video(path, backend="pyav")
    assert 0 < by_pyav.n_frames_source < 60
    assert frame_numbers(by_decord) == frame_numbers(by_pyav)
    numbers = frame_numbers(by_pyav)
    assert numbers[0] == 0 and numbers == sorted(set(numbers))


def _mux_silence(container: av.container.OutputContainer) -> None:
    stream = container.add_stream("aac", rate=16000)
    for i in range(4):
        frame = av.AudioFrame.from_ndarray(np.zeros((1, 1024), np.float32), format="fltp", layout="mono")
        frame.sample_rate, frame.pts = 16000, i * 1024
        container.mux(stream.encode(frame))
    container.mux(stream.encode(None))


def test_unknown_backend(videos: dict[str, Path]) -> None:
    with pytest.raises(VideoError, match="unknown"):
        read_video(videos["h264_30"], backend="opencv")


# --------------------------------------------------------------------------- write_video helper


def test_write_video_rejects_bad_frames(tmp_path: Path) -> None:
    with pytest.raises(VideoError, match="odd size"):
        write_video(tmp_path / "odd.mp4", [np.zeros((47, 64, 3), np.uint8)], 10)
    with pytest.raises(VideoError, match="uint8"):
        write_video(tmp_path / "float.mp4", [np.zeros((48, 64, 3), np.float32)], 10)
    with pytest.raises(VideoError, match="one size"):
        write_video(tmp_path / "mixed.mp4", [np.zeros((48, 64, 3), np.uint8), np.zeros((32, 32, 3), np.uint8)], 10)
    with pytest.raises(VideoError, match="no such encoder"):
        write_video(tmp_path / "x.mp4", numbered(2), 10, codec="nonexistent-codec")


def test_write_video_accepts_array_and_fractional_fps(tmp_path: Path) -> None:
    frames = np.stack(list(numbered(10)))
    path = write_video(tmp_path / "ntsc.mp4", frames, 30000 / 1001, codec="h264")
    info = probe_video(path, backend="pyav")
    assert info.n_frames == 10 and info.fps == pytest.approx(29.97, abs=0.01)


# --------------------------------------------------------------------------- phone clips: rotation

UPRIGHT = (96, 64)  # (height, width) of what the viewer sees: a portrait clip
N_PHONE = 5
ENCODERS = [  # (encoder, container) as phones and exports write them
    ("libx264", "mp4"), ("libx264", "mov"), ("libx264", "mkv"), ("libx265", "mp4"),
    ("libvpx-vp9", "webm"), ("libvpx-vp9", "mp4"), ("libsvtav1", "mp4"), ("libsvtav1", "mkv"),
]
TURNS = [(90, False), (180, False), (270, False), (90, True), (0, True)]  # (degrees counter-clockwise, mirrored)


def _has_encoder(name: str) -> bool:
    try:
        av.codec.Codec(name, "w")
    except Exception:
        return False
    return True


def shown_as(rotation: int, mirrored: bool) -> Orientation:
    return quarter_turns_ccw(rotation // 90).then(MIRROR if mirrored else IDENTITY)


@pytest.fixture(scope="module")
def phone_clip(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str, int, bool], Path]:
    """Upright numbered frames stored as a phone stores them: turned away, with a display matrix to undo it."""
    root = tmp_path_factory.mktemp("phone")
    made: dict[tuple[str, str, int, bool], Path] = {}

    def make(encoder: str, container: str, rotation: int, mirrored: bool) -> Path:
        if not _has_encoder(encoder):
            pytest.skip(f"this PyAV/FFmpeg build has no {encoder} encoder")
        key = (encoder, container, rotation, mirrored)
        if key not in made:
            undo = shown_as(rotation, mirrored).inverse()
            stored = (undo.apply(numbered_frame(i + 1, *UPRIGHT)) for i in range(N_PHONE))
            path = root / f"{encoder}_{rotation}_{int(mirrored)}.{container}"
            made[key] = write_video(path, stored, 10, encoder, display_rotation=rotation, mirrored=mirrored)
        return made[key]

    return make


def decord_refusal(encoder: str, container: str, rotation: int) -> Optional[str]:
    """What forcing decord on such a clip says, from what decord 0.6 was found to do on these files."""
    if encoder == "libsvtav1":
        return "decord cannot open it"  # no AV1 decoder in its FFmpeg 4.1
    if container in ("mp4", "mov") and rotation in (90, 270):
        return "mis-decodes"  # it rotates these itself, into frames with corrupt strides
    return None


@pytest.mark.parametrize(("encoder", "container"), ENCODERS)
@pytest.mark.parametrize(("rotation", "mirrored"), TURNS)
def test_phone_clips_come_out_upright_from_every_backend(
    phone_clip: Callable[[str, str, int, bool], Path], encoder: str, container: str, rotation: int, mirrored: bool
) -> None:
    path = phone_clip(encoder, container, rotation, mirrored)
    expected = list(range(1, N_PHONE + 1))
    by_pyav = read_video(path, backend="pyav")
    by_auto = read_video(path)
    assert by_auto.backend == "pyav"  # a display transform: PyAV applies it
    for result in (by_pyav, by_auto):
        assert result.frames.shape[1:3] == UPRIGHT
        assert frame_numbers(result) == expected
    info = probe_video(path)
    assert (info.height, info.width) == UPRIGHT and info.orientation == shown_as(rotation, mirrored)
    refusal = decord_refusal(encoder, container, rotation)
    if refusal is not None:
        with pytest.raises(VideoError, match=refusal) as err:
            read_video(path, backend="decord")
        assert str(path) in str(err.value) and "'pyav'" in str(err.value)
        return
    by_decord = read_video(path, backend="decord")
    assert by_decord.frames.shape[1:3] == UPRIGHT
    assert frame_numbers(by_decord) == expected
    assert np.abs(by_decord.frames.astype(int) - by_pyav.frames.astype(int)).mean() < 2.0


@pytest.mark.parametrize("mirrored", [False, True])
def test_decord_own_half_turn_agrees_with_ours(phone_clip: Callable[[str, str, int, bool], Path], mirrored: bool) -> None:
    """decord rotates MP4s by its own FFmpeg filters: an independent check of what 'upright' means."""
    import decord

    path = phone_clip("libx264", "mp4", 180, mirrored)
    by_decord_itself = decord.VideoReader(str(path)).get_batch(list(range(N_PHONE))).asnumpy()
    ours = read_video(path, backend="pyav").frames
    if mirrored:
        # a half turn then a left-right mirror is an up-down mirror, whose rotation angle is 0: decord,
        # which only rotates, leaves those frames as stored, i.e. ours upside down
        by_decord_itself = by_decord_itself[:, ::-1]
    assert np.abs(by_decord_itself.astype(int) - ours.astype(int)).mean() < 2.0


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="the ffmpeg command is not installed (optional cross-check)")
@pytest.mark.parametrize(("encoder", "container", "rotation", "mirrored"), [
    ("libx264", "mp4", 90, True), ("libx265", "mp4", 270, False), ("libvpx-vp9", "webm", 90, False),
    ("libsvtav1", "mkv", 180, True),
])
def test_frames_match_ffmpeg_autorotate(
    phone_clip: Callable[[str, str, int, bool], Path], encoder: str, container: str, rotation: int, mirrored: bool
) -> None:
    """The ffmpeg command turns frames upright by itself (autorotate): ours must look the same."""
    path = phone_clip(encoder, container, rotation, mirrored)
    ours = read_video(path).frames
    raw = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", str(path), "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
        capture_output=True, check=True,
    ).stdout
    theirs = np.frombuffer(raw, np.uint8).reshape(ours.shape)
    assert np.abs(theirs.astype(int) - ours.astype(int)).mean() < 2.0


def test_rotated_clip_without_decord(phone_clip: Callable[[str, str, int, bool], Path], monkeypatch: pytest.MonkeyPatch) -> None:
    path = phone_clip("libx264", "mkv", 270, False)
    monkeypatch.setitem(sys.modules, "decord", None)
    result = read_video(path, target_fps=5)
    assert result.backend == "pyav" and result.frames.shape[1:3] == UPRIGHT
    assert frame_numbers(result) == [1, 3, 5]


def test_rotated_clip_resizes_upright(phone_clip: Callable[[str, str, int, bool], Path]) -> None:
    result = read_video(phone_clip("libx264", "mp4", 90, False), max_side=48)
    assert result.frames.shape[1:3] == (48, 32)
    assert frame_numbers(result) == list(range(1, N_PHONE + 1))


@pytest.mark.parametrize("suffix", [".jpg", ".png"])
def test_image_dir_honours_exif_orientation(tmp_path: Path, suffix: str) -> None:
    """Each frame stored with a different EXIF orientation (1..8) still reads upright, like Pillow shows it."""
    folder = tmp_path / "photos"
    folder.mkdir()
    for tag in range(1, 9):
        stored = from_exif(tag).inverse().apply(numbered_frame(tag, *UPRIGHT))
        image = Image.fromarray(np.ascontiguousarray(stored))
        exif = image.getexif()
        exif[EXIF_ORIENTATION_TAG] = tag
        image.save(folder / f"{tag:02d}{suffix}", exif=exif, quality=95)
    result = read_video(folder, fps_original=8)
    assert result.frames.shape == (8, *UPRIGHT, 3)
    assert frame_numbers(result) == list(range(1, 9))
    for file, frame in zip(sorted(folder.iterdir()), result.frames):
        with Image.open(file) as image:
            assert np.array_equal(frame, np.asarray(ImageOps.exif_transpose(image).convert("RGB")))
    info = probe_video(folder, fps_original=8)
    assert (info.height, info.width) == UPRIGHT


# --------------------------------------------------------------------------- variable frame rate

VFR_TIMES = [i / 30 for i in range(21)] + [0.7 + 0.5 * k for k in range(1, 8)]
"""0.7 s at 30 fps, then one frame every 0.5 s (a phone in low light)."""


@pytest.fixture(scope="module")
def vfr_clips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("vfr")
    frames = lambda: numbered(len(VFR_TIMES))  # noqa: E731
    return {
        "mp4": write_video(root / "vfr.mp4", frames(), 30, "libx264", times_s=VFR_TIMES),
        "mkv": write_video(root / "vfr.mkv", frames(), 30, "libx264", times_s=VFR_TIMES),
        "webm": write_video(root / "vfr.webm", frames(), 30, "libvpx-vp9", times_s=VFR_TIMES),
        "cfr_ms": write_video(root / "ntsc_ms.mkv", numbered(60), 30000 / 1001),  # 29.97 fps in whole ms
        "dropped": write_video(
            root / "dropped.mkv", numbered(59), 30, "libx264", times_s=[i / 30 for i in range(60) if i != 30]
        ),
    }


@pytest.mark.parametrize("container", ["mp4", "mkv", "webm"])
@pytest.mark.parametrize("backend", ["auto", "decord", "pyav"])
def test_vfr_is_sampled_by_presentation_time(vfr_clips: dict[str, Path], container: str, backend: str) -> None:
    """At 1 fps: the frames nearest 0, 1, 2, 3, 4 s, reported at their true times (not index / average fps)."""
    result = read_video(vfr_clips[container], target_fps=1, backend=backend)
    assert result.frame_indices.tolist() == [0, 21, 23, 25, 27]
    assert frame_numbers(result) == [0, 21, 23, 25, 27]
    assert result.times_s.tolist() == pytest.approx([0.0, 1.2, 2.2, 3.2, 4.2], abs=1e-3)
    assert result.variable_frame_rate and result.stride is None
    assert result.fps == pytest.approx(4 / 4.2, rel=1e-3)
    if backend != "auto":
        assert result.backend == backend


@pytest.mark.parametrize("backend", ["decord", "pyav"])
def test_vfr_trim_counts_frames_and_starts_the_clock(vfr_clips: dict[str, Path], backend: str) -> None:
    result = read_video(vfr_clips["mkv"], target_fps=4, frames_trim=(10, 24), backend=backend)
    # grid from frame 10 (0.333 s): +0, +0.25, +0.5, +0.75 ... up to frame 23 (2.2 s)
    assert result.frame_indices.tolist() == [10, 17, 20, 21, 22, 23]
    assert frame_numbers(result) == result.frame_indices.tolist()
    expected = [VFR_TIMES[i] - VFR_TIMES[10] for i in (10, 17, 20, 21, 22, 23)]
    assert result.times_s.tolist() == pytest.approx(expected, abs=1e-3)
    everything = read_video(vfr_clips["mkv"], backend=backend)
    assert everything.times_s.tolist() == pytest.approx(VFR_TIMES, abs=1e-3)


def test_vfr_probe_and_notice(vfr_clips: dict[str, Path], caplog: pytest.LogCaptureFixture) -> None:
    info = probe_video(vfr_clips["mp4"])
    assert info.variable_frame_rate and info.n_frames == len(VFR_TIMES)
    with caplog.at_level(logging.INFO, logger="viddiff.video"):
        read_video(vfr_clips["mp4"], target_fps=2, fps_original=30)  # a nominal rate is not "disagreeing"
    messages = [r.getMessage() for r in caplog.records]
    assert any("variable frame rate" in m for m in messages)
    assert not any("disagrees" in m or "integer divisor" in m for m in messages)


def test_constant_rate_with_rounded_timestamps_keeps_the_stride(vfr_clips: dict[str, Path]) -> None:
    result = read_video(vfr_clips["cfr_ms"], target_fps=30000 / 1001 / 3)
    assert not result.variable_frame_rate and result.stride == 3
    assert result.frame_indices.tolist() == list(range(0, 60, 3))
    assert result.times_s.tolist() == pytest.approx([i * 1001 / 30000 for i in range(0, 60, 3)])
    assert not probe_video(vfr_clips["cfr_ms"]).variable_frame_rate


def test_dropped_frame_makes_times_true(vfr_clips: dict[str, Path]) -> None:
    """A 30 fps clip missing frame 30: after the gap, index/fps would be a frame early."""
    true_times = [i / 30 for i in range(60) if i != 30]
    result = read_video(vfr_clips["dropped"], target_fps=10)
    assert result.variable_frame_rate and frame_numbers(result) == result.frame_indices.tolist()
    assert result.times_s.tolist() == pytest.approx([true_times[i] for i in result.frame_indices], abs=1e-3)
    grid = np.arange(len(result.times_s)) / 10  # each grid point got its nearest frame: at most 1/30 s off at the gap
    assert np.abs(result.times_s - grid).max() <= 1 / 30 + 1e-3
    assert result.frame_indices[-1] == 56 and result.times_s[-1] == pytest.approx(57 / 30, abs=1e-3)


def test_vfr_without_decord(vfr_clips: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "decord", None)
    result = read_video(vfr_clips["mp4"], target_fps=1)
    assert result.backend == "pyav" and frame_numbers(result) == [0, 21, 23, 25, 27]


# --------------------------------------------------------------------------- decoder choice


@pytest.fixture(scope="module")
def codec_clips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("codecs")
    clips = {}
    for name, encoder, suffix in (("hevc", "libx265", "mp4"), ("av1", "libsvtav1", "mkv")):
        if _has_encoder(encoder):
            clips[name] = write_video(root / f"{name}.{suffix}", numbered(20, 64, 64), 10, encoder)
    return clips


def _clip(codec_clips: dict[str, Path], name: str) -> Path:
    if name not in codec_clips:
        pytest.skip(f"this PyAV/FFmpeg build cannot encode {name}")
    return codec_clips[name]


@pytest.mark.parametrize(("name", "backend"), [("h264_30", "decord"), ("mpeg4", "decord"), ("vp9", "pyav")])
def test_decoder_chosen_from_the_codec(videos: dict[str, Path], name: str, backend: str) -> None:
    assert probe_video(videos[name]).backend == backend


def test_hevc_goes_to_decord_and_av1_to_pyav(codec_clips: dict[str, Path], caplog: pytest.LogCaptureFixture) -> None:
    hevc, av1 = _clip(codec_clips, "hevc"), _clip(codec_clips, "av1")
    assert probe_video(hevc).codec == "hevc" and read_video(hevc, target_fps=5).backend == "decord"
    with caplog.at_level(logging.DEBUG, logger="viddiff.video"):
        result = read_video(av1, target_fps=5)
    assert result.backend == "pyav" and frame_numbers(result) == list(range(0, 20, 2))
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]  # no decord failure, no fallback
    assert any("codec av1" in r.getMessage() for r in caplog.records)
    with pytest.raises(VideoError, match="decord cannot open it.*av1"):
        read_video(av1, backend="decord")


@pytest.mark.parametrize("backend", ["auto", "decord", "pyav"])
def test_frame_count_in_errors_comes_from_the_probe(videos: dict[str, Path], backend: str) -> None:
    with pytest.raises(VideoError, match="a video with 45 frames"):
        read_video(videos["vp9"], frames_trim=(50, None), backend=backend)
    assert probe_video(videos["vp9"], backend=backend).n_frames == 45


def test_pyav_skips_unreferenced_h264_frames_and_keeps_the_wanted_ones_bit_exact(tmp_path: Path) -> None:
    """x264's B-frames that nothing refers to are not decoded unless wanted; the frames kept are those of a
    full decode, pixel for pixel, including wanted B-frames and frames after a seek."""
    import av

    rng = np.random.default_rng(3)
    texture = rng.integers(0, 256, (96, 160, 3), dtype=np.uint8)
    moving = (np.roll(texture, (i, 2 * i), axis=(0, 1)) for i in range(150))
    path = write_video(tmp_path / "bframes.mp4", moving, 30, options={"x264-params": "bframes=3:b-pyramid=normal"})
    with av.open(str(path)) as container:
        everything = [f.to_ndarray(format="rgb24") for f in container.decode(container.streams.video[0])]
    source = PyAVSource(probe_file(path))
    for wanted in (np.arange(0, 150, 8), np.arange(41, 150, 7), np.array([5, 6, 7, 149])):
        source.frames_decoded = 0
        frames = list(source.iter_frames(wanted))
        assert len(frames) == len(wanted)
        for index, frame in zip(wanted.tolist(), frames):
            assert np.array_equal(frame, everything[index]), f"frame {index} differs from the full decode"
    source.frames_decoded = 0
    list(source.iter_frames(np.arange(0, 150, 8)))
    assert source.frames_decoded < 0.8 * 150, "no unreferenced frame was skipped"


def test_pyav_decodes_every_vp9_frame_it_reads(videos: dict[str, Path]) -> None:
    """Only H.264 frames are skipped: other codecs' 'non-reference' frames may be referenced after all."""
    source = PyAVSource(probe_file(videos["vp9"]))
    frames = list(source.iter_frames(np.arange(0, 45, 5)))
    assert [frame_number(f) for f in frames] == list(range(0, 45, 5))
    assert source.frames_decoded == 41


# --------------------------------------------------------------------------- several samplings, one decode


def _same_read(shared: VideoFrames, alone: VideoFrames) -> None:
    assert np.array_equal(shared.frames, alone.frames)
    assert np.array_equal(shared.frame_indices, alone.frame_indices)
    assert np.array_equal(shared.times_s, alone.times_s)
    assert (shared.fps, shared.stride, shared.start, shared.end, shared.duration_s, shared.size, shared.backend) == (
        alone.fps, alone.stride, alone.start, alone.end, alone.duration_s, alone.size, alone.backend
    )
    if alone.full_size is None:
        assert shared.full_size is None
    else:  # how to decode frames again at the size read (the probe's arrays compare by content)
        assert dataclasses.replace(shared.full_size, probe=None) == dataclasses.replace(alone.full_size, probe=None)
        assert np.array_equal(shared.full_size.probe.pts, alone.full_size.probe.pts)


@pytest.mark.parametrize("name", ["h264_30", "gop10", "vp9"])
def test_one_decode_gives_each_sampling_what_its_own_read_gives(
    videos: dict[str, Path], name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CLIP's frames (few, shrunk) and the pose's (many, another size) from one pass over the file: each is what
    its own read_video gives, pixel for pixel, with the same indices, times and record for decoding again; the
    file is decoded once, for the union of the frames."""
    from viddiff.video import Sampling, read_video_sampled, thumbnail

    small = lambda frame: np.ascontiguousarray(frame[::2, ::2])  # noqa: E731
    samplings = (
        Sampling(target_fps=5, max_side=None, shrink=thumbnail(24)),
        Sampling(target_fps=15, max_side=40, shrink=small),
        Sampling(count=7, max_side=32),
    )
    trim = (3, None)
    alone = [
        read_video(videos[name], s.target_fps, trim, max_side=s.max_side, shrink=s.shrink, count=s.count, backend="pyav")
        for s in samplings
    ]
    passes: list[np.ndarray] = []
    iter_frames = PyAVSource.iter_frames

    def counted(self, indices):
        passes.append(indices)
        return iter_frames(self, indices)

    monkeypatch.setattr(PyAVSource, "iter_frames", counted)
    shared = read_video_sampled(videos[name], samplings, frames_trim=trim)
    assert len(passes) == 1
    assert np.array_equal(passes[0], np.unique(np.concatenate([a.frame_indices for a in alone])))
    for one, other in zip(shared, alone):
        _same_read(one, other)
    keyframes = shared[0].frame_indices[:2]
    again, once = (video.with_stills(v, keyframes).at(keyframes) for v in (shared[0], alone[0]))
    assert all(np.array_equal(x, y) for x, y in zip(again, once))


def test_one_decode_of_a_variable_rate_file_samples_each_by_presentation_time(vfr_clips: dict[str, Path]) -> None:
    from viddiff.video import Sampling, read_video_sampled

    shared = read_video_sampled(vfr_clips["mp4"], (Sampling(target_fps=1), Sampling(target_fps=10, max_side=32)))
    for one, sampling in zip(shared, (Sampling(target_fps=1), Sampling(target_fps=10, max_side=32))):
        _same_read(one, read_video(vfr_clips["mp4"], sampling.target_fps, max_side=sampling.max_side))
    assert shared[0].variable_frame_rate and len(shared[1].frame_indices) > len(shared[0].frame_indices)


async def _read_refs(refs, samplings):
    from viddiff.video import read_videos_sampled

    return await read_videos_sampled(refs, samplings)


def test_the_same_video_twice_is_read_once_for_all_its_samplings(videos: dict[str, Path]) -> None:
    import asyncio

    from viddiff.video import Sampling

    ref = VideoRef(path=str(videos["h264_30"]))
    seen: list[VideoRef] = []

    def samplings(asked: VideoRef):
        seen.append(asked)
        return (Sampling(target_fps=3), Sampling(target_fps=10))

    (a3, a10), (b3, b10) = asyncio.run(_read_refs((ref, ref), samplings))
    assert seen == [ref] and a3 is b3 and a10 is b10
    assert frame_numbers(a3) == list(range(0, 90, 10)) and frame_numbers(a10) == list(range(0, 90, 3))
