"""Copies of a real clip that show the identical movement differently: the inputs of the pose trust benchmark.

Each variant changes only how the same movement reaches the reader (its encoding, size, framing, rotation
metadata, clock, direction of play or handedness), so any measured difference between a clip and its variant is
noise of the measuring chain, not of the movement. :class:`Variant` records what each copy claims (its frame
times, size, display rotation, how its time and sides map onto the source's), and the tests check the claims by
reading the files back. Written with PyAV (:func:`viddiff.video.write.write_video`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from viddiff.video import probe_video, read_video, scaled_size
from viddiff.video.write import write_video

SLOW_FACTOR = 1.5
"""Slow-motion copies last this many times as long (the issue's 1.5×)."""
REFERENCE_CRF = 18
"""H.264 quality of every copy except ``reencode``: visually lossless, so the change under test dominates."""
REENCODE_CRF = 30
"""H.264 quality of the ``reencode`` copy: a heavily compressed upload."""
VFR_JITTER = 0.3
"""Frame intervals of the variable-rate copy vary uniformly by up to this share around their mean."""
_REFERENCE_OPTIONS = {"crf": str(REFERENCE_CRF), "preset": "veryfast"}
PAD_SHARE = 0.25
"""Black bars added on each side, as a share of the frame's width (portrait) or height (landscape)."""

VARIANTS: tuple[str, ...] = (
    "reencode", "half_size", "pad", "rotate90", "rotate270", "slow_cfr", "slow_vfr", "reversed", "mirrored",
)
"""Every variant name, in the benchmark's order."""


@dataclass(frozen=True)
class Variant:
    """One copy of a clip and what it claims to be, relative to its source."""

    name: str
    path: Path
    source: Path
    times_s: np.ndarray
    """Presentation time of each frame in the copy (seconds since its first frame)."""
    duration_s: float
    """How long the copy lasts: its last frame's time plus one (mean) frame interval."""
    width: int
    height: int
    """Upright size a reader returns (after the display rotation)."""
    source_frames: np.ndarray
    """Source frame index of each frame of the copy."""
    display_rotation: int = 0
    """Degrees counter-clockwise the stored frames must be turned to stand upright (the display matrix)."""
    time_scale: float = 1.0
    """A movement lasting ``d`` seconds in the source lasts ``time_scale * d`` here."""
    reversed: bool = False
    """Frame ``i`` of the copy is frame ``n - 1 - i`` of the source."""
    mirrored: bool = False
    """Left and right are exchanged: the person's left in the source is their right here."""
    variable_frame_rate: bool = False
    description: str = ""


def _even(n: float) -> int:
    return max(2, int(round(n / 2)) * 2)


def _resize(frame: np.ndarray, width: int, height: int) -> np.ndarray:
    import cv2

    return cv2.resize(frame, (width, height), interpolation=cv2.INTER_AREA)


def _padded(frame: np.ndarray) -> np.ndarray:
    height, width = frame.shape[:2]
    if height >= width:  # portrait: bars left and right (pillarbox)
        bar = _even(PAD_SHARE * width)
        return np.pad(frame, ((0, 0), (bar, bar), (0, 0)))
    bar = _even(PAD_SHARE * height)  # landscape: bars above and below (letterbox)
    return np.pad(frame, ((bar, bar), (0, 0), (0, 0)))


def vfr_times(n_frames: int, fps: float, slow_factor: float, seed: int = 0) -> np.ndarray:
    """Uneven frame times whose mean interval is ``slow_factor / fps``, in whole milliseconds (the writer's clock),
    strictly increasing, starting at 0."""
    rng = np.random.default_rng(seed)
    mean_ms = 1000.0 * slow_factor / fps
    intervals = mean_ms * (1.0 + rng.uniform(-VFR_JITTER, VFR_JITTER, n_frames - 1))
    intervals *= mean_ms * (n_frames - 1) / intervals.sum()
    times_ms = np.concatenate([[0.0], np.cumsum(intervals)])
    times_ms = np.round(times_ms)
    for i in range(1, n_frames):
        times_ms[i] = max(times_ms[i], times_ms[i - 1] + 1)
    return times_ms / 1000.0


def build_variant(
    source: Path | str, name: str, out_dir: Path | str, *, slow_factor: float = SLOW_FACTOR,
    max_side: Optional[int] = None, reuse: bool = False,
) -> Variant:
    """Write the copy ``name`` (one of :data:`VARIANTS`) of ``source`` into ``out_dir`` and describe it.

    The source is decoded upright at its native rate (``max_side`` shrinks it first, for quick tests).
    ``reuse``: keep a copy already written there (benchmarks re-run on the same copies).
    """
    if name not in VARIANTS:
        raise ValueError(f"unknown variant {name!r}; choose one of {', '.join(VARIANTS)}")
    source = Path(source)
    path = Path(out_dir) / (f"{source.stem}.{name}.mp4" if max_side is None else f"{source.stem}.{max_side}.{name}.mp4")
    info = probe_video(source)
    fps, n = float(info.fps), info.n_frames
    width, height = scaled_size(info.width, info.height, max_side)
    plan = _plan(name, n, fps, width, height, slow_factor)
    if not (reuse and path.is_file()):
        video = read_video(source, max_side=max_side)
        if len(video.frames) != n:
            raise ValueError(f"{source}: decoded {len(video.frames)} frames, probed {n}")
        frames = video.frames[::-1] if plan.reversed else video.frames
        options = {**_REFERENCE_OPTIONS, "crf": str(REENCODE_CRF)} if name == "reencode" else _REFERENCE_OPTIONS
        partial = path.with_name(f".{path.stem}.{os.getpid()}.partial.mp4")  # a reader never sees half a file
        write_video(partial, (plan.transform(f) for f in frames), fps=plan.fps, options=options,
                    display_rotation=plan.display_rotation, times_s=plan.written_times)
        os.replace(partial, path)
    return Variant(
        name=name, path=path, source=source, times_s=plan.times_s, duration_s=plan.duration_s, width=plan.width,
        height=plan.height, display_rotation=plan.display_rotation, time_scale=plan.time_scale,
        reversed=plan.reversed, mirrored=name == "mirrored", variable_frame_rate=plan.written_times is not None,
        description=plan.description,
        source_frames=np.arange(n, dtype=np.int64)[::-1].copy() if plan.reversed else np.arange(n, dtype=np.int64),
    )


@dataclass(frozen=True)
class _Plan:
    transform: Callable[[np.ndarray], np.ndarray]
    fps: float
    times_s: np.ndarray
    duration_s: float
    width: int
    height: int
    description: str
    display_rotation: int = 0
    time_scale: float = 1.0
    reversed: bool = False
    written_times: Optional[np.ndarray] = None


def _plan(name: str, n: int, fps: float, width: int, height: int, slow_factor: float) -> _Plan:
    """How to write the copy ``name`` of an ``n``-frame ``width`` x ``height`` clip at ``fps``, and what it is."""
    same = dict(fps=fps, times_s=np.arange(n) / fps, duration_s=n / fps, width=width, height=height)
    if name == "reencode":
        return _Plan(lambda f: f, description=f"H.264 at CRF {REENCODE_CRF}", **same)
    if name == "half_size":
        w, h = _even(width / 2), _even(height / 2)
        return _Plan(lambda f: _resize(f, w, h), **{**same, "width": w, "height": h}, description=f"scaled to {w}x{h}")
    if name == "pad":
        h, w = _padded(np.zeros((height, width, 1), np.uint8)).shape[:2]
        return _Plan(_padded, **{**same, "width": w, "height": h}, description=f"black bars to {w}x{h}")
    if name in ("rotate90", "rotate270"):
        degrees = 90 if name == "rotate90" else 270
        # stored turned clockwise by `degrees`; the display matrix turns it back counter-clockwise
        return _Plan(lambda f: np.ascontiguousarray(np.rot90(f, -degrees // 90)), display_rotation=degrees, **same,
                     description=f"stored turned, display matrix {degrees}°")
    if name == "slow_cfr":
        slow_fps = fps / slow_factor
        return _Plan(lambda f: f, fps=slow_fps, times_s=np.arange(n) / slow_fps, duration_s=n / slow_fps, width=width,
                     height=height, time_scale=slow_factor, description=f"same frames at {slow_fps:g} fps")
    if name == "slow_vfr":
        times = vfr_times(n, fps, slow_factor)
        return _Plan(lambda f: f, fps=fps / slow_factor, times_s=times, duration_s=float(times[-1]) + slow_factor / fps,
                     width=width, height=height, time_scale=slow_factor, written_times=times,
                     description=f"same frames, uneven intervals (±{VFR_JITTER:.0%}), {slow_factor:g}× as long")
    if name == "reversed":
        return _Plan(lambda f: f, reversed=True, description="played backwards", **same)
    return _Plan(lambda f: np.ascontiguousarray(f[:, ::-1]), description="mirrored left to right", **same)


def side_by_side(
    left: Path | str, right: Path | str, path: Path | str, *, half_width: int = 884, height: int = 498
) -> Path:
    """Two clips scaled to ``half_width`` x ``height`` each and placed side by side (the issue's 1768x498 frame),
    as long as the shorter one, at the left clip's rate."""
    a, b = read_video(left), read_video(right)
    n = min(len(a.frames), len(b.frames))
    frames = (
        np.concatenate([_resize(a.frames[i], half_width, height), _resize(b.frames[i], half_width, height)], axis=1)
        for i in range(n)
    )
    return write_video(path, frames, fps=float(a.fps_original), options=_REFERENCE_OPTIONS)


def resized_copy(source: Path | str, path: Path | str, width: int, height: int) -> Path:
    """``source`` scaled to ``width`` x ``height`` (one half of :func:`side_by_side`, alone)."""
    video = read_video(source)
    frames = (_resize(f, width, height) for f in video.frames)
    return write_video(path, frames, fps=float(video.fps_original), options=_REFERENCE_OPTIONS)
