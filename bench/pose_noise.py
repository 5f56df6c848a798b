"""Noise floors of body-pose quantities on real video: how much a value moves when only the recording changes.

For each real clip (default: the four synchronised views of the Pose2Sim single-person demo, see --clips-dir),
BlazePose (the project's default estimator and kinematics settings, through PoseTrack/Kinematics) measures the
clip and each identical-movement copy of it (viddiff/testing/clip_variants.py: re-encode, half size, pad,
rotation metadata both ways, slow motion CFR and VFR, time reversal, mirror with sides swapped), and the same
clip read at 4, 8, 15 and 30 fps. It reports, per quantity kind (joint angles per joint, trunk lean, widths,
heights, speeds, durations):

- the per-frame difference (same source frame in both);
- the difference of whole-action and stage statistics (3 equal stages; mean over real time, robust min/max =
  5th/95th percentile over time, raw min/max, robust range), stages matched by source frame, so any difference
  is measurement noise;
- the cross-view spread over the four cameras of one take (2D angles and BlazePose's 3D world landmarks).

Floors are the 95th percentile of |difference| over clips, sides, stages and statistics (speeds and durations:
of the ratio). Pose results are cached in a SQLite file (--cache), copies in --work, so re-runs are fast.

Usage: python bench/pose_noise.py [--clips-dir DIR] [--markdown FILE] [--quick]
"""

from __future__ import annotations

import argparse
import itertools
import logging
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

import numpy as np

from viddiff.cache import Cache, hash_key
from viddiff.config import PoseConfig
from viddiff.pose.align import stage_windows
from viddiff.pose.estimators import build_pose_estimator
from viddiff.pose.kinematics import ANGLES, Kinematics, joint_angle
from viddiff.pose.skeleton import MEDIAPIPE_33
from viddiff.pose.track import PoseTrack, estimate_track, frames_digest
from viddiff.testing.clip_variants import VARIANTS, Variant, build_variant
from viddiff.video import read_video

DEFAULT_CLIPS_DIR = Path(os.environ.get("VIDDIFF_POSE_CLIPS", "/work/wt/clips/x"))
"""Where the clips unpacked from the pose2sim (and sports2d) wheels are: ``pip download pose2sim==0.10.49
--no-deps`` and unzip; the paths below are relative to it."""
SINGLE_TAKE = [f"Pose2Sim/Demo_SinglePerson/videos/cam0{i}.mp4" for i in range(1, 5)]
SAMPLING_FPS = (4.0, 8.0, 15.0, 30.0)
N_STAGES = 3
STATISTICS = ("mean", "min", "max", "p05", "p95", "range")
ROBUST = ("mean", "p05", "p95", "range")
"""Statistics built to resist single-frame noise (``range`` is p95 − p05)."""
KINDS = {
    **{f"{joint} angle": [f"{side}_{joint}_angle" for side in ("left", "right")] for joint in ANGLES},
    "trunk lean": ["trunk_lean"],
    "stance width": ["stance_width"],
    "grip width": ["grip_width"],
    "wrist height": ["left_wrist_height", "right_wrist_height"],
    "hip height": ["hip_height"],
    "speed": [f"{side}_{part}_speed" for part in ("wrist", "elbow", "knee", "ankle", "hip") for side in ("left", "right")]
    + ["head_speed"],
}
UNITS = {"trunk lean": "°", "stance width": "hip widths", "grip width": "shoulder widths",
         "wrist height": "torso lengths", "hip height": "torso lengths", "speed": "ratio"}


def unit_of(kind: str) -> str:
    return "°" if kind.endswith("angle") else UNITS[kind]


def is_ratio(kind: str) -> bool:
    return kind == "speed"


def require_clips(clips_dir: Path, names: Iterable[str]) -> list[Path]:
    paths = [clips_dir / n for n in names]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        sys.exit(
            f"error: real clips missing: {', '.join(missing)}.\nUnpack the pose2sim wheel (pip download pose2sim==0.10.49 "
            "--no-deps; unzip) into a folder and pass it as --clips-dir (or set VIDDIFF_POSE_CLIPS)."
        )
    return paths


def mirrored_name(series: str) -> str:
    return series.replace("left_", "TMP_").replace("right_", "left_").replace("TMP_", "right_")


# --------------------------------------------------------------------------- measuring


@dataclass
class Measured:
    """One reading of a clip: its kinematics and which source frame each sample shows."""

    kinematics: Kinematics
    source_frames: np.ndarray
    n_source: int
    time_scale: float = 1.0
    mirrored: bool = False

    def series(self, name: str) -> np.ndarray:
        return self.kinematics.values[mirrored_name(name) if self.mirrored else name]


class Estimator:
    """The default estimator and kinematics settings, with results cached by the frames' pixels."""

    def __init__(self, cache: Cache, smoothing_frames: Optional[int] = None):
        self.cfg = PoseConfig() if smoothing_frames is None else PoseConfig(smoothing_frames=smoothing_frames)
        self.estimator = build_pose_estimator(self.cfg)
        self.cache = cache
        self.frames = 0
        self.seconds = 0.0

    def track(self, video) -> PoseTrack:
        start = time.perf_counter()
        track = estimate_track(video, self.estimator, self.cache)
        self.frames += len(video.frames)
        self.seconds += time.perf_counter() - start
        return track

    def kinematics(self, track: PoseTrack) -> Kinematics:
        cfg = self.cfg
        return track.kinematics(min_confidence=cfg.min_confidence, smoothing_frames=cfg.smoothing_frames,
                                fix_sides=cfg.fix_side_swaps)


def time_weights(times: np.ndarray) -> np.ndarray:
    """The span of real time each sample stands for (half the gap to each neighbour)."""
    if len(times) < 2:
        return np.ones(len(times))
    edges = np.concatenate([[times[0] - (times[1] - times[0]) / 2], (times[1:] + times[:-1]) / 2,
                            [times[-1] + (times[-1] - times[-2]) / 2]])
    return np.diff(edges)


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    order = np.argsort(values)
    v, w = values[order], weights[order]
    cum = np.cumsum(w) - w / 2
    return float(np.interp(q * w.sum(), cum, v))


def statistics(values: np.ndarray, times: np.ndarray, mask: np.ndarray) -> dict[str, float]:
    """Every statistic of ``values`` over the samples in ``mask``, over real time; NaN where under 3 values."""
    weights = time_weights(times)
    keep = mask & np.isfinite(values)
    if keep.sum() < 3:
        return {s: float("nan") for s in STATISTICS}
    v, w = values[keep], weights[keep]
    p05, p95 = weighted_quantile(v, w, 0.05), weighted_quantile(v, w, 0.95)
    return {"mean": float(np.sum(v * w) / w.sum()), "min": float(v.min()), "max": float(v.max()), "p05": p05,
            "p95": p95, "range": p95 - p05}


def scopes(measured: Measured) -> dict[str, np.ndarray]:
    """Sample masks of the whole action and of each of N_STAGES equal stages by source frame."""
    stage = np.minimum(measured.source_frames * N_STAGES // measured.n_source, N_STAGES - 1)
    return {"action": np.ones(len(stage), bool), **{f"stage {k + 1}": stage == k for k in range(N_STAGES)}}


@dataclass
class Differences:
    """Differences between a reference reading and another, per quantity kind."""

    per_frame: dict[str, list[float]]
    per_statistic: dict[tuple[str, str], list[float]]
    """(kind, statistic) → |differences| (ratios for speeds: |log| of the ratio)."""


def new_differences() -> Differences:
    return Differences(per_frame={k: [] for k in KINDS}, per_statistic={})


def compare(reference: Measured, other: Measured, into: Differences) -> None:
    ref_scopes, other_scopes = scopes(reference), scopes(other)
    ref_times = reference.kinematics.times_s
    other_times = other.kinematics.times_s
    position = {int(f): i for i, f in enumerate(reference.source_frames)}
    matched = [(position[int(f)], j) for j, f in enumerate(other.source_frames) if int(f) in position]
    ri, oi = (np.array(x, dtype=int) for x in zip(*matched)) if matched else (np.zeros(0, int), np.zeros(0, int))
    for kind, names in KINDS.items():
        for name in names:
            a, b = reference.series(name), other.series(name)
            if is_ratio(kind):
                b = b * other.time_scale / reference.time_scale
                with np.errstate(divide="ignore", invalid="ignore"):
                    frame_gap = np.abs(np.log(b[oi] / a[ri]))
            else:
                frame_gap = np.abs(b[oi] - a[ri])
            into.per_frame[kind].extend(frame_gap[np.isfinite(frame_gap)].tolist())
            for scope in ref_scopes:
                sa = statistics(a, ref_times, ref_scopes[scope])
                sb = statistics(b, other_times, other_scopes[scope])
                for stat in STATISTICS:
                    if is_ratio(kind):
                        if stat not in ("mean", "max", "p95"):
                            continue
                        with np.errstate(divide="ignore", invalid="ignore"):
                            gap = abs(np.log(sb[stat] / sa[stat]))
                    else:
                        gap = abs(sb[stat] - sa[stat])
                    if np.isfinite(gap):
                        into.per_statistic.setdefault((kind, stat), []).append(float(gap))


def p95(values: list[float]) -> float:
    return float(np.percentile(values, 95)) if values else float("nan")


def shown(kind: str, value: float) -> str:
    if not np.isfinite(value):
        return "–"
    if is_ratio(kind):
        return f"×{np.exp(value):.2f}"
    return f"{value:.1f}" if unit_of(kind) == "°" else f"{value:.3f}"


# --------------------------------------------------------------------------- durations


def duration_errors(variant: Variant, fps_values: Iterable[Optional[float]]) -> dict[str, float]:
    """Relative error of the whole clip's and of the stages' durations as the method computes them (reader
    times, its clip end) against the copy's true durations, read at each rate (None = every frame)."""
    out = {}
    for fps in fps_values:
        video = read_video(variant.path, target_fps=fps)
        end = video.duration_s
        positions = np.arange(len(video.frame_indices))
        source = variant.source_frames[video.frame_indices]
        stage = np.minimum(source * N_STAGES // len(variant.source_frames), N_STAGES - 1)
        if variant.reversed:
            stage = N_STAGES - 1 - stage
        spans = [(int(positions[stage == k][0]), int(positions[stage == k][-1]) + 1) for k in range(N_STAGES)]
        windows = stage_windows(spans, video.times_s, end)
        # the truth: each stage from its first frame's true time to the next stage's, the last to the clip's end
        first = [int(video.frame_indices[s]) for s, _ in spans]
        true_starts = [variant.times_s[f] for f in first] + [variant.duration_s]
        label = "native" if fps is None else f"{fps:g} fps"
        out[f"action, {label}"] = end / variant.duration_s - 1.0
        for k in range(N_STAGES):
            true = true_starts[k + 1] - true_starts[k]
            out[f"stage {k + 1}, {label}"] = (windows[k, 1] - windows[k, 0]) / true - 1.0
    return out


# --------------------------------------------------------------------------- 3D world landmarks


def world_landmarks(frames: np.ndarray, cache: Cache) -> np.ndarray:
    """(T, 33, 4) BlazePose world landmarks (metres, hip-centred; x, y, z, visibility) per frame, NaN where no
    person; the legacy API at the project's default settings, cached by the frames' pixels."""
    cfg = PoseConfig().blazepose
    key = hash_key({"bench": "pose_world_landmarks", "frames": frames_digest(frames),
                    "settings": [cfg.min_detection_confidence, cfg.min_tracking_confidence]})
    found = cache.get("bench_pose_world", key)
    if found is not None:
        return np.frombuffer(found, dtype=np.float64).reshape(len(frames), 33, 4).copy()
    import mediapipe

    out = np.full((len(frames), 33, 4), np.nan)
    with mediapipe.solutions.pose.Pose(static_image_mode=False, model_complexity=1,
                                       min_detection_confidence=cfg.min_detection_confidence,
                                       min_tracking_confidence=cfg.min_tracking_confidence) as pose:
        for t, frame in enumerate(frames):
            world = pose.process(np.ascontiguousarray(frame)).pose_world_landmarks
            if world is not None:
                out[t] = [(lm.x, lm.y, lm.z, lm.visibility) for lm in world.landmark]
    cache.put("bench_pose_world", key, out.tobytes())
    return out


def world_angles(world: np.ndarray, min_visibility: float) -> dict[str, np.ndarray]:
    """3D joint angles (knee, hip, elbow per side) and trunk lean (from the world frame's −y) per frame."""
    def at(name: str) -> np.ndarray:
        points = world[:, MEDIAPIPE_33[name], :3].copy()
        points[world[:, MEDIAPIPE_33[name], 3] < min_visibility] = np.nan
        return points

    out = {}
    for side in ("left", "right"):
        for joint in ("knee", "hip", "elbow"):
            a, b, c = ANGLES[joint]
            out[f"{side}_{joint}_angle"] = joint_angle(at(f"{side}_{a}"), at(f"{side}_{b}"), at(f"{side}_{c}"))
    trunk = (at("left_shoulder") + at("right_shoulder")) / 2 - (at("left_hip") + at("right_hip")) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        out["trunk_lean"] = np.degrees(np.arccos(np.clip(-trunk[:, 1] / np.linalg.norm(trunk, axis=-1), -1, 1)))
    return out


VIEW_KINDS = {"knee angle": ["left_knee_angle", "right_knee_angle"], "hip angle": ["left_hip_angle", "right_hip_angle"],
              "elbow angle": ["left_elbow_angle", "right_elbow_angle"], "trunk lean": ["trunk_lean"]}


def view_spread(series_per_view: list[dict[str, np.ndarray]], times: np.ndarray, n: int) -> dict[str, dict[str, float]]:
    """Per kind: median and p95 over view pairs and frames of the per-frame gap, and the median over view pairs
    and sides of the gap of the whole-action mean, robust min and robust max."""
    out = {}
    mask = np.ones(n, bool)
    for kind, names in VIEW_KINDS.items():
        frame_gaps, stat_gaps = [], []
        for a, b in itertools.combinations(series_per_view, 2):
            for name in names:
                gap = np.abs(a[name][:n] - b[name][:n])
                frame_gaps.extend(gap[np.isfinite(gap)].tolist())
                sa, sb = statistics(a[name][:n], times, mask), statistics(b[name][:n], times, mask)
                stat_gaps.extend(abs(sa[s] - sb[s]) for s in ("mean", "p05", "p95") if np.isfinite(sa[s] - sb[s]))
        out[kind] = {"frame median": float(np.median(frame_gaps)) if frame_gaps else float("nan"),
                     "frame p95": p95(frame_gaps),
                     "statistic median": float(np.median(stat_gaps)) if stat_gaps else float("nan"),
                     "statistic max": float(np.max(stat_gaps)) if stat_gaps else float("nan")}
    return out


# --------------------------------------------------------------------------- the run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips-dir", type=Path, default=DEFAULT_CLIPS_DIR)
    parser.add_argument("--clips", nargs="*", default=SINGLE_TAKE, help="clips relative to --clips-dir")
    parser.add_argument("--work", type=Path, default=Path.home() / ".cache" / "viddiff-bench" / "pose_trust")
    parser.add_argument("--cache", type=Path, help="SQLite pose cache (default: WORK/pose.sqlite)")
    parser.add_argument("--markdown", type=Path, help="also write the tables to this Markdown file")
    parser.add_argument("--quick", action="store_true", help="two clips, fewer copies")
    parser.add_argument("--smoothing-frames", type=int, help="override pose.smoothing_frames (default: the config's)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    os.environ.setdefault("GLOG_minloglevel", "2")
    clips = require_clips(args.clips_dir, args.clips[:2] if args.quick else args.clips)
    variants = ("reencode", "rotate90", "slow_vfr", "mirrored") if args.quick else VARIANTS
    args.work.mkdir(parents=True, exist_ok=True)
    cache = Cache(args.cache or args.work / "pose.sqlite")
    estimator = Estimator(cache, args.smoothing_frames)
    started = time.perf_counter()

    by_transform = {name: new_differences() for name in (*variants, *(f"{f:g} fps" for f in SAMPLING_FPS))}
    durations: dict[str, list[float]] = {}
    views_2d, views_3d, view_n, view_times = [], [], None, None
    for clip in clips:
        print(f"{clip.relative_to(args.clips_dir)}:", flush=True)
        native = read_video(clip)
        n = len(native.frames)
        reference = Measured(estimator.kinematics(estimator.track(native)), native.frame_indices, n)
        if clip.as_posix().endswith(tuple(SINGLE_TAKE)):
            world = world_landmarks(native.frames, cache)
            views_3d.append(world_angles(world, PoseConfig().min_confidence))
            views_2d.append(reference.kinematics.values)
            view_n = n if view_n is None else min(view_n, n)
            view_times = native.times_s
        del native
        for name in variants:
            variant = build_variant(clip, name, args.work / "variants", reuse=True)
            video = read_video(variant.path)
            measured = Measured(estimator.kinematics(estimator.track(video)), variant.source_frames[video.frame_indices],
                                n, time_scale=variant.time_scale, mirrored=variant.mirrored)
            compare(reference, measured, by_transform[name])
            for label, error in duration_errors(variant, (None, 4.0, 15.0)).items():
                durations.setdefault(f"{name}: {label}", []).append(error)
            print(f"  {name}: {len(video.frames)} frames", flush=True)
        for fps in SAMPLING_FPS:
            video = read_video(clip, target_fps=fps)
            measured = Measured(estimator.kinematics(estimator.track(video)), video.frame_indices, n)
            compare(reference, measured, by_transform[f"{fps:g} fps"])
        print(f"  sampled at {', '.join(f'{f:g}' for f in SAMPLING_FPS)} fps", flush=True)
        done = clips[: clips.index(clip) + 1]
        lines = report(by_transform, variants, durations, views_2d, views_3d, view_n, view_times, done, args.clips_dir,
                       args.smoothing_frames)
        lines.append(f"\nPose estimation: {estimator.frames} frames, {estimator.seconds:.0f} s (cache hits included); "
                     f"whole run {time.perf_counter() - started:.0f} s.")
        if args.markdown:  # after every clip: a long run's first numbers are readable early
            args.markdown.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def report(by_transform, variants, durations, views_2d, views_3d, view_n, view_times, clips, clips_dir,
           smoothing: Optional[int] = None) -> list[str]:
    names = [str(c.relative_to(clips_dir)) for c in clips]
    cfg = PoseConfig() if smoothing is None else PoseConfig(smoothing_frames=smoothing)
    out = [f"Clips: {', '.join(names)}. BlazePose (legacy API, tracking), kinematics with min_confidence "
           f"{cfg.min_confidence}, {cfg.smoothing_frames}-sample smoothing, side-swap repair "
           f"{'on' if cfg.fix_side_swaps else 'off'}; every frame of each copy.", ""]
    identical = list(variants)
    sampling = [f"{f:g} fps" for f in SAMPLING_FPS]

    out += ["### Floors: p95 of |difference| of robust statistics (mean, p05, p95, p95−p05; whole action and "
            f"{N_STAGES} equal stages) between a clip and its identical-movement copy", ""]
    same_order = [t for t in identical if t not in ("reversed", "mirrored")]
    out += table(["quantity", "unit", *identical, "all but reversed, mirrored", "all copies"], [
        [kind, unit_of(kind), *(shown(kind, p95(robust(by_transform[t], kind))) for t in identical),
         shown(kind, p95([x for t in same_order for x in robust(by_transform[t], kind)])),
         shown(kind, p95([x for t in identical for x in robust(by_transform[t], kind)]))]
        for kind in KINDS
    ])
    out += ["", "### Per frame: p95 of |difference| at the same source frame", ""]
    out += table(["quantity", *identical, *sampling], [
        [kind, *(shown(kind, p95(by_transform[t].per_frame[kind])) for t in (*identical, *sampling))] for kind in KINDS
    ])
    out += ["", "### Sampling: p95 of |statistic at N fps − statistic at the native rate|, robust (mean, p05, p95, "
            "range) / raw extremes (min, max)", ""]
    out += table(["quantity", *sampling], [
        [kind, *(f"{shown(kind, p95(robust(by_transform[t], kind)))} / {shown(kind, p95(raw(by_transform[t], kind)))}"
                 for t in sampling)] for kind in KINDS
    ])
    out += ["", "### Durations: relative error of the duration the method computes (reader's times, clip end) "
            "against the copy's true duration, worst over clips", ""]
    rates = sorted({label.rsplit(", ", 1)[1] for label in durations}, key=lambda r: (r != "native", r))
    rows = []
    for name in identical:
        cells = []
        for rate in rates:
            for scope in ("action", "stage"):
                errors = [e for label, es in durations.items() if label.startswith(f"{name}: {scope}")
                          and label.endswith(rate) for e in es]
                cells.append(f"{max(errors, key=abs):+.1%}" if errors else "–")
        rows.append([name, *cells])
    out += table(["copy", *(f"{scope}, {rate}" for rate in rates for scope in ("action", "stages"))], rows)
    if len(views_2d) >= 2:
        times = view_times[:view_n]
        spread_2d = view_spread(views_2d, times, view_n)
        spread_3d = view_spread(views_3d, times, view_n)
        out += ["", f"### Views: the same take from {len(views_2d)} synchronised cameras (all pairs, frame i with frame i)",
                "", "2D = image-plane angles (the kinematics); 3D = BlazePose's world landmarks. Frame: median / p95 "
                "of the per-frame gap; statistic: median / max over pairs and sides of the gap of the mean, p05, p95.", ""]
        out += table(["quantity", "2D frame", "3D frame", "2D statistic", "3D statistic"], [
            [kind, f"{spread_2d[kind]['frame median']:.1f} / {spread_2d[kind]['frame p95']:.1f}",
             f"{spread_3d[kind]['frame median']:.1f} / {spread_3d[kind]['frame p95']:.1f}",
             f"{spread_2d[kind]['statistic median']:.1f} / {spread_2d[kind]['statistic max']:.1f}",
             f"{spread_3d[kind]['statistic median']:.1f} / {spread_3d[kind]['statistic max']:.1f}"]
            for kind in VIEW_KINDS
        ])
    return out


def robust(diffs: Differences, kind: str) -> list[float]:
    return [x for (k, s), xs in diffs.per_statistic.items() if k == kind and s in ROBUST for x in xs]


def raw(diffs: Differences, kind: str) -> list[float]:
    return [x for (k, s), xs in diffs.per_statistic.items() if k == kind and s in ("min", "max") for x in xs]


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows]


if __name__ == "__main__":
    main()
