"""Read the frames of a video (file or image directory) at a target fps, within a trim, upright.

Only the sampled frames are ever decoded into arrays, so memory scales with the
number of samples, not with the video length (long surgery videos at 30 fps). A caller
that needs the sampled frames only small (CLIP embeds 224-px crops) passes ``shrink``:
each frame is shrunk as it is decoded and the full-size one dropped, and the few frames
needed at full size later (keyframes) are decoded again by :func:`with_stills`.
Files are probed with PyAV first; decord reads the constant-orientation H.264/HEVC/MPEG-4
files it handles exactly (it is fast at random access), PyAV everything else (VP9, AV1,
rotated phone clips) and whatever decord fails on.

Frames come out as the video is meant to be seen: a display matrix (phones: portrait clips
stored landscape) or EXIF orientation (image folders) is applied. Constant-frame-rate sources
are sampled by an integer stride; variable-frame-rate files by presentation time, and
``VideoFrames.times_s`` are true seconds either way.

Frame indices always refer to the whole source (a trim does not renumber), so
keyframes chosen downstream can be mapped back to the original video. A trim counts
frames in presentation order, as ffprobe lists them; for a variable-frame-rate file its
start frame is time 0 of the sampled sequence and its frames keep their own timestamps.
"""

from __future__ import annotations

import contextvars
import logging
import math
import threading
from contextlib import closing
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Callable, Generator, Iterator, Mapping, Optional, Protocol, Sequence, Union

import numpy as np

from viddiff.console import ONCE_PER_RUN
from viddiff.errors import VideoError
from viddiff.video.orientation import IDENTITY, Orientation
from viddiff.video.sources import (
    IMAGE_SUFFIXES,
    DecordSource,
    FileProbe,
    ImageDirSource,
    PyAVSource,
    decord_unfit_reason,
    import_decord,
    probe_file,
)
from viddiff.video.timing import clip_end_s, is_constant_rate, mean_rate, nearest_to_grid, segment_centres

if TYPE_CHECKING:
    from viddiff.schema import VideoRef

logger = logging.getLogger(__name__)

PathLike = Union[str, Path]
Trim = Optional[Sequence[Optional[int]]]
_Frames = Generator[np.ndarray, None, None]
Shrink = Callable[[np.ndarray], np.ndarray]
"""A frame (upright, at ``max_side``) to the smaller frame a caller keeps (e.g. CLIP's resize and crop)."""

__all__ = [
    "BACKENDS", "IMAGE_SUFFIXES", "Sampling", "VideoFrames", "VideoInfo", "compute_stride", "probe_video", "read_pair",
    "read_video", "read_video_ref", "read_video_ref_sampled", "read_video_sampled", "read_videos", "read_videos_sampled",
    "resolve_trim", "scaled_size", "thumbnail", "unshrunk", "with_stills",
]
BACKENDS = ("auto", "decord", "pyav")


class _SaidForPair:
    """Messages already logged while reading one pair; both videos' reader threads share it."""

    def __init__(self) -> None:
        self._said: set[str] = set()
        self._lock = threading.Lock()

    def first(self, message: str) -> bool:
        with self._lock:
            if message in self._said:
                return False
            self._said.add(message)
            return True


_SAID_FOR_PAIR: contextvars.ContextVar[Optional[_SaidForPair]] = contextvars.ContextVar(
    "viddiff_said_for_pair", default=None
)


def _log_per_video(level: int, message: str, *args: object) -> None:
    """A message that comes up for each video the same way: once per pair (:func:`read_pair`), and once per run
    on the ``viddiff`` console (``ONCE_PER_RUN``)."""
    said = _SAID_FOR_PAIR.get()
    if said is not None and not said.first(message % args):
        return
    logger.log(level, message, *args, extra=ONCE_PER_RUN)
_FPS_TOLERANCE = 0.01  # relative disagreement between caller and container fps that is reported
_STRIDE_TOLERANCE = 1e-6


@dataclass(frozen=True)
class VideoInfo:
    """What a source holds, as the viewer sees it (upright size) and as ffprobe counts it."""

    path: str
    fps: float
    n_frames: int
    width: int
    height: int
    backend: str
    """The reader ``read_video`` would use first ('decord', 'pyav' or 'images')."""
    codec: str = ""
    orientation: Orientation = IDENTITY
    """Display transform applied to the stored frames (from the display matrix)."""
    variable_frame_rate: bool = False


@dataclass(frozen=True)
class FullSize:
    """How frames of a source were read before they were shrunk: enough to decode some again at that size."""

    path: str
    fps_original: Optional[float]
    max_side: Optional[int]
    backend: str
    """The reader that decoded the shrunk frames: the same one decodes the full-size ones, pixel for pixel."""
    width: int
    height: int
    probe: Optional[FileProbe] = None
    """The file's probe (``None`` for an image directory): decoding again needs no second look at the file."""


@dataclass(frozen=True)
class VideoFrames:
    """The sampled frames of a source, where each came from, and when it is shown."""

    frames: np.ndarray
    """(N, H, W, 3) uint8 RGB, upright, only the sampled frames (shrunk when ``full_size`` is set)."""
    frame_indices: np.ndarray
    """(N,) int64 index of each frame in the whole source."""
    fps: float
    """Effective fps of the sampled sequence (``fps_original / stride``; variable rate: its average)."""
    fps_original: float
    stride: Optional[int]
    """Integer source stride; ``None`` when frames were picked by presentation time (variable frame rate)."""
    start: int
    """Trim start actually applied (inclusive)."""
    end: int
    """Trim end actually applied (exclusive)."""
    n_frames_source: int
    backend: str
    frame_times_s: Optional[np.ndarray] = None
    """Presentation times of a variable-rate source's sampled frames, since the trim start (else ``None``)."""
    presentation_span_s: Optional[tuple[float, float]] = None
    """A variable-rate clip's (start in the file, duration) in presentation seconds (else ``None``: counted frames)."""
    full_size: Optional[FullSize] = None
    """Set when ``frames`` were shrunk as they were decoded: how to decode frames at the size read (``stills``)."""
    stills: Mapping[int, np.ndarray] = field(default_factory=dict)
    """Frames at the size read, by source frame index, for shrunk ``frames`` (:func:`with_stills`)."""

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) of the frames as read (at ``max_side``), whether or not ``frames`` were shrunk."""
        if self.full_size is not None:
            return self.full_size.width, self.full_size.height
        return int(self.frames.shape[2]), int(self.frames.shape[1])

    @property
    def variable_frame_rate(self) -> bool:
        return self.frame_times_s is not None

    @property
    def offset_s(self) -> float:
        """Where the clip starts in the file, in presentation seconds (what a player adds to clip times)."""
        if self.presentation_span_s is not None:
            return self.presentation_span_s[0]
        return self.start / self.fps_original

    @property
    def duration_s(self) -> float:
        """How long the clip is shown: from its first frame to the end of its last one (the trim's end)."""
        if self.presentation_span_s is not None:
            return self.presentation_span_s[1]
        return (self.end - self.start) / self.fps_original

    @property
    def times_s(self) -> np.ndarray:
        """Seconds of each sampled frame since the trim start: true presentation times."""
        if self.frame_times_s is not None:
            return self.frame_times_s
        return (self.frame_indices - self.start) / self.fps_original

    def at(self, frame_indices: Sequence[int]) -> list[np.ndarray]:
        """The sampled frames with these source frame indices at the size read (keyframes are stored by frame
        index); for shrunk frames, from ``stills``."""
        if self.full_size is not None:
            try:
                return [self.stills[int(f)] for f in frame_indices]
            except KeyError as exc:
                raise ValueError(
                    f"frame {exc.args[0]} was kept only shrunk; decode it at full size first (with_stills)"
                ) from None
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
        _log_per_video(
            logging.WARNING, "target fps %g exceeds the video's %g fps; using every frame (%g fps)",
            target_fps, fps_original, fps_original,
        )
    elif abs(ratio - round(ratio)) > _STRIDE_TOLERANCE:
        _log_per_video(
            logging.WARNING, "target fps %g is not an integer divisor of %g fps; using stride %d (%g fps)",
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


def thumbnail(max_side: int) -> Shrink:
    """A ``shrink`` to at most ``max_side`` pixels: for readers that show only a few frames whole (:func:`with_stills`)."""
    from PIL import Image

    def shrink(frame: np.ndarray) -> np.ndarray:
        size = scaled_size(frame.shape[1], frame.shape[0], max_side)
        return np.asarray(Image.fromarray(np.ascontiguousarray(frame)).resize(size, Image.Resampling.BICUBIC))

    return shrink


def scaled_size(width: int, height: int, max_side: Optional[int]) -> tuple[int, int]:
    """(width, height) with the longer side at most ``max_side``, aspect preserved."""
    if max_side is None or max(width, height) <= max_side:
        return width, height
    scale = max_side / max(width, height)
    return max(1, round(width * scale)), max(1, round(height * scale))


# --------------------------------------------------------------------------- sources


class _Source(Protocol):
    """An opened video: a backend name and a way to decode chosen frames (sorted indices), upright, in order."""

    backend: str

    def iter_frames(self, indices: np.ndarray) -> _Frames:
        """Yield one full-resolution upright RGB frame per index."""


@dataclass(frozen=True)
class _Plan:
    """Which frames of a source to decode and the times they stand for."""

    indices: np.ndarray
    start: int
    end: int
    fps: float
    fps_original: float
    stride: Optional[int]
    frame_times_s: Optional[np.ndarray]
    presentation_span_s: Optional[tuple[float, float]] = None


def _check_path(path: PathLike) -> Path:
    path = Path(path)
    if not path.exists():
        raise VideoError(f"{path}: no such video file or image directory; check the path")
    return path


def _check_backend(backend: str) -> None:
    if backend not in BACKENDS:
        raise VideoError(f"video backend {backend!r} is unknown; use one of {', '.join(BACKENDS)}")


def _require_decord() -> ModuleType:
    decord = import_decord()
    if decord is None:
        raise VideoError("video backend 'decord' is not installed; pip install decord, or use backend 'pyav'")
    return decord


def _checked_fps(path: str, container_fps: float, fps_original: Optional[float], variable: bool) -> float:
    """The container's fps, warning when the caller's differs; the caller's only when the file has none.

    A variable-rate file is sampled by time, so a nominal rate given for it is not checked.
    """
    if container_fps <= 0:
        if fps_original is None:
            raise VideoError(f"{path}: the file states no frame rate; give it (fps_original in a dataset row or the API, --fps-original on the command line)")
        return float(fps_original)
    if not variable and fps_original is not None and abs(fps_original - container_fps) > _FPS_TOLERANCE * container_fps:
        logger.warning(
            "%s: given fps_original %g disagrees with the container's %g fps; using %g",
            path, fps_original, container_fps, container_fps,
        )
    return container_fps


def _variable_times(probe: FileProbe) -> Optional[np.ndarray]:
    """The frames' presentation times when they are not evenly spaced (``None``: constant rate or unknown)."""
    times = probe.times_s
    if times is None or is_constant_rate(times):
        return None
    return times


def _plan(
    path: str, n_frames: int, fps: float, times_s: Optional[np.ndarray], frames_trim: Trim, target_fps: Optional[float]
) -> _Plan:
    """Frames to decode: an integer stride for constant-rate sources, nearest to a time grid for variable ones."""
    start, end = resolve_trim(frames_trim, n_frames, path)
    if times_s is None:
        stride = compute_stride(fps, target_fps)
        indices = np.arange(start, end, stride, dtype=np.int64)
        return _Plan(indices, start, end, fps / stride, fps, stride, None)
    if target_fps is not None and not target_fps > 0:
        raise VideoError(f"target fps must be > 0 or None (every frame), got {target_fps}")
    trimmed = times_s[start:end]
    positions = nearest_to_grid(trimmed, target_fps)
    frame_times = trimmed[positions] - trimmed[0]
    _log_per_video(
        logging.INFO, "variable frame rate: frames sampled by presentation time, nearest to every %s",
        "frame" if target_fps is None else f"{1 / target_fps:.3g} s",
    )
    sampled_fps = mean_rate(frame_times) or target_fps or fps
    span = (float(trimmed[0]), clip_end_s(times_s, end, fps) - float(trimmed[0]))
    return _Plan(start + positions, start, end, sampled_fps, fps, None, frame_times, span)


def _count_plan(path: str, n_frames: int, fps: float, frames_trim: Trim, count: int) -> _Plan:
    """Exactly ``count`` frames of the trimmed clip, one near the centre of each of ``count`` equal segments
    (:func:`~viddiff.video.timing.segment_centres`), picked by frame index whatever the frame rate."""
    start, end = resolve_trim(frames_trim, n_frames, path)
    indices = start + segment_centres(end - start, count)
    duration_s = (end - start) / fps
    return _Plan(indices, start, end, count / duration_s, fps, None, None)


@dataclass(frozen=True)
class Sampling:
    """One set of frames a caller wants from a video (:func:`read_video_sampled` reads several in one decode):
    as :func:`read_video`'s ``target_fps``, ``count``, ``max_side`` and ``shrink``."""

    target_fps: Optional[float] = None
    max_side: Optional[int] = None
    shrink: Optional[Shrink] = None
    count: Optional[int] = None


class _Stack:
    """One sampling's frames, stacked as they are decoded: each resized to its ``max_side`` (and shrunk), so
    full-size frames never pile up; a frame wanted at several positions (a count plan) is decoded once."""

    def __init__(self, indices: np.ndarray, max_side: Optional[int], shrink: Optional[Shrink], path: str):
        self.distinct, self.positions = np.unique(indices, return_inverse=True)
        self.repeats = len(self.distinct) < len(indices)
        self.max_side, self.shrink, self.path = max_side, shrink, path
        self.out: Optional[np.ndarray] = None
        self.filled = 0
        self.read_size = (0, 0)

    def wants(self, index: int) -> bool:
        return self.filled < len(self.distinct) and int(self.distinct[self.filled]) == index

    def add(self, frame: np.ndarray, resized: dict[Optional[int], np.ndarray]) -> None:
        """Keep ``frame`` (full size, upright); ``resized`` holds this frame at each ``max_side`` already made,
        so samplings of one size share one resize."""
        if self.max_side not in resized:
            resized[self.max_side] = _resized(frame, self.max_side)
        kept = resized[self.max_side]
        self.read_size = (int(kept.shape[1]), int(kept.shape[0]))
        if self.shrink is not None:
            kept = self.shrink(kept)
        if self.out is None:
            self.out = np.empty((len(self.distinct), *kept.shape), dtype=np.uint8)
        elif kept.shape != self.out.shape[1:]:
            raise VideoError(f"{self.path}: frame sizes change within the video; re-export it at one size")
        self.out[self.filled] = kept
        self.filled += 1

    def result(self) -> tuple[np.ndarray, tuple[int, int]]:
        if self.out is None or self.filled < len(self.distinct):
            raise VideoError(f"{self.path}: the decoder returned fewer frames than requested; the file may be corrupt")
        return (self.out[self.positions] if self.repeats else self.out), self.read_size


def _resized(frame: np.ndarray, max_side: Optional[int]) -> np.ndarray:
    from PIL import Image

    height, width = frame.shape[:2]
    size = scaled_size(width, height, max_side)
    if size == (width, height):
        return frame
    return np.asarray(Image.fromarray(np.ascontiguousarray(frame)).resize(size, Image.Resampling.BICUBIC))


def _collect(frames: _Frames, union: np.ndarray, stacks: Sequence[_Stack]) -> None:
    """Hand each decoded frame (one per index of ``union``, in order) to the stacks that want it, then stop the
    decoder (and close the file)."""
    with closing(frames):
        for index, frame in zip(union.tolist(), frames):
            resized: dict[Optional[int], np.ndarray] = {}
            for stack in stacks:
                if stack.wants(index):
                    stack.add(frame, resized)


def _check_max_side(max_side: Optional[int]) -> None:
    if max_side is not None and max_side < 1:
        raise VideoError(f"max_side must be a positive number of pixels or None, got {max_side}")


def _file_sources(probe: FileProbe, backend: str) -> Iterator[_Source]:
    """Readers to try in order: the decoder the probe calls for, then (in 'auto' mode) PyAV if decord fails.

    decord is only chosen for files it reads exactly as they are meant to be seen, so the user
    never depends on a decord failure to get the right frames.
    """
    if backend == "pyav":
        yield PyAVSource(probe)
        return
    if backend == "decord":
        try:
            source = DecordSource(probe, _require_decord())
        except VideoError:
            raise
        except Exception as exc:
            raise VideoError(f"{probe.path}: decord cannot open it (codec {probe.codec}: {exc}); use backend 'pyav' or 'auto'") from exc
        yield source
        return
    decord = import_decord()
    reason = "decord is not installed" if decord is None else decord_unfit_reason(probe)
    if reason is None:
        try:
            source = DecordSource(probe, decord)
        except Exception as exc:
            logger.debug("%s: decord cannot open it (%s); reading with PyAV", probe.path, exc)
        else:
            yield source
    else:
        logger.debug("%s: reading with PyAV: %s", probe.path, reason)
    yield PyAVSource(probe)


def probe_video(path: PathLike, fps_original: Optional[float] = None, backend: str = "auto") -> VideoInfo:
    """Frame count, fps, upright size, codec and timing of a video file or image directory, decoding one frame at most.

    For a file, ``fps`` is the container's (``fps_original`` is only a cross-check, or the fallback
    when the file states no rate) and ``n_frames`` is what ffprobe counts, whichever backend would
    decode it; ``backend`` names the reader ``read_video`` would use first.
    """
    _check_backend(backend)
    path = _check_path(path)
    if path.is_dir():
        images = _image_dir(path, fps_original)
        return VideoInfo(str(path), float(fps_original), images.n_frames, images.width, images.height, "images")
    probe = probe_file(path)
    variable = _variable_times(probe) is not None
    fps = _checked_fps(str(path), probe.fps, fps_original, variable)
    first = next(_file_sources(probe, backend))
    return VideoInfo(
        str(path), fps, probe.n_frames, probe.width, probe.height, first.backend,
        codec=probe.codec, orientation=probe.orientation, variable_frame_rate=variable,
    )


def _image_dir(path: Path, fps_original: Optional[float]) -> ImageDirSource:
    if fps_original is None:
        raise VideoError(
            f"{path}: is an image directory, which has no frame rate; give its fps (fps_original in a dataset row or the API, --fps-original on the command line)"
        )
    return ImageDirSource(path)


def read_video(
    path: PathLike,
    target_fps: Optional[float] = None,
    frames_trim: Trim = None,
    fps_original: Optional[float] = None,
    max_side: Optional[int] = None,
    backend: str = "auto",
    count: Optional[int] = None,
    shrink: Optional[Shrink] = None,
) -> VideoFrames:
    """Decode the sampled frames of a video file or image directory, upright, within a trim.

    Constant-rate sources give the frames ``range(start, end, stride)``; variable-rate files give
    the frames nearest to every ``1 / target_fps`` seconds from the trim start (``target_fps=None``
    keeps every frame). ``count`` instead takes exactly that many frames spread over the clip by index
    (:func:`~viddiff.video.timing.segment_centres`; ``target_fps`` is then ignored). Directories of
    images always use the image reader (whatever ``backend`` says) and need ``fps_original``. Trim and
    fps mistakes raise at once; in 'auto' mode a decord failure retries the read with PyAV.
    ``shrink``: keep each frame only as ``shrink`` makes it (memory bounded by the shrunk size, whatever the
    video's resolution); :func:`with_stills` decodes chosen frames again at the size read.
    """
    sampling = Sampling(target_fps=target_fps, max_side=max_side, shrink=shrink, count=count)
    return read_video_sampled(path, (sampling,), frames_trim, fps_original, backend)[0]


def read_video_sampled(
    path: PathLike,
    samplings: Sequence[Sampling],
    frames_trim: Trim = None,
    fps_original: Optional[float] = None,
    backend: str = "auto",
) -> tuple[VideoFrames, ...]:
    """Several samplings of one video (say CLIP's frames at 4 fps and the pose's at 15 fps) from one decode:
    each is :func:`read_video` with that sampling's settings, frame for frame and pixel for pixel, but the
    file is decoded once for all of them (docs/pose.md, "Cost"). A shrinking sampling makes the whole read
    streaming (PyAV in 'auto' mode), which decodes the files decord is chosen for to the same pixels."""
    _check_backend(backend)
    for sampling in samplings:
        _check_max_side(sampling.max_side)
    path = _check_path(path)
    sources: Iterator[_Source]
    probe: Optional[FileProbe] = None
    if path.is_dir():
        images = _image_dir(path, fps_original)
        plans = [
            _count_plan(str(path), images.n_frames, float(fps_original), frames_trim, s.count) if s.count is not None
            else _plan(str(path), images.n_frames, float(fps_original), None, frames_trim, s.target_fps)
            for s in samplings
        ]
        n_frames, sources = images.n_frames, iter([images])
    else:
        probe = probe_file(path)
        times = _variable_times(probe)
        fps = _checked_fps(str(path), probe.fps, fps_original, times is not None)
        plans = [
            _count_plan(str(path), probe.n_frames, fps, frames_trim, s.count) if s.count is not None
            else _plan(str(path), probe.n_frames, fps, times, frames_trim, s.target_fps)
            for s in samplings
        ]
        shrinking = any(s.shrink is not None for s in samplings)
        n_frames, sources = probe.n_frames, _file_sources(probe, _streaming_backend(backend, shrinking))
    decoded, used = _decode(path, sources, [(p.indices, s.max_side, s.shrink) for p, s in zip(plans, samplings)], backend)
    return tuple(
        VideoFrames(
            frames=frames, frame_indices=plan.indices, fps=plan.fps, fps_original=plan.fps_original,
            stride=plan.stride, start=plan.start, end=plan.end, n_frames_source=n_frames,
            backend=used, frame_times_s=plan.frame_times_s, presentation_span_s=plan.presentation_span_s,
            full_size=None if s.shrink is None else FullSize(str(path), fps_original, s.max_side, used, width, height, probe),
        )
        for plan, s, (frames, (width, height)) in zip(plans, samplings, decoded)
    )


def _streaming_backend(backend: str, shrinking: bool) -> str:
    """The reader for a shrinking read: in 'auto' mode PyAV, which decodes one frame at a time.

    decord hands out batches of full-size frames; shrinking each as it arrives leaves the batches' freed
    memory cut up by the small frames kept in between, so the process grows by about a full-size frame per
    frame read (a process reading 600 sampled 1080p frames peaked at 5.4 GB with decord, 0.9 GB with PyAV,
    0.8 GB of it imports). Both decode
    the files decord is chosen for to the same pixels.
    """
    return "pyav" if shrinking and backend == "auto" else backend


def _decode(
    path: Path,
    sources: Iterator[_Source],
    wanted: Sequence[tuple[np.ndarray, Optional[int], Optional[Shrink]]],
    backend: str,
) -> tuple[list[tuple[np.ndarray, tuple[int, int]]], str]:
    """For each ``(indices, max_side, shrink)``: its frames and the (width, height) read, from the first reader
    that decodes them, which decodes the union of the indices once; also the reader's name."""
    union = np.unique(np.concatenate([indices for indices, _, _ in wanted]))
    for source in sources:
        stacks = [_Stack(indices, max_side, shrink, str(path)) for indices, max_side, shrink in wanted]
        try:
            _collect(source.iter_frames(union), union, stacks)
            results = [stack.result() for stack in stacks]
        except Exception as exc:
            if source.backend == "decord" and backend == "auto":
                logger.debug("%s: decord failed (%s: %s); reading with PyAV", path, type(exc).__name__, exc)
                continue
            if isinstance(exc, VideoError):
                raise
            raise VideoError(
                f"{path}: {source.backend} failed while decoding ({type(exc).__name__}: {exc}); "
                "the file may be corrupt" + ("; try backend 'pyav'" if source.backend == "decord" else "")
            ) from exc
        return results, source.backend
    raise AssertionError("unreachable: the last reader either returns or raises")


def with_stills(video: VideoFrames, frame_indices: Sequence[int]) -> VideoFrames:
    """``video`` with these sampled frames also at the size read (``stills``): what a shrunk read drops and a
    consumer of a few whole frames (the differencer's keyframes, a report) needs. They are decoded again by the
    reader that decoded the shrunk ones, so they are the very frames an unshrunk read keeps."""
    full = video.full_size
    if full is None:
        return video
    sampled = set(video.frame_indices.tolist())
    wanted = sorted({int(f) for f in frame_indices} - set(video.stills))
    unsampled = [f for f in wanted if f not in sampled]
    if unsampled:
        raise ValueError(f"frame {unsampled[0]} was not sampled from this video")
    if not wanted:
        return video
    frames = _decode_again(full, np.asarray(wanted, dtype=np.int64))
    return replace(video, stills={**video.stills, **dict(zip(wanted, frames))})


def unshrunk(video: VideoFrames) -> VideoFrames:
    """``video`` with every sampled frame at the size read, for a consumer that measures on all of them (pose
    estimation); ``video`` itself when it was not shrunk."""
    if video.full_size is None:
        return video
    return replace(video, frames=_decode_again(video.full_size, video.frame_indices), full_size=None, stills={})


def _decode_again(full: FullSize, indices: np.ndarray) -> np.ndarray:
    path = Path(full.path)
    sources: Iterator[_Source]
    if full.backend == "images":
        sources = iter([_image_dir(path, full.fps_original)])
    else:
        sources = _file_sources(full.probe or probe_file(path), full.backend)
    [(frames, _)], _ = _decode(path, sources, [(indices, full.max_side, None)], full.backend)
    return frames


def read_video_ref(
    ref: "VideoRef",
    target_fps: Optional[float],
    max_side: Optional[int] = None,
    backend: str = "auto",
    count: Optional[int] = None,
    shrink: Optional[Shrink] = None,
) -> VideoFrames:
    """Read the part of a dataset video that a :class:`~viddiff.schema.VideoRef` points at."""
    sampling = Sampling(target_fps=target_fps, max_side=max_side, shrink=shrink, count=count)
    return read_video_ref_sampled(ref, (sampling,), backend)[0]


def read_video_ref_sampled(ref: "VideoRef", samplings: Sequence[Sampling], backend: str = "auto") -> tuple[VideoFrames, ...]:
    """:func:`read_video_sampled` on the part of a dataset video that ``ref`` points at."""
    return read_video_sampled(ref.path, samplings, frames_trim=ref.frames_trim, fps_original=ref.fps_original, backend=backend)


async def read_pair(
    refs: tuple["VideoRef", "VideoRef"],
    target_fps: Optional[float],
    max_side: Optional[int] = None,
    backend: str = "auto",
    shrink: Optional[Shrink] = None,
) -> tuple[VideoFrames, VideoFrames]:
    """Both videos of a sample, decoded in worker threads; a pair of one video (the same-video check) is read once.
    A warning that concerns both videos alike (the inexact fps stride) is said once for the pair."""
    a, b = await read_videos(refs, target_fps, max_side, backend, shrink=shrink)
    return a, b


async def read_videos(
    refs: Sequence["VideoRef"],
    target_fps: Optional[float],
    max_side: Optional[int] = None,
    backend: str = "auto",
    count: Optional[int] = None,
    shrink: Optional[Shrink] = None,
) -> tuple[VideoFrames, ...]:
    """The videos of a sample (one for a single-video task, two for a pair), each read once, in worker threads;
    ``count``: exactly that many frames of each (see :func:`read_video`). A warning that concerns all of them
    alike (the inexact fps stride) is said once for the sample."""
    sampling = Sampling(target_fps=target_fps, max_side=max_side, shrink=shrink, count=count)
    read = await read_videos_sampled(refs, lambda ref: (sampling,), backend)
    return tuple(frames for frames, in read)


async def read_videos_sampled(
    refs: Sequence["VideoRef"], samplings: Callable[["VideoRef"], Sequence[Sampling]], backend: str = "auto"
) -> tuple[tuple[VideoFrames, ...], ...]:
    """Each video of a sample decoded once, in worker threads, for all of ``samplings(ref)`` at once
    (:func:`read_video_sampled`); the same video twice is read once. A warning that concerns all of them alike
    (the inexact fps stride) is said once for the sample."""
    import asyncio

    distinct: list["VideoRef"] = []
    for ref in refs:
        if ref not in distinct:
            distinct.append(ref)
    token = _SAID_FOR_PAIR.set(_SaidForPair())  # this task's context; the reader threads get copies of it
    try:
        read = await asyncio.gather(
            *(asyncio.to_thread(read_video_ref_sampled, ref, samplings(ref), backend) for ref in distinct)
        )
    finally:
        _SAID_FOR_PAIR.reset(token)
    return tuple(read[distinct.index(ref)] for ref in refs)
