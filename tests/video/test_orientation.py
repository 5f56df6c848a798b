"""Tests for viddiff.video.orientation: the eight right-angle transforms, display matrices, EXIF tags.

References are independent of the module: numpy's rot90/flips for the pixel operations, display
matrices as FFmpeg writes them (PyAV's ``set_display_rotation`` fills them with FFmpeg's own
``av_display_rotation_set``/``av_display_matrix_flip``), and Pillow's ``ImageOps.exif_transpose``.
"""

from __future__ import annotations

import io
import itertools

import av
import numpy as np
import pytest
from PIL import Image, ImageOps

from viddiff.video.orientation import (
    EXIF_ORIENTATION_TAG,
    IDENTITY,
    MIRROR,
    Orientation,
    decord_rotation,
    from_display_matrix,
    from_exif,
    quarter_turns_ccw,
)

ALL = [quarter_turns_ccw(k).then(m) for k in range(4) for m in (IDENTITY, MIRROR)]
GRID = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)  # every pixel distinct, not square


IDENTITY_MATRIX = [65536, 0, 0, 0, 65536, 0, 0, 0, 1 << 30]


def written(degrees: int, hflip: bool = False, vflip: bool = False) -> tuple[list[int], int]:
    """The display matrix FFmpeg stores for a rotation (PyAV's writer), read back from a real file,
    and FFmpeg's own reading of its angle (``av_display_rotation_get``, as ``VideoFrame.rotation``)."""
    buffer = io.BytesIO()
    with av.open(buffer, "w", format="mp4") as container:
        stream = container.add_stream("mpeg4", rate=10)
        stream.width, stream.height, stream.pix_fmt = 16, 16, "yuv420p"
        stream.set_display_rotation(degrees, hflip=hflip, vflip=vflip)
        container.mux(stream.encode(av.VideoFrame.from_ndarray(np.zeros((16, 16, 3), np.uint8), format="rgb24")))
        container.mux(stream.encode(None))
    buffer.seek(0)
    with av.open(buffer) as container:
        frame = next(container.decode(video=0))
        try:
            matrix = np.frombuffer(bytes(frame.side_data["DISPLAYMATRIX"]), dtype=np.int32).tolist()
        except KeyError:  # an identity matrix is not reported
            matrix = IDENTITY_MATRIX
        return matrix, frame.rotation


def written_matrix(degrees: int, hflip: bool = False, vflip: bool = False) -> list[int]:
    return written(degrees, hflip, vflip)[0]


def test_the_eight_transforms_form_a_group() -> None:
    assert len(set(ALL)) == 8
    for a, b in itertools.product(ALL, ALL):
        assert a.then(b) in ALL
    for a in ALL:
        assert a.then(a.inverse()) == IDENTITY == a.inverse().then(a)
        assert np.array_equal(a.inverse().apply(a.apply(GRID)), GRID)


def test_apply_matches_numpy() -> None:
    assert np.array_equal(quarter_turns_ccw(1).apply(GRID), np.rot90(GRID, 1))  # rot90 turns counter-clockwise
    assert np.array_equal(quarter_turns_ccw(2).apply(GRID), np.rot90(GRID, 2))
    assert np.array_equal(quarter_turns_ccw(3).apply(GRID), np.rot90(GRID, -1))
    assert np.array_equal(MIRROR.apply(GRID), GRID[:, ::-1])
    assert np.array_equal(IDENTITY.apply(GRID), GRID)


def test_then_composes_in_order() -> None:
    for a, b in itertools.product(ALL, ALL):
        assert np.array_equal(a.then(b).apply(GRID), b.apply(a.apply(GRID)))


def test_display_size_and_words() -> None:
    assert quarter_turns_ccw(1).display_size(1920, 1080) == (1080, 1920)
    assert quarter_turns_ccw(2).display_size(1920, 1080) == (1920, 1080)
    assert quarter_turns_ccw(1).describe() == "rotated 90° counter-clockwise"
    assert quarter_turns_ccw(3).then(MIRROR).describe() == "rotated 90° clockwise, mirrored left-right"
    assert IDENTITY.describe() == "upright"
    with pytest.raises(ValueError):
        Orientation(1, 1, 0, 1)


@pytest.mark.parametrize("degrees", [0, 90, 180, 270, -90])
@pytest.mark.parametrize("hflip", [False, True])
def test_display_matrix_as_ffmpeg_writes_it(degrees: int, hflip: bool) -> None:
    """FFmpeg's matrix for 'rotate by d° counter-clockwise, then mirror' means exactly that on screen."""
    expected = quarter_turns_ccw(degrees // 90).then(MIRROR if hflip else IDENTITY)
    assert from_display_matrix(written_matrix(degrees, hflip=hflip)) == expected


def test_vertical_flip_matrix() -> None:
    assert from_display_matrix(written_matrix(0, vflip=True)) == quarter_turns_ccw(2).then(MIRROR)


def test_display_matrix_with_scale_and_odd_angle(caplog: pytest.LogCaptureFixture) -> None:
    scaled = [0, -2 * 65536, 0, 2 * 65536, 0, 0, 0, 0, 1 << 30]  # 90° with a 2x scale: still a quarter turn
    assert from_display_matrix(scaled) == quarter_turns_ccw(1)
    assert not caplog.records
    c, s = np.cos(np.radians(80)), np.sin(np.radians(80))
    tilted = [round(c * 65536), round(-s * 65536), 0, round(s * 65536), round(c * 65536), 0, 0, 0, 1 << 30]
    assert from_display_matrix(tilted) == quarter_turns_ccw(1)
    assert "not a right-angle rotation" in caplog.text


@pytest.mark.parametrize("degrees", [0, 90, 180, 270])
@pytest.mark.parametrize("hflip", [False, True])
def test_decord_rotation_follows_av_display_rotation_get(degrees: int, hflip: bool) -> None:
    """decord turns frames counter-clockwise by FFmpeg's angle and ignores mirroring."""
    matrix, ffmpeg_angle = written(degrees, hflip=hflip)
    assert decord_rotation(matrix) == quarter_turns_ccw(round(ffmpeg_angle / 90))
    assert decord_rotation(matrix).mirrored is False


def test_decord_reads_a_pure_mirror_as_a_half_turn() -> None:
    assert decord_rotation(written_matrix(0, hflip=True)) == quarter_turns_ccw(2)


@pytest.mark.parametrize("tag", range(1, 9))
def test_exif_orientation_matches_pillow(tag: int) -> None:
    rng = np.random.default_rng(tag)
    stored = rng.integers(0, 256, size=(6, 10, 3), dtype=np.uint8)
    image = Image.fromarray(stored)
    exif = image.getexif()
    exif[EXIF_ORIENTATION_TAG] = tag
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", exif=exif)
    with Image.open(io.BytesIO(buffer.getvalue())) as reread:
        expected = np.asarray(ImageOps.exif_transpose(reread).convert("RGB"))
        assert np.array_equal(from_exif(reread.getexif().get(EXIF_ORIENTATION_TAG)).apply(stored), expected)


@pytest.mark.parametrize("tag", [None, 0, 9, "6"])
def test_exif_missing_or_invalid_means_as_stored(tag: object) -> None:
    assert from_exif(tag) == IDENTITY  # type: ignore[arg-type]
