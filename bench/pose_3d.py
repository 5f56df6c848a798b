"""Two phones (3D): how close body angles from two calibrated views come to the body's (issue 41).

The take: the Pose2Sim demo (``Demo_SinglePerson``: 4 synchronised, calibrated views, 60 fps, 100 frames, a
Qualisys ``Calib.qca.txt``). BlazePose runs on each view once (cached in --work).

Truth: the triangulation of all four views (:func:`viddiff.pose.multiview.triangulate_performance`). It is not
independent of what it judges: the pairs use the same 2D keypoints and the same code. So a second truth comes
from Pose2Sim's own triangulator (``triangulation_from_best_cameras`` and the functions it calls, read from
Pose2Sim's source and run unchanged on the same 2D keypoints and the same cameras, then the same Butterworth
filter): a different DLT (in distorted pixels), camera exclusion and thresholds (Pose2Sim's demo settings).
Both truths still share BlazePose's 2D errors that all four views make alike; nothing here measures those (no
marker data ships with the demo).

It prints:

1. the two truths against each other (per-frame joint angles);
2. per view pair (6) and joint (knee, hip, elbow; left and right pooled): the median and p95 per-frame angle error
   against each truth, and the share of frames with a value;
3. the same at the level of viddiff's statistics (min, max, mean, range over the whole take, its halves and its
   thirds: the windows stand in for stages), with the interval coverage of the 4-view statistic: the intervals
   without a triangulation part, and with the part calibrated on the pairs without one camera, held out on the
   pairs with it (pooled over the four cameras); the part to ship, calibrated on all pairs;
4. synchronisation: each pair with the second view cut by 0, 12 and 30 frames (its video starting 0, 0.2 and
   0.5 s later): the offset found, its error and whether it was refused;
5. intrinsics from the take's own checkerboard photos (``calibration/intrinsics``, a 4x7 board of 60 mm
   squares) against the Qualisys calibration: reprojection error and focal length;
6. time per second of video: BlazePose on two views (not cached), synchronisation, triangulation, against
   BlazePose on the main view alone, in the same run.

Usage: python bench/pose_3d.py [--clips-dir DIR] [--work DIR] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import ast
import itertools
import math
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Optional

import numpy as np

from viddiff.cache import Cache
from viddiff.config import PoseConfig
from viddiff.pose.calibration import CalibrationError, Camera
from viddiff.pose.checkerboard import Board, calibrate_intrinsics
from viddiff.pose.estimators import build_pose_estimator
from viddiff.pose.filtering import butterworth
from viddiff.pose.kinematics import Kinematics
from viddiff.pose.kinematics3d import compute_kinematics_3d
from viddiff.pose.measure import Settings, VideoMeasures, measure
from viddiff.pose.multiview import PerformancePose, triangulate_performance
from viddiff.pose.setup import read_cameras
from viddiff.pose.sync import SyncError, SyncInfo, motion_offset
from viddiff.pose.track import PoseTrack, estimate_track
from viddiff.schema import MeasurementSpec
from viddiff.video import read_video

DEFAULT_CLIPS_DIR = Path(os.environ.get("VIDDIFF_POSE_CLIPS", "/work/scratch/pose2sim"))
TAKE = "Pose2Sim/Demo_SinglePerson"
CAMERAS = ("cam01", "cam02", "cam03", "cam04")
JOINTS = ("knee", "hip", "elbow")
QUANTITY_SIDES = {
    "knee_angle": ("left", "right", "both"), "hip_angle": ("left", "right", "both"),
    "elbow_angle": ("left", "right", "both"), "shoulder_angle": ("left", "right", "both"),
    "ankle_angle": ("left", "right", "both"), "trunk_lean": ("none",), "stance_width": ("none",),
    "grip_width": ("none",), "hip_height": ("none",), "wrist_height": ("left", "right"),
}
STATISTICS = ("mean", "min", "max", "range")
CUTS = (0, 12, 30)
GIVEN = SyncInfo(offsets=())
POSE2SIM_SETTINGS = {"triangulation": {
    "reproj_error_threshold_triangulation": 15, "min_cameras_for_triangulation": 2, "handle_LR_swap": False,
    "undistort_points": False,
}}
"""The demo's Config.toml values (likelihood threshold 0.3 is applied before, as Pose2Sim does)."""


# --------------------------------------------------------------------------- Pose2Sim's triangulator


def pose2sim_functions(source_dir: Path) -> dict:
    """Pose2Sim's ``triangulation_from_best_cameras`` and the helpers it calls, compiled from its own source files
    (the module imports pandas, rtoml, anytree, c3d... which these functions do not use)."""
    import cv2

    wanted = {"common.py": ("weighted_triangulation", "reprojection", "euclidean_distance"),
              "triangulation.py": ("triangulation_from_best_cameras",)}
    namespace: dict = {"np": np, "cv2": cv2, "it": itertools}
    for name, functions in wanted.items():
        tree = ast.parse((source_dir / name).read_text())
        nodes = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in functions]
        if len(nodes) != len(functions):
            sys.exit(f"error: {source_dir / name} lacks {functions}")
        exec(compile(ast.Module(body=nodes, type_ignores=[]), str(source_dir / name), "exec"), namespace)
    return namespace


def pose2sim_points(tracks: list[PoseTrack], cameras: list[Camera], functions: dict) -> np.ndarray:
    """(T, J, 3) Pose2Sim's triangulation of the tracks' keypoints (likelihood < 0.3 dropped), Butterworth-filtered."""
    projections = [c.matrix @ c.projection() for c in cameras]  # Pose2Sim's computeP: K [R | T], no undistortion
    xy = np.stack([t.xy for t in tracks])
    conf = np.stack([t.confidence for t in tracks])
    unsure = conf < 0.3
    x, y = np.where(unsure, np.nan, xy[..., 0]), np.where(unsure, np.nan, xy[..., 1])
    likelihood = np.where(unsure, np.nan, conf)
    n_frames, n_joints = xy.shape[1:3]
    out = np.full((n_frames, n_joints, 3), np.nan)
    for t in range(n_frames):
        for j in range(n_joints):
            coords = (x[:, t, j], y[:, t, j], likelihood[:, t, j])
            q, *_ = functions["triangulation_from_best_cameras"](POSE2SIM_SETTINGS, coords, coords, projections, None)
            out[t, j] = q
    return butterworth(out, tracks[0].times_s)


# --------------------------------------------------------------------------- measuring


def kinematics_of(points: np.ndarray, performance: PerformancePose, cfg: PoseConfig) -> Kinematics:
    return compute_kinematics_3d(points, np.where(np.isfinite(points).all(-1), 1.0, 0.0), performance.times_s,
                                 performance.frame_indices, performance.up, pictured=performance.pictured,
                                 width=performance.width, height=performance.height, min_confidence=cfg.min_confidence)


def windows(times: np.ndarray) -> dict[str, tuple[float, float]]:
    step = float(np.median(np.diff(times)))
    end = float(times[-1] + step)
    out = {"whole": (0.0, end)}
    out.update({f"half {k + 1}": (end * k / 2, end * (k + 1) / 2) for k in range(2)})
    out.update({f"third {k + 1}": (end * k / 3, end * (k + 1) / 3) for k in range(3)})
    return out


def settings_of(cfg: PoseConfig) -> Settings:
    return Settings(min_coverage=cfg.min_coverage, min_frames=cfg.min_frames, min_seconds=cfg.min_seconds,
                    robust_window_s=cfg.robust_window_s, smoothing_frames=cfg.smoothing_frames,
                    noise_floors=cfg.noise_floors.model_dump(), alignment=cfg.alignment)


def statistic_records(pair: PerformancePose, kin: Kinematics, truth: Kinematics, cfg: PoseConfig) -> list[dict]:
    """Every statistic of every window: the pair's value and half-width (no triangulation part) and the truth's."""
    settings = settings_of(cfg)
    out = []
    step = float(np.median(np.diff(pair.times_s)))
    for name, window in windows(pair.times_s).items():
        def video(k: Kinematics) -> VideoMeasures:
            return VideoMeasures(windows=np.array([window]), frame_indices=pair.frame_indices, times_s=pair.times_s,
                                 kinematics=k, frame_step_s=step, view=pair.view(), triangulation_errors={})
        a, b = video(kin), video(truth)
        for quantity, sides in QUANTITY_SIDES.items():
            for side in sides:
                for stat in STATISTICS:
                    spec = MeasurementSpec(quantity=quantity, side=side, statistic=stat, direction="greater")
                    ev = measure("s", spec, a, b, ["whole"], estimator="bench", settings=settings)
                    if ev.value_a is None or ev.value_b is None:
                        continue
                    out.append({"quantity": quantity, "scope": name, "value": ev.value_a, "truth": ev.value_b,
                                "half_width": ev.interval_a.half_width, "statistic": stat})
    return out


def covered(record: dict, part: float) -> bool:
    return abs(record["value"] - record["truth"]) <= math.hypot(record["half_width"], part)


def calibrate(records: list[dict], target: float) -> dict[str, float]:
    """Per quantity, the smallest triangulation part (0.1° or 0.01 body units) covering ``target`` of ``records``."""
    out = {}
    for quantity in QUANTITY_SIDES:
        rows = [r for r in records if r["quantity"] == quantity]
        if not rows:
            continue
        step = 0.1 if quantity.endswith(("angle", "lean")) else 0.01
        part = 0.0
        while np.mean([covered(r, part) for r in rows]) < target:
            part += step
        out[quantity] = round(part, 3)
    return out


def coverage(records: list[dict], parts: dict[str, float]) -> tuple[int, int]:
    hits = [covered(r, parts.get(r["quantity"], 0.0)) for r in records]
    return int(sum(hits)), len(hits)


def angle_errors(kin: Kinematics, truth: Kinematics, joint: str) -> tuple[np.ndarray, float]:
    """Per-frame |angle − truth| of both sides of ``joint`` pooled, and the share of truth frames with a value."""
    errors, have = [], []
    for side in ("left", "right"):
        a, b = kin.values[f"{side}_{joint}_angle"], truth.values[f"{side}_{joint}_angle"]
        both = np.isfinite(a) & np.isfinite(b)
        errors.append(np.abs(a - b)[both])
        have.append(both.sum() / max(1, np.isfinite(b).sum()))
    return np.concatenate(errors), float(np.mean(have))


def cut(track: PoseTrack, frames: int) -> PoseTrack:
    t = track.times_s[frames:]
    return replace(track, xy=track.xy[frames:], confidence=track.confidence[frames:], times_s=t - t[0],
                   frame_indices=track.frame_indices[frames:] - frames,
                   world_xyz=None if track.world_xyz is None else track.world_xyz[frames:])


# --------------------------------------------------------------------------- output


def fmt(value: Optional[float], digits: int = 1) -> str:
    return "–" if value is None or not np.isfinite(value) else f"{value:.{digits}f}"


def pct(k: int, n: int) -> str:
    return f"{k}/{n} ({100 * k / n:.0f}%)" if n else "0/0"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clips-dir", type=Path, default=DEFAULT_CLIPS_DIR)
    parser.add_argument("--work", type=Path, default=Path("/tmp/viddiff-pose-3d"))
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    cfg = PoseConfig()
    folder = args.clips_dir / TAKE
    calibration = folder / "calibration" / "Calib.qca.txt"
    if not calibration.is_file():
        sys.exit(f"error: {calibration} missing: unpack the pose2sim 0.10.49 wheel into --clips-dir")
    estimator = build_pose_estimator(cfg)
    cache = Cache(args.work / "pose.sqlite")
    cameras_by_name = {c.name: c for c in read_cameras(calibration)}
    videos = [read_video(folder / "videos" / f"{name}.mp4") for name in CAMERAS]
    duration = float(len(videos[0].frames) / videos[0].fps)

    # timing first, uncached: one view, then the second view, sync and triangulation
    clock = {}
    t0 = time.perf_counter()
    main_track = estimate_track(videos[0], build_pose_estimator(cfg), None, cfg.subject)
    clock["pose, main view"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    second = estimate_track(videos[1], build_pose_estimator(cfg), None, cfg.subject)
    clock["pose, second view"] = time.perf_counter() - t0
    fitted_pair = [cameras_by_name[n].fitted_to(t.width, t.height) for n, t in zip(CAMERAS[:2], (main_track, second))]
    t0 = time.perf_counter()
    found = motion_offset(main_track, second, *fitted_pair)
    clock["synchronisation (motion)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    triangulate_performance([main_track, second], fitted_pair, SyncInfo(offsets=(found,))).kinematics()
    clock["triangulation, filter, 3D kinematics"] = time.perf_counter() - t0

    tracks = [estimate_track(v, estimator, cache, cfg.subject) for v in videos]
    cameras = [cameras_by_name[n].fitted_to(t.width, t.height) for n, t in zip(CAMERAS, tracks)]
    truth_perf = triangulate_performance(tracks, cameras, GIVEN)
    truth = truth_perf.kinematics(min_confidence=cfg.min_confidence)
    functions = pose2sim_functions(args.clips_dir / "Pose2Sim")
    truth_p2s = kinematics_of(pose2sim_points(tracks, cameras, functions), truth_perf, cfg)
    out: list[str] = []

    out += ["### The two truths (4 views): viddiff's triangulation against Pose2Sim's, per-frame joint angles", ""]
    rows = []
    for joint in JOINTS:
        e, have = angle_errors(truth, truth_p2s, joint)
        rows.append([joint, fmt(np.median(e)), fmt(np.percentile(e, 95)), f"{100 * have:.0f}%"])
    out += table(["joint", "median |difference| (°)", "p95 (°)", "frames in both"], rows) + [""]
    found_px = truth_perf.error_px[np.isfinite(truth_perf.error_px)]
    out += [f"4-view reprojection error: median {fmt(np.median(found_px))} px, p90 {fmt(np.percentile(found_px, 90))} px "
            f"({truth_perf.width}x{truth_perf.height}); joint-frames triangulated: "
            f"{100 * np.isfinite(truth_perf.points_3d).all(-1).mean():.0f}%.", ""]

    pairs = list(itertools.combinations(range(4), 2))
    frame_rows, records = [], {}
    for a, b in pairs:
        name = f"{CAMERAS[a]}+{CAMERAS[b]}"
        perf = triangulate_performance([tracks[a], tracks[b]], [cameras[a], cameras[b]], GIVEN)
        # measured in the main view's picture of the same world: the truth's kinematics are world quantities
        kin = perf.kinematics(min_confidence=cfg.min_confidence)
        row = [name, fmt(float(np.nanmedian(perf.error_px)))]
        for joint in JOINTS:
            e, have = angle_errors(kin, truth, joint)
            e2, _ = angle_errors(kin, truth_p2s, joint)
            row.append(f"{fmt(np.median(e))} / {fmt(np.percentile(e, 95))} ({fmt(np.median(e2))} / {fmt(np.percentile(e2, 95))}), {100 * have:.0f}%")
        frame_rows.append(row)
        records[name] = statistic_records(perf, kin, truth, cfg)
    out += ["### Per-frame joint-angle error of each view pair", "",
            "Median / p95 |pair − 4-view truth| in degrees (against Pose2Sim's 4-view triangulation in brackets), "
            "left and right pooled; % = frames of the truth that the pair also measured.", ""]
    out += table(["pair", "reprojection (px)", *[f"{j}" for j in JOINTS]], frame_rows) + [""]

    out += ["### At the level of viddiff's statistics (min, max, mean, range; whole, halves, thirds)", ""]
    rows = []
    everything = [r for rs in records.values() for r in rs]
    for name, rs in records.items():
        row = [name]
        for joint in JOINTS:
            e = [abs(r["value"] - r["truth"]) for r in rs if r["quantity"] == f"{joint}_angle"]
            mm = [abs(r["value"] - r["truth"]) for r in rs if r["quantity"] == f"{joint}_angle" and r["statistic"] in ("min", "max")]
            row.append(f"{fmt(np.median(e))} / {fmt(np.percentile(e, 95))} (min, max: {fmt(np.median(mm))})")
        rows.append(row)
    out += table(["pair", *[f"{j} angle: median / p95 (°)" for j in JOINTS]], rows) + [""]

    out += ["Interval coverage of the 4-view statistic:", ""]
    rows = []
    none = coverage(everything, {})
    rows.append(["no triangulation part", pct(*none)])
    for target in (0.9, 0.95):
        hit = [0, 0]
        for camera in range(4):
            calibrate_on = [r for (a, b), rs in zip(pairs, records.values()) if camera not in (a, b) for r in rs]
            test_on = [r for (a, b), rs in zip(pairs, records.values()) if camera in (a, b) for r in rs]
            k, n = coverage(test_on, calibrate(calibrate_on, target))
            hit[0] += k
            hit[1] += n
        rows.append([f"part calibrated to {100 * target:.0f}% on the pairs without a camera, held out: the pairs with it", pct(*hit)])
        for joint in JOINTS:
            sub_hit = [0, 0]
            for camera in range(4):
                calibrate_on = [r for (a, b), rs in zip(pairs, records.values()) if camera not in (a, b) for r in rs]
                test_on = [r for (a, b), rs in zip(pairs, records.values()) if camera in (a, b) for r in rs if r["quantity"] == f"{joint}_angle"]
                k, n = coverage(test_on, calibrate(calibrate_on, target))
                sub_hit[0] += k
                sub_hit[1] += n
            rows.append([f"  {joint} angle", pct(*sub_hit)])
    out += table(["interval", "covers the 4-view truth"], rows) + [""]
    shipped = calibrate(everything, 0.95)
    out += ["Triangulation part calibrated on all six pairs to cover 95% (`TRIANGULATION_ERRORS`): "
            + ", ".join(f"{q} {v:g}" for q, v in shipped.items()), ""]

    out += ["### Synchronisation from the motion (the second view's video cut to start later)", ""]
    rows = []
    errors = []
    for a, b in pairs:
        for frames in CUTS:
            truth_offset = -frames / 60
            try:
                o = motion_offset(tracks[a], cut(tracks[b], frames), cameras[a], cameras[b])
                error = o.offset_s - truth_offset
                errors.append((abs(error), o.uncertainty_s))
                rows.append([f"{CAMERAS[a]}+{CAMERAS[b]}", f"{truth_offset:+.3f}", f"{o.offset_s:+.3f} ± {o.uncertainty_s:.3f}",
                             f"{1000 * error:+.0f}", "yes" if abs(error) <= 2 * o.uncertainty_s else "no"])
            except SyncError as exc:
                rows.append([f"{CAMERAS[a]}+{CAMERAS[b]}", f"{truth_offset:+.3f}", "refused", "", str(exc).split(":")[1][:60]])
    out += table(["pair", "true offset (s)", "found (s)", "error (ms)", "within 2σ"], rows) + [""]
    e = np.array(errors)
    out += [f"Found {len(e)} of {len(rows)}: median |error| {fmt(1000 * np.median(e[:, 0]), 0)} ms, max "
            f"{fmt(1000 * e[:, 0].max(), 0)} ms; within 2σ: {pct(int((e[:, 0] <= 2 * e[:, 1]).sum()), len(e))}.", ""]

    out += ["### Intrinsics from the take's checkerboard photos (4x7 inner corners, 60 mm)", ""]
    rows = []
    board = Board(columns=4, rows=7, square_m=0.06)
    for name in CAMERAS:
        photos = folder / "calibration" / "intrinsics" / f"int_{name}_img"
        if not photos.is_dir():
            continue
        frames = read_video(photos, fps_original=1.0).frames
        try:
            camera, used = calibrate_intrinsics(list(frames), board, name)
        except CalibrationError as exc:
            rows.append([name, str(exc), "", ""])
            continue
        qualisys = cameras_by_name[name].fitted_to(camera.width, camera.height)
        rows.append([name, f"{used} of {len(frames)}", fmt(camera.error_px, 2),
                     f"{camera.matrix[0, 0]:.0f} vs {qualisys.matrix[0, 0]:.0f} ({100 * (camera.matrix[0, 0] / qualisys.matrix[0, 0] - 1):+.1f}%)"])
    out += table(["camera", "photos with the board", "reprojection error (px RMS)", "focal length: board vs Qualisys (px)"], rows) + [""]

    out += [f"### Time per second of video ({duration:.2f} s, {videos[0].frames.shape[2]}x{videos[0].frames.shape[1]}, 60 fps; this machine's CPU)", ""]
    total = sum(clock.values())
    rows = [[k, fmt(v / duration, 2)] for k, v in clock.items()]
    rows.append(["two views, all steps", fmt(total / duration, 2)])
    out += table(["step", "s per s of video"], rows) + [""]
    out += [f"Two views in 3D against one view's pose: {total / clock['pose, main view']:.2f}×.", ""]
    out += [f"({time.perf_counter() - started:.0f} s)"]
    text = "\n".join(out)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")


if __name__ == "__main__":
    main()
