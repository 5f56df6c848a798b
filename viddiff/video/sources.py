"""Opened videos: a PyAV probe of a file, and the three readers (PyAV, decord, image directory).

Every file is probed with PyAV first: the probe lists the frames' presentation timestamps (the
frame count ffprobe reports), the codec, and the display transform, so the decoder can be chosen
from facts instead of from a failure. Readers yield upright full-resolution RGB frames for sorted
frame indices; sampling, trims and resizing are the caller's (:mod:`viddiff.video.read`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from types import ModuleType
from typing import Any, Generator, Optional

import numpy as np

from viddiff.backends.cpu import available_cores
from viddiff.errors import VideoError
from viddiff.video.orientation import (
    EXIF_ORIENTATION_TAG,
    IDENTITY,
    Orientation,
    decord_rotation,
    from_display_matrix,
    from_exif,
)

logger = logging.getLogger(__name__)

Frames = Generator[np.ndarray, None, None]
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".webp"})
DECORD_CODECS = frozenset({"h264", "hevc", "mpeg4"})
"""Codecs decord 0.6 (FFmpeg 4.1 inside) reads correctly; others (VP9: broken seeking, AV1: no decoder) go to PyAV."""
_MOV_FAMILY = "mov"  # PyAV's format name for MP4/MOV/3GP files is "mov,mp4,m4a,3gp,3g2,mj2"
_DECORD_CHUNK_BYTES = 32 * 2**20  # full-resolution frames held at once by a decord batch (x2: its copy)


@dataclass(frozen=True)
class FileProbe:
    """What PyAV sees in a video file without decoding more than its first frame."""

    path: Path
    container_format: str
    codec: str
    fps: float
    """The container's average frame rate (0 when it states none)."""
    coded_width: int
    coded_height: int
    n_frames: int
    """Packets carrying a frame, as ``ffprobe -count_packets`` counts them."""
    pts: Optional[np.ndarray]
    """Sorted presentation timestamps (stream time base); ``None`` when some are missing or repeated."""
    time_base: Fraction
    display_matrix: Optional[tuple[int, ...]]
    orientation: Orientation

    @property
    def times_s(self) -> Optional[np.ndarray]:
        """Presentation time of each frame in seconds since the first one (``None`` without timestamps)."""
        if self.pts is None:
            return None
        return (self.pts - self.pts[0]).astype(np.float64) * float(self.time_base)

    @property
    def width(self) -> int:
        return self.orientation.display_size(self.coded_width, self.coded_height)[0]

    @property
    def height(self) -> int:
        return self.orientation.display_size(self.coded_width, self.coded_height)[1]

    @property
    def is_mov_family(self) -> bool:
        return _MOV_FAMILY in self.container_format.split(",")


def probe_file(path: Path) -> FileProbe:
    """Probe a video file with PyAV; any file it cannot read is one clear :class:`VideoError`."""
    import av

    try:
        with av.open(str(path)) as container:
            if not container.streams.video:
                raise VideoError(
                    f"{path}: contains no video stream (a truncated file, not a video, or audio only); "
                    "pass a video file or an image directory"
                )
            stream = container.streams.video[0]
            if stream.codec_context is None:
                raise VideoError(
                    f"{path}: its video stream cannot be decoded (truncated file or unknown codec); "
                    "re-export or replace the file"
                )
            rate = stream.average_rate or stream.guessed_rate or stream.base_rate
            width, height = stream.codec_context.width, stream.codec_context.height
            codec = stream.codec_context.codec.canonical_name  # "av1", not the decoder's name ("libdav1d")
            time_base = stream.time_base or Fraction(0)
            pts, matrix = _packet_times_and_display_matrix(path, container, stream)
            container_format = container.format.name
    except VideoError:
        raise
    except Exception as exc:
        reason = exc.strerror if isinstance(exc, av.FFmpegError) and exc.strerror else f"{type(exc).__name__}: {exc}"
        raise VideoError(
            f"{path}: not a readable video ({reason}); "
            "check the file is a complete .mp4/.mov/.webm/.mkv/.avi or a directory of images"
        ) from exc
    if not pts:
        raise VideoError(f"{path}: video has no frames; re-export or replace the file")
    known = [p for p in pts if p is not None]
    table = None
    if len(known) == len(pts) and len(set(known)) == len(known) and time_base:
        table = np.array(sorted(known), dtype=np.int64)
    return FileProbe(
        path=path, container_format=container_format, codec=codec, fps=float(rate) if rate else 0.0,
        coded_width=width, coded_height=height, n_frames=len(pts), pts=table, time_base=time_base,
        display_matrix=matrix, orientation=from_display_matrix(matrix) if matrix else IDENTITY,
    )


def _packet_times_and_display_matrix(path: Path, container: Any, stream: Any) -> tuple[list, Optional[tuple[int, ...]]]:
    """Every frame-carrying packet's pts, and the display matrix FFmpeg attaches to decoded frames (PyAV exposes
    it on frames, not streams), in one pass over the file: its first frame is decoded on the way."""
    import av

    stream.codec_context.thread_count = 1  # one frame to decode: no decoding threads to start
    pts: list = []
    first_frame_seen = False
    matrix: Optional[tuple[int, ...]] = None
    for packet in container.demux(stream):
        if packet.size > 0 and not packet.is_discard:
            pts.append(packet.pts)
        if first_frame_seen or (packet.size == 0 and not pts):
            continue
        try:
            frame = next(iter(packet.decode()), None)
        except av.FFmpegError as exc:
            raise VideoError(f"{path}: its first frame cannot be decoded ({exc}); the file may be corrupt") from exc
        if frame is None:
            continue
        first_frame_seen = True
        try:
            data = frame.side_data["DISPLAYMATRIX"]
        except KeyError:
            continue
        matrix = tuple(int(v) for v in np.frombuffer(bytes(data), dtype=np.int32))
    return pts, matrix


class PyAVSource:
    """A video file decoded sequentially by PyAV, keeping only wanted frames.

    The probe's table of presentation timestamps makes a frame's index its rank in that table, so a
    read can seek to the keyframe before the first wanted frame instead of decoding from 0; when
    timestamps are missing or disagree with the table, the read counts decoded frames from the start.
    """

    backend = "pyav"

    def __init__(self, probe: FileProbe):
        self.probe = probe
        self.path = probe.path
        self.pts_table: Optional[dict[int, int]] = (
            None if probe.pts is None else {int(p): i for i, p in enumerate(probe.pts)}
        )
        self.frames_decoded = 0
        """Frames the decoder put out during the reads so far (skipped unreferenced frames are not)."""

    def iter_frames(self, indices: np.ndarray) -> Frames:
        wanted = indices.tolist()
        done = 0
        if self.pts_table is not None:
            for frame in self._decode_by_pts(wanted):
                done += 1
                yield frame
        if done < len(wanted):
            yield from self._decode_by_count(wanted[done:])

    def _upright(self, frame) -> np.ndarray:
        return self.probe.orientation.apply(frame.to_ndarray(format="rgb24"))

    def _decode_by_pts(self, wanted: list[int]) -> Frames:
        """Seek near the first wanted frame, identify frames by pts; stop early if pts mislead.

        An H.264 frame that no other frame refers to (``nal_ref_idc`` 0: most B-frames) and that is not
        wanted is skipped by the decoder instead of decoded and dropped: the frames kept are bit for bit
        those of a full decode (the standard forbids predicting from such a frame), at 0.63-0.73x the CPU
        time on real H.264 clips (``bench/decode_unreferenced.py``). Other codecs decode every frame: an HEVC
        "sub-layer non-reference" picture may still be a reference for a higher temporal layer.
        """
        import av

        assert self.pts_table is not None and self.probe.pts is not None
        position = 0
        skip_unreferenced = self.probe.codec == "h264"
        wanted_pts = {int(self.probe.pts[i]) for i in wanted}
        with av.open(str(self.path)) as container:
            stream = container.streams.video[0]
            context = stream.codec_context
            stream.thread_type = "AUTO"
            context.thread_count = decoder_threads()
            if wanted[0] > 0:
                container.seek(int(self.probe.pts[wanted[0]]), stream=stream, backward=True, any_frame=False)
            for packet in container.demux(stream):
                if skip_unreferenced:
                    # Read per packet: a frame-threaded decoder takes the setting with the packet it is given.
                    context.skip_frame = "NONREF" if packet.pts is not None and packet.pts not in wanted_pts else "DEFAULT"
                for frame in packet.decode():
                    self.frames_decoded += 1
                    index = self.pts_table.get(frame.pts) if frame.pts is not None else None
                    if index is None or index > wanted[position]:
                        logger.debug("%s: pts do not match the packet table; decoding by count", self.path)
                        return
                    if index == wanted[position]:
                        yield self._upright(frame)
                        position += 1
                        if position == len(wanted):
                            return

    def _decode_by_count(self, wanted: list[int]) -> Frames:
        """Decode from the first frame, numbering frames as they come out of the decoder."""
        import av

        position, index = 0, -1
        with av.open(str(self.path)) as container:
            stream = container.streams.video[0]
            stream.thread_type = "AUTO"
            stream.codec_context.thread_count = decoder_threads()
            for index, frame in enumerate(container.decode(stream)):
                self.frames_decoded += 1
                if index == wanted[position]:
                    yield self._upright(frame)
                    position += 1
                    if position == len(wanted):
                        return
        raise VideoError(
            f"{self.path}: decoded only {index + 1} of the {self.probe.n_frames} frames the container lists "
            "(truncated or corrupt file?); re-export it or trim to the readable part"
        )


def decoder_threads() -> int:
    """FFmpeg threads for one decoder: half the cores this process may use, as a comparison decodes its two
    videos at once. FFmpeg's own choice (a thread per core, plus one) gives each of the two decoders every
    core, and the threads then wait on one another: more CPU time per comparison when many are in flight."""
    return max(1, available_cores() // 2)


def import_decord() -> Optional[ModuleType]:
    """decord if it imports, else None (it is optional and x86_64-only).

    The FFmpeg inside decord prints to stderr ("moov atom not found", ...); it is kept quiet unless
    viddiff logs at DEBUG, since every problem it could report reaches the user as a VideoError.
    """
    try:
        import decord
    except Exception as exc:  # ImportError, or a broken shared library
        logger.debug("decord unavailable: %s", exc)
        return None
    debugging = logger.isEnabledFor(logging.DEBUG)
    decord.logging.set_level(decord.logging.WARNING if debugging else decord.logging.QUIET)
    return decord


class DecordUnfit(VideoError):
    """decord would return wrong frames for this file (it is not a decoding failure): use PyAV."""


def decord_unfit_reason(probe: FileProbe) -> Optional[str]:
    """Why decord should not read this file in 'auto' mode (``None``: it reads it exactly)."""
    if probe.codec not in DECORD_CODECS:
        return f"codec {probe.codec} is read by PyAV (decord handles {', '.join(sorted(DECORD_CODECS))})"
    if not probe.orientation.is_identity:
        return f"frames are stored {probe.orientation.inverse().describe()} (display matrix); PyAV turns them upright"
    return None


class DecordSource:
    """A video file read through decord's random-access batches, turned upright where decord did not.

    decord 0.6 applies the rotation of MP4/MOV display matrices itself (ignoring mirroring) and knows
    nothing of Matroska's; a quarter turn it applies comes out with corrupt strides, so such files
    are refused here (PyAV reads them).
    """

    backend = "decord"

    def __init__(self, probe: FileProbe, decord: ModuleType):
        self.probe = probe
        self.reader = decord.VideoReader(str(probe.path), ctx=decord.cpu(0))
        applied = IDENTITY
        if probe.display_matrix is not None and probe.is_mov_family:
            applied = decord_rotation(probe.display_matrix)
        if applied.swaps_sides:
            raise DecordUnfit(
                f"{probe.path}: decord 0.6 mis-decodes videos it rotates by a quarter turn "
                f"({probe.orientation.describe()}); use backend 'auto' or 'pyav'"
            )
        self.applied = applied
        self.residual = applied.inverse().then(probe.orientation)
        if len(self.reader) != probe.n_frames:
            raise DecordUnfit(
                f"{probe.path}: decord counts {len(self.reader)} frames where the container lists {probe.n_frames}; "
                "use backend 'auto' or 'pyav'"
            )

    def iter_frames(self, indices: np.ndarray) -> Frames:
        width, height = self.applied.display_size(self.probe.coded_width, self.probe.coded_height)
        chunk = max(1, _DECORD_CHUNK_BYTES // (width * height * 3))
        for first in range(0, len(indices), chunk):
            batch = self.reader.get_batch(indices[first:first + chunk].tolist()).asnumpy()
            if batch.shape[1:] != (height, width, 3):
                raise DecordUnfit(
                    f"{self.probe.path}: decord returned frames of shape {batch.shape[1:]}, expected "
                    f"{(height, width, 3)}; use backend 'auto' or 'pyav'"
                )
            for frame in batch:
                yield self.residual.apply(frame)


class ImageDirSource:
    """A directory of frame images, ordered by file name, each turned upright by its EXIF orientation."""

    backend = "images"

    def __init__(self, path: Path):
        self.path = path
        self.files = sorted(
            (p for p in path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES and not p.name.startswith(".")),
            key=lambda p: p.name,
        )
        if not self.files:
            raise VideoError(
                f"{path}: image directory has no images ({', '.join(sorted(IMAGE_SUFFIXES))}); "
                "check the path points at the frames folder"
            )
        sizes = {self._upright_size(p) for p in self.files}
        if len(sizes) > 1:
            raise VideoError(
                f"{path}: images have different sizes (upright) {sorted(sizes)}; all frames of a video must share one size"
            )
        (self.width, self.height), = sizes
        self.n_frames = len(self.files)

    @staticmethod
    def _upright_size(file: Path) -> tuple[int, int]:
        """Displayed image size from the header and EXIF only, so probing a long frame folder stays cheap."""
        from PIL import Image

        try:
            with Image.open(file) as image:
                orientation = from_exif(image.getexif().get(EXIF_ORIENTATION_TAG))
                return orientation.display_size(*image.size)
        except Exception as exc:
            raise VideoError(f"{file}: unreadable image ({exc}); replace or remove it") from exc

    def iter_frames(self, indices: np.ndarray) -> Frames:
        from PIL import Image

        for index in indices:
            file = self.files[index]
            try:
                with Image.open(file) as image:
                    orientation = from_exif(image.getexif().get(EXIF_ORIENTATION_TAG))
                    frame = np.asarray(image.convert("RGB"))
            except Exception as exc:
                raise VideoError(f"{file}: unreadable image ({exc}); replace or remove it") from exc
            yield orientation.apply(frame)
