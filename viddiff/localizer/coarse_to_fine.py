"""Coarse-to-fine Viterbi: the stage segmentation from a fraction of the CLIP forwards.

Full-rate localisation embeds every sampled frame, but the segmentation only
changes where the stage costs cross, i.e. near the K-1 stage boundaries, and
keyframes are a pure function of the stage spans. So frames are embedded on a
coarse grid first; the similarities of the frames in between are linearly
interpolated, and Viterbi runs on the full-rate grid of ``T`` frames (so every
frame still counts once, as in the full-rate objective). Then every frame
within ``refine_radius`` of a decoded boundary that is not yet embedded is
embedded, and the decode is repeated until every boundary sits on embedded
frames with ``refine_radius`` embedded frames on each side of it.

Exact where it must be: with ``coarse_stride == 1``, or once the refined
windows cover every frame, the decode sees exactly the full-rate costs and
returns the full-rate path. Otherwise frames far from the boundaries carry
interpolated costs and the min–max normalisation sees only embedded frames, so
the path is an approximation; ``bench/localization.py`` measures how close.

Pure numpy: the caller supplies ``similarity_at(positions) -> (K, n)`` raw
(unnormalised) per-stage similarities and decides how they are computed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from viddiff.localizer.scores import ScoreFloor, normalise_scores, stage_costs
from viddiff.localizer.viterbi import Ties, viterbi_segment
from viddiff.console import count_of

SimilarityAt = Callable[[np.ndarray], np.ndarray]
"""Raw per-stage similarities of the frames at the given sorted positions: (n,) int → (K, n) float."""


@dataclass(frozen=True)
class CoarseToFineResult:
    path: np.ndarray
    """Stage of each of the ``T`` sampled frames (as ``viterbi_segment`` returns it)."""
    embedded: np.ndarray
    """Sorted positions whose similarities were computed (the CLIP forwards spent)."""
    rounds: int
    """Decodes run (1 = the coarse decode already had every boundary refined)."""


def coarse_grid(n_frames: int, stride: int) -> np.ndarray:
    """Every ``stride``-th position from 0, plus the last frame (so interpolation never extrapolates)."""
    if n_frames < 1 or stride < 1:
        raise ValueError(f"need n_frames >= 1 and stride >= 1, got {n_frames} and {stride}")
    grid = np.arange(0, n_frames, stride)
    return grid if grid[-1] == n_frames - 1 else np.append(grid, n_frames - 1)


def first_round(n_frames: int, n_stages: int, coarse_stride: int) -> np.ndarray:
    """The positions the first round embeds: the coarse grid, or every frame when the stride is 1 or there are
    as many stages as frames (then the path does not depend on the scores)."""
    if coarse_stride <= 1 or n_stages >= n_frames:
        return np.arange(n_frames)
    return coarse_grid(n_frames, coarse_stride)


def coarse_to_fine_segment(
    n_frames: int,
    n_stages: int,
    similarity_at: SimilarityAt,
    *,
    coarse_stride: int,
    refine_radius: int,
    stay_logp: float,
    advance_logp: float,
    eps: float,
    floor: ScoreFloor = "add",
    ties: Ties = "earliest",
) -> CoarseToFineResult:
    """Monotone stage path over ``n_frames`` frames, embedding as few frames as the boundaries need.

    ``similarity_at`` is called once per round with the not-yet-embedded
    positions only, so every frame is embedded at most once. With
    ``n_stages >= n_frames`` the path does not depend on the scores (one frame
    per stage), but frames are still embedded so callers see the same work as
    full-rate decoding of such a short video.
    """
    if n_frames < 1 or n_stages < 1:
        raise ValueError(
            f"need at least one frame and one stage, got {count_of(n_frames, 'frame')} and {count_of(n_stages, 'stage')}"
        )
    if coarse_stride < 1 or refine_radius < 0:
        raise ValueError(f"need coarse_stride >= 1 and refine_radius >= 0, got {coarse_stride} and {refine_radius}")
    todo = first_round(n_frames, n_stages, coarse_stride)
    known = np.zeros(n_frames, dtype=bool)
    raw = np.zeros((n_stages, n_frames))
    rounds = 0
    while True:
        raw[:, todo] = _checked_similarities(similarity_at(todo), n_stages, todo.size)
        known[todo] = True
        rounds += 1
        embedded = np.flatnonzero(known)
        costs = stage_costs(normalise_scores(_interpolate(raw[:, embedded], embedded, n_frames)), eps, floor)
        path, _ = viterbi_segment(costs, stay_logp, advance_logp, ties)
        todo = _unembedded_near_boundaries(path, known, refine_radius)
        if todo.size == 0:
            return CoarseToFineResult(path=path, embedded=embedded, rounds=rounds)


def _interpolate(values: np.ndarray, positions: np.ndarray, n_frames: int) -> np.ndarray:
    """(K, n) values at sorted ``positions`` → (K, T), linear in between; exact at the positions."""
    if positions.size == n_frames:
        return values
    grid = np.arange(n_frames)
    return np.stack([np.interp(grid, positions, row) for row in values])


def _unembedded_near_boundaries(path: np.ndarray, known: np.ndarray, radius: int) -> np.ndarray:
    """Positions within ``radius`` of either side of a stage change that are not embedded yet.

    A boundary between frames ``b-1`` and ``b`` wants ``[b-1-radius, b+radius]`` embedded.
    """
    n_frames = path.size
    starts = np.flatnonzero(np.diff(path)) + 1
    wanted = np.zeros(n_frames, dtype=bool)
    for b in starts:
        wanted[max(0, b - 1 - radius) : min(n_frames, b + radius + 1)] = True
    return np.flatnonzero(wanted & ~known)


def _checked_similarities(values: np.ndarray, n_stages: int, n_positions: int) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.shape != (n_stages, n_positions):
        raise ValueError(f"similarity_at returned shape {arr.shape}, expected {(n_stages, n_positions)}")
    return arr
