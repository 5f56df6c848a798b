"""Read the frames of a video (file or image directory) at a target fps, within a trim.

Only the sampled frames are ever decoded into arrays, so memory scales with the
number of samples, not with the video length (long surgery videos at 30 fps).
decord is used when it is installed and works on the file; on any decord
failure the read falls back to PyAV, which decodes everything FFmpeg does.

Frame indices always refer to the whole source (a trim does not renumber), so
keyframes chosen downstream can be mapped back to the original video.
"""

from __future__ import annotations

import logging
import math
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Generator, Iterator, Optional, Protocol, Sequence, Union

import numpy as np

from viddiff.errors import VideoError

if TYPE_CHECKING:
    from viddiff.schema import VideoRef

logger = logging.getLogger(__name__)

PathLike = Union[str, Path]
Trim = Optional[Sequence[Optional[int]]]
_Frames = Generator[np.ndarray, None, None]

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".webp"})
BACKENDS = ("auto", "decord", "pyav")
_FPS_TOLERANCE = 0.01  # relative disagreement between caller and container fps that is reported
_STRIDE_TOLERANCE = 1e-6
_DECORD_CHUNK_BYTES = 32 * 2**20  # full-resolution frames held at once by a decord batch (x2: its copy)


@dataclass(frozen=True)
class VideoInfo:
    """What a source holds, as seen by the backend that will read it."""

    path: str
    fps: float
    n_frames: int
    width: int
    height: int
    backend: str


@dataclass(frozen=True)
class VideoFrames:
    """The sampled frames of a source and where each came from."""

    frames: np.ndarray
    """(N, H, W, 3) uint8 RGB, only the sampled frames."""
    frame_indices: np.ndarray
    """(N,) int64 index of each frame in the whole source."""
    fps: float
    """Effective fps of the sampled sequence (``fps_original / stride``)."""
    fps_original: float
    stride: int
    start: int
    """Trim start actually applied (inclusive)."""
    end: int
    """Trim end actually applied (exclusive)."""
    n_frames_source: int
    backend: str

    @property
    def times_s(self) -> np.ndarray:
        """Seconds of each sampled frame since the trim start."""
        return (self.frame_indices - self.start) / self.fps_original

    def at(self, frame_indices: Sequence[int]) -> list[np.ndarray]:
        """The sampled frames with these source frame indices (keyframes are stored by frame index)."""
        position = {int(f): i for i, f in enumerate(self.frame_indices)}
        try:
            return [self.frames[position[int(f)]] for f in frame_indices]
        except KeyError as exc:
            raise ValueError(f"frame {exc.args[0]} was not sampled from this video") from None


# --------------------------------------------------------------------------- pure arithmetic


def compute_stride(fps_original: float, target_fps: Optional[float]) -> int:
    """Integer frame stride that best approximates ``target_fps`` from ``fps_original``.

    Integer strides keep samples equally spaced in the source (design §5);
    when the exact target is impossible this logs one warning and rounds
    half up (a ratio of 2.5 gives stride 3).
    """
    if not fps_original > 0:
        raise VideoError(f"fps_original must be > 0, got {fps_original}; check the video's fps")
    if target_fps is None:
        return 1
    if not target_fps > 0:
        raise VideoError(f"target fps must be > 0 or None (every frame), got {target_fps}")
    ratio = fps_original / target_fps
    stride = max(1, math.floor(ratio + 0.5))
    if target_fps > fps_original:
        logger.warning(
            "target fps %g exceeds the video's %g fps; using every frame (%g fps)",
            target_fps, fps_original, fps_original,
        )
    elif abs(ratio - round(ratio)) > _STRIDE_TOLERANCE:
        logger.warning(
            "target fps %g is not an integer divisor of %g fps; using stride %d (%g fps)",
            target_fps, fps_original, stride, fps_original / stride,
        )
    return stride


def resolve_trim(frames_trim: Trim, n_frames: int, path: PathLike = "<video>") -> tuple[int, int]:
    """Turn a ``[start, end)`` trim with optional ``None`` ends into concrete bounds.

    Negative indices are refused instead of wrapping around (a silent wrap
    selects the wrong part of the video); an end past the video is clamped.
    """
    if frames_trim is None:
        return 0, n_frames
    if len(frames_trim) != 2:
        raise VideoError(f"{path}: frames_trim {frames_trim!r} must be [start, end) with 2 entries")
    start = 0 if frames_trim[0] is None else int(frames_trim[0])
    end = n_frames if frames_trim[1] is None else int(frames_trim[1])
    if start < 0 or end < 0:
        raise VideoError(
            f"{path}: frames_trim {list(frames_trim)} has a negative index; "
            f"use absolute frame indices in [0, {n_frames}] (negative indices do not wrap)"
        )
    if start >= n_frames or start >= end:
        raise VideoError(
            f"{path}: frames_trim {list(frames_trim)} selects no frames of a video with "
            f"{n_frames} frames; fix the trim so that 0 <= start < end and start < {n_frames}"
        )
    if end > n_frames:
        logger.warning(
            "%s: frames_trim end %d is past the last frame; clamping to %d frames", path, end, n_frames
        )
        end = n_frames
    return start, end


def scaled_size(width: int, height: int, max_side: Optional[int]) -> tuple[int, int]:
    """(width, height) with the longer side at most ``max_side``, aspect preserved."""
    if max_side is None or max(width, height) <= max_side:
        return width, height
    scale = max_side / max(width, height)
    return max(1, round(width * scale)), max(1, round(height * scale))


# --------------------------------------------------------------------------- sources


class _Source(Protocol):
    """An opened video: its metadata and a way to decode chosen frames in order."""

    info: VideoInfo

    def iter_frames(self, indices: np.ndarray) -> _Frames:
        """Yield one full-resolution RGB frame per (sorted) index, in order."""


class _ImageDirSource:
    """A directory of frame images, ordered by file name."""

    def __init__(self, path: Path, fps_original: Optional[float]):
        if fps_original is None:
            raise VideoError(
                f"{path}: is an image directory, which has no frame rate; give its fps (fps_original in a dataset row or the API, --fps-original on the command line)"
            )
        self.files = sorted(
            (p for p in path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES and not p.name.startswith(".")),
            key=lambda p: p.name,
        )
        if not self.files:
            raise VideoError(
                f"{path}: image directory has no images ({', '.join(sorted(IMAGE_SUFFIXES))}); "
                "check the path points at the frames folder"
            )
        sizes = {self._size(p) for p in self.files}
        if len(sizes) > 1:
            raise VideoError(
                f"{path}: images have different sizes {sorted(sizes)}; all frames of a video must share one size"
            )
        (width, height), = sizes
        self.info = VideoInfo(str(path), float(fps_original), len(self.files), width, height, "images")

    @staticmethod
    def _size(file: Path) -> tuple[int, int]:
        """Image size from the header only, so probing a long frame folder stays cheap."""
        from PIL import Image

        try:
            with Image.open(file) as image:
                return image.size
        except Exception as exc:
            raise VideoError(f"{file}: unreadable image ({exc}); replace or remove it") from exc

    def iter_frames(self, indices: np.ndarray) -> _Frames:
        from PIL import Image

        for index in indices:
            file = self.files[index]
            try:
                with Image.open(file) as image:
                    frame = np.asarray(image.convert("RGB"))
            except Exception as exc:
                raise VideoError(f"{file}: unreadable image ({exc}); replace or remove it") from exc
            yield frame


def _import_decord() -> Optional[ModuleType]:
    """decord if it imports, else None (it is optional and x86_64-only)."""
    try:
        import decord
    except Exception as exc:  # ImportError, or a broken shared library
        logger.debug("decord unavailable: %s", exc)
        return None
    return decord


class _DecordSource:
    """A video file read through decord's random-access batches."""

    def __init__(self, path: Path, decord: ModuleType):
        self.reader = decord.VideoReader(str(path), ctx=decord.cpu(0))
        n_frames = len(self.reader)
        if n_frames == 0:
            raise VideoError(f"{path}: video has no frames; re-export or replace the file")
        height, width = self.reader[0].shape[:2]
        self.info = VideoInfo(str(path), float(self.reader.get_avg_fps()), n_frames, width, height, "decord")

    def iter_frames(self, indices: np.ndarray) -> _Frames:
        chunk = max(1, _DECORD_CHUNK_BYTES // (self.info.width * self.info.height * 3))
        for first in range(0, len(indices), chunk):
            batch = self.reader.get_batch(indices[first:first + chunk].tolist()).asnumpy()
            yield from batch


class _PyAVSource:
    """A video file decoded sequentially by PyAV, keeping only wanted frames.

    A demux pass (no decoding) builds the table of presentation timestamps,
    so a frame's index is its rank in that table. This lets a read seek to
    the keyframe before the trim start instead of decoding from 0; when
    timestamps are missing or disagree with the table, the read falls back
    to counting decoded frames from the beginning.
    """

    def __init__(self, path: Path):
        import av

        self.path = path
        try:
            with av.open(str(path)) as container:
                if not container.streams.video:
                    raise VideoError(
                        f"{path}: contains no video stream (not a video, or audio only); "
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
                pts = [
                    packet.pts
                    for packet in container.demux(stream)
                    if packet.size > 0 and not packet.is_discard
                ]
        except VideoError:
            raise
        except Exception as exc:
            raise VideoError(
                f"{path}: not a readable video ({type(exc).__name__}: {exc}); "
                "check the file is a complete .mp4/.mov/.webm/.mkv/.avi or a directory of images"
            ) from exc
        if not pts:
            raise VideoError(f"{path}: video has no frames; re-export or replace the file")
        self.pts_table: Optional[dict[int, int]] = None
        self.pts_sorted: Optional[list[int]] = None
        known = [p for p in pts if p is not None]
        if len(known) == len(pts) and len(set(known)) == len(known):
            self.pts_sorted = sorted(known)
            self.pts_table = {p: i for i, p in enumerate(self.pts_sorted)}
        fps = float(rate) if rate else 0.0
        self.info = VideoInfo(str(path), fps, len(pts), width, height, "pyav")

    def iter_frames(self, indices: np.ndarray) -> _Frames:
        wanted = indices.tolist()
        done = 0
        if self.pts_table is not None:
            for frame in self._decode_by_pts(wanted):
                done += 1
                yield frame
        if done < len(wanted):
            yield from self._decode_by_count(wanted[done:])

    def _decode_by_pts(self, wanted: list[int]) -> _Frames:
        """Seek near the first wanted frame, identify frames by pts; stop early if pts mislead."""
        import av

        assert self.pts_table is not None and self.pts_sorted is not None
        position = 0
        with av.open(str(self.path)) as container:
            stream = container.streams.video[0]
            stream.thread_type = "AUTO"
            if wanted[0] > 0:
                container.seek(self.pts_sorted[wanted[0]], stream=stream, backward=True, any_frame=False)
            for frame in container.decode(stream):
                index = self.pts_table.get(frame.pts) if frame.pts is not None else None
                if index is None or index > wanted[position]:
                    logger.debug("%s: pts do not match the packet table; decoding by count", self.path)
                    return
                if index == wanted[position]:
                    yield frame.to_ndarray(format="rgb24")
                    position += 1
                    if position == len(wanted):
                        return

    def _decode_by_count(self, wanted: list[int]) -> _Frames:
        """Decode from the first frame, numbering frames as they come out of the decoder."""
        import av

        position, index = 0, -1
        with av.open(str(self.path)) as container:
            stream = container.streams.video[0]
            stream.thread_type = "AUTO"
            for index, frame in enumerate(container.decode(stream)):
                if index == wanted[position]:
                    yield frame.to_ndarray(format="rgb24")
                    position += 1
                    if position == len(wanted):
                        return
        raise VideoError(
            f"{self.path}: decoded only {index + 1} of the {self.info.n_frames} frames the container lists "
            "(truncated or corrupt file?); re-export it or trim to the readable part"
        )


# --------------------------------------------------------------------------- dispatch


def _check_path(path: PathLike) -> Path:
    path = Path(path)
    if not path.exists():
        raise VideoError(f"{path}: no such video file or image directory; check the path")
    return path


def _check_backend(backend: str) -> None:
    if backend not in BACKENDS:
        raise VideoError(f"video backend {backend!r} is unknown; use one of {', '.join(BACKENDS)}")


def _require_decord() -> ModuleType:
    decord = _import_decord()
    if decord is None:
        raise VideoError("video backend 'decord' is not installed; pip install decord, or use backend 'pyav'")
    return decord


def _file_backends(backend: str) -> list[str]:
    """Backends to try, in order; 'auto' prefers decord only when it imports."""
    if backend != "auto":
        return [backend]
    return ["decord", "pyav"] if _import_decord() is not None else ["pyav"]


def _checked_fps(source: _Source, fps_original: Optional[float]) -> float:
    """The container's fps, warning when the caller's differs; the caller's only when the file has none."""
    info = source.info
    if info.fps <= 0:
        if fps_original is None:
            raise VideoError(f"{info.path}: the file states no frame rate; give it (fps_original in a dataset row or the API, --fps-original on the command line)")
        return float(fps_original)
    if fps_original is not None and abs(fps_original - info.fps) > _FPS_TOLERANCE * info.fps:
        logger.warning(
            "%s: given fps_original %g disagrees with the container's %g fps; using %g",
            info.path, fps_original, info.fps, info.fps,
        )
    return info.fps


def _collect(frames: _Frames, count: int, max_side: Optional[int], path: str) -> np.ndarray:
    """Stack frames into one array, resizing each as it arrives so full-size frames never pile up."""
    with closing(frames):  # stop the decoder (and close the file) once enough frames are in
        return _stack(frames, count, max_side, path)


def _stack(frames: Iterator[np.ndarray], count: int, max_side: Optional[int], path: str) -> np.ndarray:
    from PIL import Image

    out: Optional[np.ndarray] = None
    for i, frame in enumerate(frames):
        height, width = frame.shape[:2]
        size = scaled_size(width, height, max_side)
        if size != (width, height):
            frame = np.asarray(Image.fromarray(frame).resize(size, Image.Resampling.BICUBIC))
        if out is None:
            out = np.empty((count, *frame.shape), dtype=np.uint8)
        elif frame.shape != out.shape[1:]:
            raise VideoError(f"{path}: frame sizes change within the video; re-export it at one size")
        out[i] = frame
        if i + 1 == count:
            return out
    raise VideoError(f"{path}: the decoder returned fewer frames than requested; the file may be corrupt")


def _check_max_side(max_side: Optional[int]) -> None:
    if max_side is not None and max_side < 1:
        raise VideoError(f"max_side must be a positive number of pixels or None, got {max_side}")


def _open_with_fallback(path: Path, backend: str) -> Iterator[_Source]:
    """Yield an opened source per backend to try; in 'auto' mode a decord failure moves on to PyAV."""
    candidates = _file_backends(backend)
    decord_failure: Optional[Exception] = None
    for name in candidates:
        if name == "pyav":
            # Warn only once PyAV has opened the file: for a file nobody can read, PyAV's own error
            # says why, and decord's cryptic reason would only precede it as noise.
            source = _PyAVSource(path)
            if decord_failure is not None:
                logger.warning("%s: decord cannot open it (%s); falling back to PyAV", path, decord_failure)
            yield source
            return
        try:
            source = _DecordSource(path, _require_decord())
        except Exception as exc:
            if name != candidates[-1]:
                logger.debug("%s: decord cannot open it (%s); trying PyAV", path, exc)
                decord_failure = exc
                continue
            if isinstance(exc, VideoError):
                raise
            raise VideoError(f"{path}: decord cannot open it ({exc}); use backend 'pyav' or 'auto'") from exc
        yield source


def probe_video(path: PathLike, fps_original: Optional[float] = None, backend: str = "auto") -> VideoInfo:
    """Frame count, fps and size of a video file or image directory, without decoding it all.

    For a file, ``fps`` is the container's (``fps_original`` is only a
    cross-check, or the fallback when the file states no rate).
    """
    _check_backend(backend)
    path = _check_path(path)
    if path.is_dir():
        return _ImageDirSource(path, fps_original).info
    source = next(_open_with_fallback(path, backend))
    info = source.info
    return VideoInfo(info.path, _checked_fps(source, fps_original), info.n_frames, info.width, info.height, info.backend)


def read_video(
    path: PathLike,
    target_fps: Optional[float] = None,
    frames_trim: Trim = None,
    fps_original: Optional[float] = None,
    max_side: Optional[int] = None,
    backend: str = "auto",
) -> VideoFrames:
    """Decode the frames ``range(start, end, stride)`` of a video file or image directory.

    ``target_fps=None`` keeps every frame. Directories of images always use the
    image reader (whatever ``backend`` says) and need ``fps_original``.
    Trim and fps mistakes raise at once; a decord decoding failure in 'auto'
    mode retries the whole read with PyAV.
    """
    _check_backend(backend)
    _check_max_side(max_side)
    path = _check_path(path)
    sources: Iterator[_Source] = (
        iter([_ImageDirSource(path, fps_original)]) if path.is_dir() else _open_with_fallback(path, backend)
    )
    for source in sources:
        info = source.info
        fps = _checked_fps(source, fps_original)
        start, end = resolve_trim(frames_trim, info.n_frames, info.path)
        stride = compute_stride(fps, target_fps)
        indices = np.arange(start, end, stride, dtype=np.int64)
        try:
            frames = _collect(source.iter_frames(indices), len(indices), max_side, info.path)
        except Exception as exc:
            if info.backend == "decord" and backend == "auto":
                logger.warning("%s: decord failed (%s: %s); falling back to PyAV", path, type(exc).__name__, exc)
                continue
            if isinstance(exc, VideoError):
                raise
            raise VideoError(
                f"{path}: {info.backend} failed while decoding ({type(exc).__name__}: {exc}); "
                "the file may be corrupt" + ("; try backend 'pyav'" if info.backend == "decord" else "")
            ) from exc
        return VideoFrames(
            frames=frames, frame_indices=indices, fps=fps / stride, fps_original=fps, stride=stride,
            start=start, end=end, n_frames_source=info.n_frames, backend=info.backend,
        )
    raise AssertionError("unreachable: the last backend either returns or raises")


def read_video_ref(
    ref: "VideoRef", target_fps: Optional[float], max_side: Optional[int] = None, backend: str = "auto"
) -> VideoFrames:
    """Read the part of a dataset video that a :class:`~viddiff.schema.VideoRef` points at."""
    return read_video(
        ref.path, target_fps=target_fps, frames_trim=ref.frames_trim,
        fps_original=ref.fps_original, max_side=max_side, backend=backend,
    )


async def read_pair(
    refs: tuple["VideoRef", "VideoRef"], target_fps: Optional[float], max_side: Optional[int] = None, backend: str = "auto"
) -> tuple[VideoFrames, VideoFrames]:
    """Both videos of a sample, decoded in worker threads; a pair of one video (the same-video check) is read once."""
    import asyncio

    def read(ref: "VideoRef") -> VideoFrames:
        return read_video_ref(ref, target_fps, max_side=max_side, backend=backend)

    if refs[0] == refs[1]:
        frames = await asyncio.to_thread(read, refs[0])
        return frames, frames
    a, b = await asyncio.gather(asyncio.to_thread(read, refs[0]), asyncio.to_thread(read, refs[1]))
    return a, b
