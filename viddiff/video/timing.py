"""When frames are shown, and which frames to sample at a target rate.

Constant-frame-rate sources are sampled by an integer stride (equal spacing in the source, as the
benchmark's reference code did). Phones often record at a variable rate (slower in low light,
bursts, dropped frames under load); there, counting frames says little about time, so frames are
picked by presentation time: for a target rate ``f``, the frames nearest to ``t0, t0 + 1/f, ...``.
Pure numpy, no I/O.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

CONSTANT_RATE_TOLERANCE = 0.25
"""Fraction of a frame interval a frame may sit off an evenly spaced grid and still count as constant rate
(absorbs timestamp rounding such as Matroska's whole milliseconds for 29.97 fps)."""


def is_constant_rate(times_s: np.ndarray, tolerance: float = CONSTANT_RATE_TOLERANCE) -> bool:
    """Whether every frame lies within ``tolerance`` intervals of the evenly spaced grid from the first to the last frame."""
    n = len(times_s)
    if n < 3:
        return True
    step = (float(times_s[-1]) - float(times_s[0])) / (n - 1)
    if not step > 0:
        return False
    grid = float(times_s[0]) + step * np.arange(n)
    return bool(np.max(np.abs(times_s - grid)) <= tolerance * step)


def nearest_to_grid(times_s: np.ndarray, target_fps: Optional[float]) -> np.ndarray:
    """Positions in ``times_s`` (sorted seconds) of the frames nearest to ``t0 + k / target_fps``.

    The grid runs from the first frame to the last one. Where the source has fewer frames than the
    grid (a gap), several grid points share a frame, which is kept once: positions are strictly
    increasing. A tie goes to the earlier frame. ``None`` keeps every frame.
    """
    n = len(times_s)
    if n == 0:
        raise ValueError("no frame times given")
    if target_fps is None:
        return np.arange(n, dtype=np.int64)
    if not target_fps > 0:
        raise ValueError(f"target fps must be > 0 or None, got {target_fps}")
    t0 = float(times_s[0])
    span = float(times_s[-1]) - t0
    grid = t0 + np.arange(math.floor(span * target_fps + 1e-9) + 1) / target_fps
    after = np.clip(np.searchsorted(times_s, grid, side="left"), 0, n - 1)
    before = np.clip(after - 1, 0, n - 1)
    pick = np.where(np.abs(times_s[before] - grid) <= np.abs(times_s[after] - grid), before, after)
    return np.unique(pick).astype(np.int64)


def mean_rate(times_s: np.ndarray) -> Optional[float]:
    """Frames per second over a sequence of times (``None`` for fewer than 2 frames or no elapsed time)."""
    if len(times_s) < 2:
        return None
    span = float(times_s[-1]) - float(times_s[0])
    return (len(times_s) - 1) / span if span > 0 else None


def clip_end_s(times_s: np.ndarray, end: int, fps: float) -> float:
    """When a clip ending before frame ``end`` (exclusive) stops being shown: that frame's time, or for the file's
    last frame its time plus the interval before it (``1 / fps`` for a single frame)."""
    if end < len(times_s):
        return float(times_s[end])
    last = float(times_s[-1])
    return last + (last - float(times_s[-2]) if len(times_s) > 1 else 1.0 / fps)


def segment_centres(n_frames: int, count: int) -> np.ndarray:
    """Positions of ``count`` frames spread over ``n_frames``: near the centre of each of ``count`` equal segments.

    The rule of the VidPair-Halluc release's frame sampling: with ``step = (n_frames - 1) / count``, frame
    ``k`` is ``int(step / 2) + round(step * k)`` (round half to even, as numpy rounds). A clip shorter
    than ``count`` frames repeats frames rather than sending fewer. Positions are relative to the clip's first frame.
    """
    if n_frames < 1:
        raise ValueError(f"a clip needs at least one frame, got {n_frames}")
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    step = (n_frames - 1) / count
    return int(step / 2) + np.round(step * np.arange(count)).astype(np.int64)
