"""Speed of ``viterbi_segment`` against straightforward implementations of the same recursion.

Baselines, measured in the same run on the same inputs:
- ``python``: the textbook per-frame, per-state loop in pure Python;
- ``numpy/frame``: the per-frame recursion vectorised over states (one set of
  numpy calls per frame), which numpy's per-call overhead makes slow for K ≈ 5.
Both must reach the same total cost as the library.

Usage: python bench/viterbi.py [--repeats N]
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Callable

import numpy as np

from viddiff.localizer.viterbi import viterbi_segment

STAY_LOGP = ADVANCE_LOGP = math.log(0.5)
WIDTHS = (7, 3, 10, 15, 11, 10, 15)


def python_loop(costs: np.ndarray, stay_logp: float, advance_logp: float) -> tuple[list[int], float]:
    """Per-frame, per-state dynamic programme with backpointers (ties prefer staying)."""
    n_stages, n_frames = costs.shape
    rows = costs.tolist()
    best = [math.inf] * n_stages
    best[0] = rows[0][0]
    advanced = []
    for t in range(1, n_frames):
        new, came = [math.inf] * n_stages, [False] * n_stages
        for k in range(n_stages):
            stay = best[k] - stay_logp
            move = best[k - 1] - advance_logp if k > 0 else math.inf
            came[k] = move < stay
            new[k] = (move if came[k] else stay) + rows[k][t]
        best = new
        advanced.append(came)
    path, k = [n_stages - 1], n_stages - 1
    for t in range(n_frames - 1, 0, -1):
        k -= advanced[t - 1][k]
        path.append(k)
    return path[::-1], best[-1]


def numpy_per_frame(costs: np.ndarray, stay_logp: float, advance_logp: float) -> tuple[np.ndarray, float]:
    """The same recursion vectorised over states: a loop over frames of small numpy calls."""
    n_stages, n_frames = costs.shape
    best = np.full(n_stages, np.inf)
    best[0] = costs[0, 0]
    advanced = np.zeros((n_frames, n_stages), dtype=bool)
    move = np.full(n_stages, np.inf)
    for t in range(1, n_frames):
        stay = best - stay_logp
        move[1:] = best[:-1] - advance_logp
        advanced[t] = move < stay
        best = np.where(advanced[t], move, stay) + costs[:, t]
    path = np.empty(n_frames, dtype=np.int64)
    path[-1] = n_stages - 1
    for t in range(n_frames - 1, 0, -1):
        path[t - 1] = path[t] - advanced[t, path[t]]
    return path, float(best[-1])


def best_time(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    n_stages = 5
    header = ("T", "K", "python ms", "numpy/frame ms", "viddiff ms", "vs python", "vs numpy/frame")
    print(" ".join(f"{h:>{w}}" for h, w in zip(header, WIDTHS)))
    for n_frames in (1_000, 10_000):
        costs = -np.log(rng.random((n_stages, n_frames)) + 1e-6)
        _, total = viterbi_segment(costs, STAY_LOGP, ADVANCE_LOGP)
        for name, baseline in (("python", python_loop), ("numpy/frame", numpy_per_frame)):
            _, base_total = baseline(costs, STAY_LOGP, ADVANCE_LOGP)
            if not math.isclose(base_total, total, rel_tol=1e-9):
                raise SystemExit(f"{name} baseline cost {base_total} != viterbi_segment cost {total} at T={n_frames}")
        t_python = best_time(lambda: python_loop(costs, STAY_LOGP, ADVANCE_LOGP), args.repeats)
        t_frame = best_time(lambda: numpy_per_frame(costs, STAY_LOGP, ADVANCE_LOGP), args.repeats)
        t_ours = best_time(lambda: viterbi_segment(costs, STAY_LOGP, ADVANCE_LOGP), args.repeats)
        row = (n_frames, n_stages, f"{1e3 * t_python:.2f}", f"{1e3 * t_frame:.2f}", f"{1e3 * t_ours:.3f}",
               f"{t_python / t_ours:.1f}x", f"{t_frame / t_ours:.1f}x")
        print(" ".join(f"{v:>{w}}" for v, w in zip(row, WIDTHS)))
    print("costs: all implementations agree (rel. tol 1e-9)")


if __name__ == "__main__":
    main()
