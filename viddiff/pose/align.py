"""Stage-aligned time: each stage of a segmentation mapped onto [0, 1], so A and B overlay stage by stage.

A slower performance is not a different shape: once every stage of both videos spans the same unit interval
(stage ``k`` spans ``[k, k + 1]`` of *stage time*), curves compare like with like, and how long each stage
took is a separate fact (each window's length). Within a stage the mapping is linear; :func:`dtw_path`,
:func:`warp_onto` and :func:`warp_stage_times` additionally align two curves by dynamic time warping (for the
overlay: statistics are taken over real time, :mod:`viddiff.pose.statistics`). Pure numpy, no I/O.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np


def stage_windows(spans: Sequence[tuple[int, int]], times_s: np.ndarray, end_s: Optional[float] = None) -> np.ndarray:
    """(K, 2) start and end seconds of each stage, from ``[start, end)`` spans of sampled-frame positions.

    A stage runs from its first frame's time to the next stage's first frame's time, so stages tile the clip;
    the last one ends at ``end_s`` (the clip's end) when given, else one frame interval after its last frame.
    """
    times = np.asarray(times_s, dtype=np.float64)
    if not len(times):
        raise ValueError("a segmentation of a video without frames")
    step = float(np.median(np.diff(times))) if len(times) > 1 else 0.0
    last = float(times[-1] + step) if end_s is None else max(float(end_s), float(times[-1]))

    def boundary(position: int) -> float:
        return float(times[position]) if position < len(times) else last

    return np.array([(boundary(start), boundary(end)) for start, end in spans], dtype=np.float64)


def stage_time(times_s: np.ndarray, windows: np.ndarray) -> np.ndarray:
    """Stage time of each instant (stage ``k`` → ``[k, k + 1)``, the last stage's end → ``K``); NaN outside."""
    times = np.asarray(times_s, dtype=np.float64)
    out = np.full(times.shape, np.nan)
    for k, (start, end) in enumerate(windows):
        inside = (times >= start) & ((times < end) | ((k == len(windows) - 1) & (times <= end)))
        length = end - start
        out[inside] = k + ((times[inside] - start) / length if length > 0 else 0.0)
    return out


def stage_grid(n_stages: int, points_per_stage: int) -> np.ndarray:
    """Stage times of a curve: ``points_per_stage`` evenly spaced points in each ``[k, k + 1]``."""
    unit = np.linspace(0.0, 1.0, points_per_stage)
    return np.concatenate([k + unit for k in range(n_stages)])


def resample(times_s: np.ndarray, values: np.ndarray, windows: np.ndarray, points_per_stage: int) -> np.ndarray:
    """``values`` (sampled at ``times_s``) at :func:`stage_grid` points, by linear interpolation between
    neighbouring samples; a point whose neighbouring sample is a gap is a gap. Points up to one frame interval
    beyond the first or last sample take that sample's value (a stage ends one interval after its last frame)."""
    times = np.asarray(times_s, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    unit = np.linspace(0.0, 1.0, points_per_stage)
    grid_times = np.concatenate([start + unit * (end - start) for start, end in windows])
    out = np.full(grid_times.shape, np.nan)
    if not len(times):
        return out
    step = float(np.median(np.diff(times))) if len(times) > 1 else 0.0
    tolerance = 1e-9 + 1e-9 * abs(float(times[-1]))
    for i, t in enumerate(grid_times):
        if t < times[0] - step - tolerance or t > times[-1] + step + tolerance:
            continue
        if t <= times[0]:
            out[i] = values[0]
            continue
        if t >= times[-1]:
            out[i] = values[-1]
            continue
        j = int(np.searchsorted(times, t, side="right")) - 1
        if abs(t - times[j]) <= tolerance:
            out[i] = values[j]
            continue
        low, high = values[j], values[j + 1]
        if np.isfinite(low) and np.isfinite(high):
            share = (t - times[j]) / (times[j + 1] - times[j])
            out[i] = low + share * (high - low)
    return out


def dtw_path(x: np.ndarray, y: np.ndarray) -> list[tuple[int, int]]:
    """Dynamic time warping path between two 1-D sequences (absolute-difference cost, steps (1,0), (0,1), (1,1)).

    Pairs involving a gap cost the median finite cost, so a gap neither attracts nor repels the path.
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    n, m = len(x), len(y)
    if not n or not m:
        return []
    cost = np.abs(x[:, None] - y[None, :])
    finite = np.isfinite(cost)
    cost[~finite] = float(np.median(cost[finite])) if finite.any() else 0.0
    total = np.full((n + 1, m + 1), np.inf)
    total[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            total[i, j] = cost[i - 1, j - 1] + min(total[i - 1, j], total[i, j - 1], total[i - 1, j - 1])
    path = [(n - 1, m - 1)]
    i, j = n, m
    while (i, j) != (1, 1):
        moves = [(i - 1, j - 1), (i - 1, j), (i, j - 1)]
        i, j = min((move for move in moves if move[0] >= 1 and move[1] >= 1), key=lambda move: total[move])
        path.append((i - 1, j - 1))
    return path[::-1]


def warp_onto(reference: np.ndarray, other: np.ndarray) -> np.ndarray:
    """``other`` re-timed onto ``reference``'s points along their DTW path (the mean where several map to one)."""
    reference, other = np.asarray(reference, dtype=np.float64), np.asarray(other, dtype=np.float64)
    sums = np.zeros(len(reference))
    counts = np.zeros(len(reference))
    for i, j in dtw_path(reference, other):
        if np.isfinite(other[j]):
            sums[i] += other[j]
            counts[i] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / counts, np.nan)


def warp_stage_times(
    time_a: np.ndarray, values_a: np.ndarray, time_b: np.ndarray, values_b: np.ndarray, n_stages: int, points: int = 20
) -> np.ndarray:
    """B's stage times re-timed onto A's inside each stage by DTW (stages stay aligned; only time inside them moves).

    ``time_*`` are stage times of each video's samples (:func:`stage_time`), ``values_*`` the series there. Per
    stage both are resampled onto ``points`` even steps, aligned by :func:`dtw_path`, and each B sample's stage
    time is moved to where its point of the path lands on A's."""
    time_a, time_b = np.asarray(time_a, dtype=np.float64), np.asarray(time_b, dtype=np.float64)
    out = time_b.copy()
    unit = np.linspace(0.0, 1.0, points)
    for k in range(n_stages):
        grids = []
        for times, values in ((time_a, values_a), (time_b, values_b)):
            rows = (times >= k) & (times <= k + 1) & np.isfinite(values)
            grids.append(np.interp(k + unit, times[rows], np.asarray(values)[rows]) if rows.sum() >= 2 else None)
        if grids[0] is None or grids[1] is None:
            continue
        path = np.array(dtw_path(grids[0], grids[1]))
        onto = np.array([path[path[:, 1] == j, 0].mean() for j in range(points)]) / (points - 1)
        rows = (time_b >= k) & (time_b < k + 1)
        out[rows] = k + np.interp(time_b[rows] - k, unit, onto)
    return out
