"""One statistic of one kinematics series over a window of real time, what it rests on, and how noisy it is.

A statistic is read from the series after a running median over a short time (:func:`running_median`), so a
single-frame glitch never becomes an extreme, and the report's curve is that same series, so the quoted value
lies on it. Means are over real time: each frame weighs as long as it is shown (halfway to its neighbours),
whatever the frame rate or the stage boundaries. Every reading says how many frames and seconds it rests on,
and two parts of its uncertainty that come from the series itself: the frame-to-frame noise
(:func:`frame_noise`) and, for an extreme, how far the true peak may lie between two sampled frames.
Pure numpy, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Reading:
    """A statistic over a window, with its support and its series-borne uncertainty (± half-widths)."""

    value: Optional[float]
    frames: int
    """Samples with a value inside the window."""
    seconds: float
    """Time those samples cover inside the window."""
    used: np.ndarray
    """(T,) which samples entered the statistic."""
    at_s: Optional[float] = None
    """When an extreme, a start or an end was read."""
    frame_noise: float = 0.0
    sampling: float = 0.0


def inside(times_s: np.ndarray, start: float, end: float) -> np.ndarray:
    """(T,) samples in ``[start, end)``."""
    return (times_s >= start - _TOLERANCE) & (times_s < end - _TOLERANCE)


def window_samples(times_s: np.ndarray, window_s: float) -> int:
    """The odd number of samples (at least 3) a running median over ``window_s`` seconds spans at this rate."""
    step = float(np.median(np.diff(times_s))) if len(times_s) > 1 else 0.0
    n = int(round(window_s / step)) if step > 0 else 3
    return max(3, n + (1 - n % 2))


def running_median(values: np.ndarray, width: int) -> np.ndarray:
    """Median of the finite values among the ``width`` samples centred on each sample; gaps stay gaps.

    Near a gap or an end fewer values remain; a sample keeps its value only when at least two values are left,
    so a lone value between gaps (which nothing can confirm) stays as it is."""
    values = np.asarray(values, dtype=np.float64)
    half = width // 2
    out = np.full(values.shape, np.nan)
    for t in np.flatnonzero(np.isfinite(values)):
        around = values[max(0, t - half): t + half + 1]
        around = around[np.isfinite(around)]
        out[t] = float(np.median(around)) if len(around) >= 2 else values[t]
    return out


def frame_noise(values: np.ndarray, smoothing_frames: int = 1) -> float:
    """Standard deviation of the frame-to-frame jitter of a (smoothed) series, from its third differences.

    Third differences cancel any motion that is locally a parabola, so what remains is mostly noise; the
    median absolute deviation ignores the few places where the movement itself jerks. The series was smoothed
    by a moving average over ``smoothing_frames`` positions, which correlates neighbouring samples: the factor
    that relates third differences to the smoothed noise is computed from that kernel. 0 with too few samples.
    """
    values = np.asarray(values, dtype=np.float64)
    if len(values) < 4:
        return 0.0
    d3 = values[3:] - 3 * values[2:-1] + 3 * values[1:-2] - values[:-3]
    d3 = d3[np.isfinite(d3)]
    if len(d3) < 3:
        return 0.0
    spread = 1.4826 * float(np.median(np.abs(d3 - np.median(d3))))
    kernel = np.ones(max(1, smoothing_frames)) / max(1, smoothing_frames)
    gain = float(np.sum(np.convolve(kernel, [1.0, -3.0, 3.0, -1.0]) ** 2))  # var(d3) / var(raw noise)
    return spread / np.sqrt(gain) * np.sqrt(float(np.sum(kernel ** 2)))  # the smoothed series' noise


def coverage(times_s: np.ndarray, start: float, end: float) -> np.ndarray:
    """(T,) how long each sample stands for inside ``[start, end)``: from halfway to its previous sample to
    halfway to its next one, the first from ``start`` and the last until ``end``; 0 outside the window."""
    times = np.asarray(times_s, dtype=np.float64)
    weights = np.zeros(len(times))
    rows = np.flatnonzero(inside(times, start, end))
    if not len(rows):
        return weights
    t = times[rows]
    mids = (t[1:] + t[:-1]) / 2
    lower = np.concatenate([[start], mids])
    upper = np.concatenate([mids, [end]])
    weights[rows] = np.clip(upper - lower, 0.0, None)
    return weights


def read_statistic(
    statistic: str,
    times_s: np.ndarray,
    series: np.ndarray,
    start: float,
    end: float,
    *,
    noise: float,
    smoothing_frames: int,
    edge_samples: int,
) -> Reading:
    """``statistic`` (mean, min, max, range, start, end) of the robust ``series`` over ``[start, end)``.

    ``noise``: the series' frame noise (:func:`frame_noise`); ``edge_samples``: how many samples a start or an
    end is the median of (the running median's width)."""
    times = np.asarray(times_s, dtype=np.float64)
    series = np.asarray(series, dtype=np.float64)
    weights = coverage(times, start, end)
    valid = inside(times, start, end) & np.isfinite(series)
    rows = np.flatnonzero(valid)
    frames, seconds = len(rows), float(weights[rows].sum())
    if not frames:
        return Reading(None, 0, 0.0, valid)
    independent = max(1.0, frames / max(1, smoothing_frames))  # smoothed neighbours are not independent
    if statistic == "mean":
        w = weights[rows] if seconds > 0 else np.ones(frames)
        value = float(np.sum(w * series[rows]) / np.sum(w))
        return Reading(value, frames, seconds, valid, frame_noise=noise / np.sqrt(independent))
    if statistic in ("start", "end"):
        edge = rows[:edge_samples] if statistic == "start" else rows[-edge_samples:]
        used = np.zeros(len(series), dtype=bool)
        used[edge] = True
        share = max(1.0, len(edge) / max(1, smoothing_frames))
        at = float(times[edge[0] if statistic == "start" else edge[-1]])
        return Reading(float(np.median(series[edge])), len(edge), float(weights[edge].sum()), used, at_s=at,
                       frame_noise=noise / np.sqrt(share))
    low, high = rows[np.argmin(series[rows])], rows[np.argmax(series[rows])]
    if statistic == "range":
        value = float(series[high] - series[low])
        sampling = float(np.hypot(_peak_miss(times, series, high, valid), _peak_miss(times, series, low, valid)))
        return Reading(value, frames, seconds, valid, frame_noise=noise * np.sqrt(2.0), sampling=sampling)
    at = high if statistic == "max" else low
    return Reading(float(series[at]), frames, seconds, valid, at_s=float(times[at]), frame_noise=noise,
                   sampling=_peak_miss(times, series, at, valid))


def _peak_miss(times: np.ndarray, series: np.ndarray, at: int, valid: np.ndarray) -> float:
    """How far the true extreme may lie beyond the sampled one: the vertex of the parabola through the extreme
    and its two neighbours (0 at a window's edge, where the window, not the sampling, cuts the series)."""
    if at == 0 or at + 1 >= len(series) or not (valid[at - 1] and valid[at + 1]):
        return 0.0
    t = times[at - 1: at + 2] - times[at]
    v = series[at - 1: at + 2]
    if not np.isfinite(v).all():
        return 0.0
    a, b, c = np.polyfit(t, v, 2)
    if a == 0:
        return 0.0
    vertex_t = -b / (2 * a)
    if not t[0] <= vertex_t <= t[2]:
        return 0.0
    return float(abs((c - b * b / (4 * a)) - v[1]))


__all__ = ["Reading", "coverage", "frame_noise", "inside", "read_statistic", "running_median", "window_samples"]
