"""How far a whole-action statistic moves when the pose is sampled at a lower rate than the clip's own.

For each real clip given (use clips that are not in the test suite), BlazePose runs on every frame (the
reference) and again on the frames read at each lower rate. Two errors per rate, for the whole-action minimum,
maximum and mean of the knee, hip and elbow angles and the trunk lean, against the reference:

- *sampling*: the reference's own values at the lower rate's frames (only the missed frames differ);
- *re-estimated*: the estimator run again on those frames alone (its tracker sees bigger jumps between frames).

Statistics are read as viddiff reads them (a running median over 0.15 s, means over real time). The issue's
margin is 5°; a rate is dense enough when its errors stay well under it.

Usage: python bench/pose_sampling.py CLIP [CLIP ...] [--rates 4 7.5 10 15 20 30]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from viddiff.config import PoseConfig
from viddiff.pose.blazepose import BlazePose
from viddiff.pose.statistics import coverage, running_median, window_samples
from viddiff.pose.track import estimate_track
from viddiff.video import read_video

SERIES = {
    "knee": ("left_knee_angle", "right_knee_angle"),
    "hip": ("left_hip_angle", "right_hip_angle"),
    "elbow": ("left_elbow_angle", "right_elbow_angle"),
    "lean": ("trunk_lean",),
}
STATISTICS = ("min", "max", "mean")


def statistics(times: np.ndarray, values: np.ndarray, end_s: float) -> dict[str, float]:
    series = running_median(values, window_samples(times, 0.15))
    finite = np.isfinite(series)
    if finite.sum() < 3:
        return {s: float("nan") for s in STATISTICS}
    weights = coverage(times, 0.0, end_s)[finite]
    return {"min": float(np.min(series[finite])), "max": float(np.max(series[finite])),
            "mean": float(np.sum(weights * series[finite]) / np.sum(weights))}


def readings(kin, end_s: float, rows: np.ndarray) -> dict[tuple[str, str], float]:
    out = {}
    for name, columns in SERIES.items():
        values = np.nanmean(np.stack([kin.values[c] for c in columns]), axis=0) if len(columns) > 1 else kin.values[columns[0]]
        for stat, value in statistics(kin.times_s[rows], values[rows], end_s).items():
            out[(name, stat)] = value
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("clips", nargs="+", type=Path)
    parser.add_argument("--rates", nargs="+", type=float, default=[4, 7.5, 10, 15, 20, 30])
    args = parser.parse_args()
    estimator = BlazePose(PoseConfig())
    errors: dict[float, dict[str, list[float]]] = {r: {"sampling": [], "re-estimated": []} for r in args.rates}
    for clip in args.clips:
        full = read_video(clip)
        end_s = full.duration_s
        reference_kin = estimate_track(full, estimator).kinematics()
        reference = readings(reference_kin, end_s, np.arange(len(full.frame_indices)))
        for rate in args.rates:
            sub = read_video(clip, target_fps=rate)
            rows = np.searchsorted(full.frame_indices, sub.frame_indices)
            sampled = readings(reference_kin, end_s, rows)
            again = readings(estimate_track(sub, estimator).kinematics(), end_s, np.arange(len(sub.frame_indices)))
            for key, value in reference.items():
                for kind, other in (("sampling", sampled), ("re-estimated", again)):
                    if np.isfinite(value) and np.isfinite(other[key]):
                        errors[rate][kind].append(abs(other[key] - value))
    print(f"{len(args.clips)} clips; whole-action min/max/mean of knee, hip, elbow angles and trunk lean vs every frame (degrees)")
    print(f"{'fps':>5}  {'sampling: median':>16} {'90th':>6} {'max':>6}   {'re-estimated: median':>20} {'90th':>6} {'max':>6}")
    for rate in args.rates:
        s, r = (np.array(errors[rate][k]) for k in ("sampling", "re-estimated"))
        print(f"{rate:>5g}  {np.median(s):>16.2f} {np.percentile(s, 90):>6.2f} {s.max():>6.2f}   "
              f"{np.median(r):>20.2f} {np.percentile(r, 90):>6.2f} {r.max():>6.2f}")


if __name__ == "__main__":
    main()
