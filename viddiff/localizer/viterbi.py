"""Exact left-to-right stage segmentation of one video (Viterbi).

States are the proposed stages in order. A path starts in stage 0, ends in the
last stage, and at every frame either stays in its stage or advances by exactly
one. Every such path has exactly ``K - 1`` advances and ``T - K`` stays, so the
transition log-probabilities shift all path costs equally: they change the
reported total, never the chosen path (kept as parameters to match the paper's
model and its reported costs).

The dynamic programme is written stage by stage, vectorised over time: the best
cost of being in stage ``k`` at frame ``t`` is a prefix sum of stage ``k``'s
costs plus a running minimum over the frame where stage ``k`` was entered. That
is O(T·K) work like the textbook per-frame recursion, but with a Python loop
over the few stages instead of over thousands of frames (see
``bench/viterbi.py``).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

Ties = Literal["earliest", "latest"]


def viterbi_segment(
    costs: np.ndarray, stay_logp: float, advance_logp: float, ties: Ties = "earliest"
) -> tuple[np.ndarray, float]:
    """Minimum-cost monotone stage path through ``costs`` (K stages × T frames).

    ``costs[k, t]`` is the emission cost (``-log`` score) of frame ``t`` in
    stage ``k``; the total of a path is the sum of its emission costs minus the
    sum of its transition log-probabilities. Returns ``(stage_of_frame, total)``
    with ``stage_of_frame`` an int array of shape (T,).

    Ties (equal totals up to floating-point rounding) are broken stage by
    stage from the last one: with ``ties="earliest"`` each stage starts as
    early as an optimal path allows, with ``"latest"`` as late (the authors'
    release, whose backtracking takes the previous stage on a tie).

    With at least as many stages as frames (K ≥ T) the only sensible path is
    one frame per stage: ``stage_of_frame`` is ``0, 1, …, T-1`` (so a single
    frame is stage 0), the total is that path's cost, and ``stage_spans`` maps
    the stages left without a frame onto the last frame.
    """
    costs, ties = _checked_costs(costs), _checked_ties(ties)
    stay, advance = _transition_cost(stay_logp, "stay_logp"), _transition_cost(advance_logp, "advance_logp")
    n_stages, n_frames = costs.shape
    if n_stages >= n_frames:
        path = np.arange(n_frames)
    else:
        path = _decode(costs, stay, advance, ties)
    return path, _path_cost(costs, path, stay, advance)


def stage_spans(stage_of_frame: np.ndarray, n_stages: int) -> list[tuple[int, int]]:
    """``[start, end)`` frame positions of every stage along a monotone path.

    Stages the path never reaches (only when there are more stages than frames)
    share the last frame, ``(T-1, T)``, so every stage always has a non-empty
    span for keyframe selection.
    """
    path = np.asarray(stage_of_frame)
    if path.ndim != 1 or path.size == 0:
        raise ValueError(f"stage_of_frame must be a non-empty 1-D array, got shape {path.shape}")
    steps = np.diff(path)
    if path[0] != 0 or not np.all((steps == 0) | (steps == 1)):
        raise ValueError("stage_of_frame must start at stage 0 and advance by at most one stage per frame")
    last = int(path[-1])
    if last >= n_stages:
        raise ValueError(f"stage_of_frame reaches stage {last} but there are only {n_stages} stages")
    n_frames = path.size
    starts = [0] + (np.flatnonzero(steps) + 1).tolist()
    ends = starts[1:] + [n_frames]
    reached = list(zip(starts, ends))
    return reached + [(n_frames - 1, n_frames)] * (n_stages - last - 1)


def _decode(costs: np.ndarray, stay: float, advance: float, ties: Ties) -> np.ndarray:
    """Optimal path for K < T.

    With ``P_k`` the running sum of ``costs[k] + stay``, the best cost of being
    in stage ``k`` at frame ``t`` is ``D_k[t] = P_k[t] - stay + min_{m<t} E_k[m]``
    where ``E_k[m] = D_{k-1}[m] + advance - P_k[m]`` is the cost of having left
    stage ``k-1`` at frame ``m``. Backtracking picks, per stage, the entry frame.
    """
    n_stages, n_frames = costs.shape
    prefix = np.cumsum(costs + stay, axis=1)
    best = prefix[0] - stay
    exits = np.empty((n_stages - 1, n_frames))  # row k-1 holds E_k
    for k in range(1, n_stages):
        exits[k - 1] = best + advance - prefix[k]
        entered_before = np.minimum.accumulate(exits[k - 1])
        best = prefix[k] - stay + np.concatenate(([np.inf], entered_before[:-1]))
    tolerance = _rounding_tolerance(prefix, n_stages + n_frames)
    path = np.zeros(n_frames, dtype=np.int64)
    last_frame = n_frames - 1
    for k in range(n_stages - 1, 0, -1):
        candidates = exits[k - 1, :last_frame]
        optimal = np.flatnonzero(candidates <= candidates.min() + tolerance)
        exit_frame = int(optimal[0] if ties == "earliest" else optimal[-1])
        path[exit_frame + 1 : last_frame + 1] = k
        last_frame = exit_frame
    return path


def _rounding_tolerance(prefix: np.ndarray, n_terms: int) -> float:
    """Cost differences below the rounding error of the prefix sums count as ties."""
    return float(2 * n_terms * np.finfo(np.float64).eps * (1.0 + np.abs(prefix).max()))


def _path_cost(costs: np.ndarray, path: np.ndarray, stay: float, advance: float) -> float:
    n_frames = path.size
    n_advances = int(np.count_nonzero(np.diff(path)))
    emissions = float(costs[path, np.arange(n_frames)].sum())
    return emissions + n_advances * advance + (n_frames - 1 - n_advances) * stay


def _checked_ties(ties: str) -> Ties:
    if ties not in ("earliest", "latest"):
        raise ValueError(f"ties must be 'earliest' or 'latest', got {ties!r}")
    return ties  # type: ignore[return-value]


def _checked_costs(costs: np.ndarray) -> np.ndarray:
    arr = np.asarray(costs, dtype=np.float64)
    if arr.ndim != 2 or 0 in arr.shape:
        raise ValueError(f"costs must be a non-empty (stages, frames) array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("costs must be finite; add eps to scores before taking -log")
    return arr


def _transition_cost(logp: float, name: str) -> float:
    if not (np.isfinite(logp) and logp <= 0):
        raise ValueError(f"{name} must be a finite log-probability (<= 0), got {logp}")
    return -float(logp)
