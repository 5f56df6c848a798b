"""Two phones (3D): how close body angles from two calibrated views come to the body's (issue 41).

The take: the Pose2Sim demo (``Demo_SinglePerson``: 4 synchronised, calibrated views, 60 fps, 100 frames, a
Qualisys ``Calib.qca.txt``). BlazePose runs on each view once (cached in --work).

Truths (all from the four views of the single take, each Butterworth-filtered):

- *4-view (ours, Full)*: our own triangulation (:func:`viddiff.pose.multiview.triangulate_performance`) of the
  BlazePose Full keypoints. Not independent of what it judges: the pairs use the same keypoints and code.
- *4-view (Pose2Sim's, Full)*: Pose2Sim's own triangulator (``triangulation_from_best_cameras`` and the
  functions it calls, read from Pose2Sim's source and run unchanged, with its demo settings) on the same keypoints.
- *4-view (Pose2Sim's, Heavy)*: the same Pose2Sim triangulator on the keypoints of BlazePose **Heavy**, a
  different, larger network (``--heavy-model``: its landmark model from the npm package ``@mediapipe/pose``
  packed as a Tasks ``.task``; skipped with a message when the file is absent). Neither the network nor the
  triangulation code is the pairs'. It still is not marker truth: both networks learnt where joints are from
  similar labels, and no marker data ships with the demo.

It prints:

1. the truths against each other (per-frame joint angles);
2. per view pair (6) and joint (knee, hip, elbow; left and right pooled): the median and p95 per-frame angle error
   against each truth, and the share of frames with a value; where that error comes from (each side's steady
   bias over the take against the scatter around it, the frames whose sides were labelled unlike the 4 views)
   and the per-pair target under other triangulation settings (:data:`SWEEP`); the demo's calibration refined
   from the body (cameras turned about their centres; measured, not shipped): how much better the keypoints
   agree across views, and the pairs' errors against truths triangulated through it;
3. the same at the level of viddiff's statistics (min, max, mean, range over the whole take, its halves and its
   thirds: the windows stand in for stages), with the interval coverage of the truths' statistics: the intervals
   without a triangulation part, and with the part (times each pair's :func:`viddiff.pose.triangulation_part.part_scale`)
   calibrated on the pairs without one camera, held out on the pairs with it (pooled over the four cameras);
   across takes: calibrated on one take's pairs, the coverage on the other's (``Demo_MultiPerson``, which is
   ``Demo_Batch/Trial_2``: the athlete's same movement with a second person composited in, encoded apart,
   against the single take's truths; the athlete measured by the first ``pose.subject`` rule within 40 px of the
   single take's), for a constant part, one scaled by the sight angle alone and one by the whole part scale;
   the part to ship, calibrated on both takes at the least target that covered 90% across takes both ways
   against every truth (per quantity the larger of the fits), with each pair's scale and coverage;
4. synchronisation: each pair with the second view's track cut by 0, 12 and 30 frames (its video starting 0,
   0.2 and 0.5 s later), and three pairs with the second video itself trimmed and estimated again: the offset
   found, its error and whether it was refused;
5. intrinsics from the take's own checkerboard photos (``calibration/intrinsics``, a 4x7 board of 60 mm
   squares) against the Qualisys calibration: reprojection error and focal length;
6. calibration from the person alone (not offered): for each pair, with the intrinsics known, the second
   camera's pose from the body itself (swap-free midpoints of left/right joints and the nose where both views are
   sure: essential matrix with RANSAC, then a bundle adjustment of the pose and the points, Huber loss), and
   the joint-angle errors it gives against the 4-view truth;
7. time per second of video: BlazePose on two views (not cached), synchronisation, triangulation, against
   BlazePose on the main view alone, in the same run.

Usage: python bench/pose_3d.py [--clips-dir DIR] [--work DIR] [--markdown FILE] [--heavy-model FILE.task]
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
from viddiff.pose.multiview import GROUPS, MIN_CONFIDENCE, PerformancePose, label_alike, triangulate_performance
from viddiff.pose.setup import read_cameras
from viddiff.pose.skeleton import INDEX
from viddiff.pose.triangulation_part import PartScale, sight_angle as sight_angle_at
from viddiff.pose.sync import SyncError, SyncInfo, motion_offset
from viddiff.pose.track import PoseTrack, estimate_track
from viddiff.schema import MeasurementSpec
from viddiff.video import read_video

from pose_statements import QUANTITY_SIDES, STATISTICS, take_windows  # noqa: E402 (bench/)

DEFAULT_CLIPS_DIR = Path(os.environ.get("VIDDIFF_POSE_CLIPS", "/work/scratch/pose2sim"))
TAKE = "Pose2Sim/Demo_SinglePerson"
OTHER_TAKE = "Pose2Sim/Demo_MultiPerson"
"""The same recording of the athlete with a second person composited in (bench/pose_accuracy.py: the same movement
frame for frame), encoded apart: a held-out take for the intervals."""
CAMERAS = ("cam01", "cam02", "cam03", "cam04")
JOINTS = ("knee", "hip", "elbow")
CUTS = (0, 12, 30)
GIVEN = SyncInfo(offsets=())
TARGETS = (0.9, 0.95, 0.975, 0.99)
OURS = "4-view (ours, Full)"
P2S_FULL = "4-view (Pose2Sim's, Full)"
HEAVY = "4-view (Pose2Sim's, Heavy)"
DEFAULT_HEAVY_MODEL = Path(os.environ.get("VIDDIFF_HEAVY_TASK", "/work/scratch/models/pose_landmarker_heavy_npm.task"))
"""BlazePose Heavy's landmark model from the npm package ``@mediapipe/pose`` packed with the Tasks detector into a
``.task`` (optional: without it the Heavy truth is skipped)."""
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


def settings_of(cfg: PoseConfig) -> Settings:
    return Settings(min_coverage=cfg.min_coverage, min_frames=cfg.min_frames, min_seconds=cfg.min_seconds,
                    robust_window_s=cfg.robust_window_s, smoothing_frames=cfg.smoothing_frames,
                    noise_floors=cfg.noise_floors.model_dump(), alignment=cfg.alignment)


def statistic_records(pair: PerformancePose, kin: Kinematics, truth: Kinematics, cfg: PoseConfig, scale_parts: bool = True) -> list[dict]:
    """Every statistic of every window: the pair's value and half-width (no triangulation part), the truth's, and
    the pair's part scale (:func:`viddiff.pose.triangulation_part.part_scale`; 1 with ``scale_parts`` false)."""
    settings = settings_of(cfg)
    out = []
    scale = pair.part_scale.factor if scale_parts else 1.0
    sight_scale = PartScale(sight_deg=pair.part_scale.sight_deg, limb_share=1.0).factor
    step = float(np.median(np.diff(pair.times_s)))
    for name, window in take_windows(pair.times_s).items():
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
                                "half_width": ev.interval_a.half_width, "statistic": stat, "scale": scale,
                                "sight_scale": sight_scale})
    return out


def covered(record: dict, part: float) -> bool:
    """Whether the record's interval with the triangulation part ``part`` (scaled as the pair's) covers the truth."""
    return abs(record["value"] - record["truth"]) <= math.hypot(record["half_width"], part * record["scale"])


def calibrate(records: list[dict], target: float) -> dict[str, float]:
    """Per quantity, the smallest triangulation part (0.1° or 0.01 body units) covering ``target`` of ``records``."""
    out = {}
    for quantity in QUANTITY_SIDES:
        rows = [r for r in records if r["quantity"] == quantity]
        if not rows:
            continue
        step = 0.1 if quantity.endswith(("angle", "lean")) else 0.01
        # the part each record needs to be covered; the smallest step-multiple covering ``target`` of them
        needed = sorted(math.sqrt(max(0.0, (r["value"] - r["truth"]) ** 2 - r["half_width"] ** 2)) / r["scale"] for r in rows)
        part = math.ceil(round(needed[max(0, math.ceil(target * len(rows)) - 1)] / step, 6)) * step
        out[quantity] = round(part, 3)
    return out


def unscaled(records: list[dict]) -> list[dict]:
    """The records as if every pair's part were the same (a constant part, as before the part scale)."""
    return [dict(r, scale=1.0) for r in records]


def sight_only(records: list[dict]) -> list[dict]:
    """The records as if the part were scaled by the sight angle alone (one over its sine)."""
    return [dict(r, scale=r["sight_scale"]) for r in records]


def heavy_model_tracks(model: Path, videos: list, cache: Cache) -> Optional[list[PoseTrack]]:
    """BlazePose Heavy's tracks of the take's views (``None`` when the model file is absent)."""
    if not model.is_file():
        return None
    heavy = PoseConfig(blazepose={"model_path": str(model)})
    estimator = build_pose_estimator(heavy)
    return [estimate_track(v, estimator, cache, heavy.subject) for v in videos]


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


def sight_angle(a: Camera, b: Camera, points: np.ndarray) -> float:
    """Degrees between two cameras' lines of sight to the body's median hip centre."""
    return sight_angle_at(a, b, np.nanmedian((points[:, INDEX["left_hip"]] + points[:, INDEX["right_hip"]]) / 2, axis=0))


def other_take_tracks(folder: Path, reference: list[PoseTrack], estimator, cache: Cache, cfg: PoseConfig) -> Optional[list[PoseTrack]]:
    """The athlete's tracks in the other take: per camera, the first subject rule whose person stays within 40 px
    (median) of the single take's track (``None`` when the take is not unpacked)."""
    if not folder.is_dir():
        return None
    out = []
    for name, ref in zip(CAMERAS, reference):
        video = read_video(folder / "videos" / f"{name}.mp4")
        for rule in ("auto", "left", "right", "largest", "centre"):
            track = estimate_track(video, estimator, cache, rule)
            scale = np.array([ref.width / track.width, ref.height / track.height])
            if len(track.xy) == len(ref.xy) and np.nanmedian(np.linalg.norm(track.xy * scale - ref.xy, axis=-1)) < 40:
                break
        out.append(track)
    return out


def cut(track: PoseTrack, frames: int) -> PoseTrack:
    t = track.times_s[frames:]
    return replace(track, xy=track.xy[frames:], confidence=track.confidence[frames:], times_s=t - t[0],
                   frame_indices=track.frame_indices[frames:] - frames,
                   world_xyz=None if track.world_xyz is None else track.world_xyz[frames:])


# --------------------------------------------------------------------------- where a pair's error comes from

SWEEP = {
    "as shipped": {},
    "no bone-length gate": {"bone_tolerance": math.inf}, "bone-length gate 10%": {"bone_tolerance": 0.1},
    "bone-length gate 30%": {"bone_tolerance": 0.3}, "low-pass 3 Hz": {"cutoff_hz": 3.0}, "low-pass 10 Hz": {"cutoff_hz": 10.0},
    "view left out beyond 1% of the picture": {"max_error": 0.01}, "beyond 2.5%": {"max_error": 0.025},
    "keypoints under 0.5 confidence left out": {"min_confidence": 0.5}, "under 0.7": {"min_confidence": 0.7},
}
"""Settings of the triangulation tried against the per-pair target (``triangulate_performance``'s keywords)."""


def relabelled(tracks: list[PoseTrack], cameras: list[Camera]) -> list[np.ndarray]:
    """Per limb group, (C, T) whether :func:`label_alike` swapped each view's own sides."""
    pixels = np.stack([t.xy for t in tracks])
    out, _ = label_alike(cameras, pixels, np.stack([t.confidence for t in tracks]), MIN_CONFIDENCE)
    return [np.stack([np.abs(out[c][:, g] - pixels[c][:, g]).max(axis=(1, 2)) > 1e-9 for c in range(len(tracks))]) for g in GROUPS]


def error_sources(tracks: list[PoseTrack], cameras: list[Camera], truths: dict[str, Kinematics], fitted_on: list[str],
                  cfg: PoseConfig) -> list[str]:
    """Per pair and joint: how much of the error is a steady bias of one side over the take (the views' keypoints
    placed off alike in every frame) and how much scatters; how often the sides were labelled unlike the 4 views;
    and the per-pair target under other triangulation settings."""
    pairs = list(itertools.combinations(range(len(tracks)), 2))
    four = relabelled(tracks, cameras)
    out = ["### Where a pair's error comes from", "",
           "Per joint: each side's *bias* (the signed median of pair − truth over the take) and the *scatter* around "
           "it (median |error − its side's bias|, sides pooled), in degrees.", ""]
    for truth_name in fitted_on:
        rows = []
        for a, b in pairs:
            kin = triangulate_performance([tracks[a], tracks[b]], [cameras[a], cameras[b]], GIVEN).kinematics(min_confidence=cfg.min_confidence)
            row = [f"{CAMERAS[a]}+{CAMERAS[b]}"]
            for joint in JOINTS:
                bias, scatter = [], []
                for side in ("left", "right"):
                    e = kin.values[f"{side}_{joint}_angle"] - truths[truth_name].values[f"{side}_{joint}_angle"]
                    e = e[np.isfinite(e)]
                    bias.append(float(np.median(e)))
                    scatter.append(e - bias[-1])
                row.append(f"{bias[0]:+.1f}, {bias[1]:+.1f} / {fmt(np.median(np.abs(np.concatenate(scatter))))}")
            if truth_name == fitted_on[0]:
                pair = relabelled([tracks[a], tracks[b]], [cameras[a], cameras[b]])
                unlike = sum(int(((pair[g][0] ^ pair[g][1]) != (four[g][a] ^ four[g][b])).sum()) for g in range(len(GROUPS)))
                row.append(f"{unlike} of {len(GROUPS) * len(tracks[a].times_s)}")
            rows.append(row)
        labelled = ["limb-group frames labelled unlike the 4 views"] if truth_name == fitted_on[0] else []
        out += [f"Against {truth_name}:", ""]
        out += table(["pair", *[f"{j}: bias left, right / scatter" for j in JOINTS], *labelled], rows) + [""]
    out += ["Other triangulation settings: the pair-joint medians (6 pairs × knee, hip, elbow) within the 5° target, "
            "the worst, the mean, and the share of the truth's elbow frames measured.", ""]
    rows = []
    for name, settings in SWEEP.items():
        kins = [triangulate_performance([tracks[a], tracks[b]], [cameras[a], cameras[b]], GIVEN, **settings)
                .kinematics(min_confidence=cfg.min_confidence) for a, b in pairs]
        row = [name]
        for truth_name in fitted_on:
            medians = np.array([[np.median(angle_errors(k, truths[truth_name], j)[0]) for j in JOINTS] for k in kins])
            have = np.mean([angle_errors(k, truths[truth_name], "elbow")[1] for k in kins])
            row.append(f"{int((medians <= 5).sum())}/18, worst {fmt(medians.max())}, mean {fmt(medians.mean(), 2)}, elbow frames {100 * have:.0f}%")
        rows.append(row)
    out += table(["setting", *[f"against {t}" for t in fitted_on]], rows) + [""]
    return out


# --------------------------------------------------------------------------- the calibration refined from the body


def turned(camera: Camera, rotation: np.ndarray) -> Camera:
    """``camera`` turned about its own centre by the Rodrigues vector ``rotation``."""
    from viddiff.pose.setup import rodrigues_to_matrix

    turn = rodrigues_to_matrix(rotation) @ camera.rotation
    return replace(camera, rotation=turn, translation=-turn @ camera.centre)


def refined_rotations(tracks: list[PoseTrack], cameras: list[Camera], *, hold_first: bool, rounds: int = 4) -> list[Camera]:
    """The cameras turned about their centres so that the keypoints they are sure of (confidence ≥ 0.7) reproject
    best onto the take's triangulation (Huber loss, alternating with triangulating again); the first camera holds
    the world when ``hold_first``. Positions and lenses stay the calibration's."""
    from scipy.optimize import least_squares

    cameras = list(cameras)
    for _ in range(rounds):
        points = triangulate_performance(tracks, cameras, GIVEN).points_3d
        out = []
        for k, (track, camera) in enumerate(zip(tracks, cameras)):
            if k == 0 and hold_first:
                out.append(camera)
                continue
            ok = np.isfinite(points).all(-1) & (track.confidence >= 0.7) & np.isfinite(track.xy).all(-1)
            world, seen = points[ok], track.xy[ok]
            fit = least_squares(lambda x: (turned(camera, x).project(world) - seen).ravel(), np.zeros(3), loss="huber", f_scale=10.0)
            out.append(turned(camera, fit.x))
        cameras = out
    return cameras


def turn_degrees(a: Camera, b: Camera) -> float:
    change = b.rotation @ a.rotation.T
    return math.degrees(math.acos(float(np.clip((np.trace(change) - 1) / 2, -1.0, 1.0))))


def refined_calibration(tracks: list[PoseTrack], heavy: Optional[list[PoseTrack]], cameras: list[Camera], functions: dict,
                        cfg: PoseConfig) -> list[str]:
    """Is the demo's calibration itself part of the pairs' error? Its cameras turned from the body (Full keypoints,
    all four views): how far they turn, how much better the Full and (independent of the fit) the Heavy keypoints
    then agree across the four views, and the pairs' errors against truths triangulated through it."""
    refined = refined_rotations(tracks, cameras, hold_first=False)
    out = ["### The calibration refined from the body (measured, not shipped)", "",
           "Each camera turned about its centre so that the Full keypoints it is sure of reproject best onto the "
           "4-view triangulation (alternating, Huber loss; positions and lenses kept): "
           + ", ".join(f"{c.name} {turn_degrees(c, r):.2f}°" for c, r in zip(cameras, refined)) + ".", ""]
    rows = []
    for name, kept in (("Full", tracks), ("Heavy (not used in the fit)", heavy)):
        if kept is None:
            continue
        before = float(np.nanmedian(triangulate_performance(kept, cameras, GIVEN).error_px))
        after = float(np.nanmedian(triangulate_performance(kept, refined, GIVEN).error_px))
        rows.append([name, fmt(before), fmt(after)])
    out += table(["keypoints", "4-view reprojection, Qualisys (px, median)", "refined (px)"], rows) + [""]
    refined_truth = triangulate_performance(tracks, refined, GIVEN)
    truths = {OURS: refined_truth.kinematics(min_confidence=cfg.min_confidence)}
    if heavy is not None:
        truths[HEAVY] = kinematics_of(pose2sim_points(heavy, refined, functions), refined_truth, cfg)
    rows = []
    pairs = list(itertools.combinations(range(len(tracks)), 2))
    for name, calibrate_pair in (("the refined 4-view calibration", lambda a, b: [refined[a], refined[b]]),
                                 ("each pair refined from its own two views (the main camera held)",
                                  lambda a, b: refined_rotations([tracks[a], tracks[b]], [cameras[a], cameras[b]], hold_first=True))):
        kins = [triangulate_performance([tracks[a], tracks[b]], calibrate_pair(a, b), GIVEN).kinematics(min_confidence=cfg.min_confidence)
                for a, b in pairs]
        row = [name]
        for truth in truths.values():
            medians = np.array([[np.median(angle_errors(k, truth, j)[0]) for j in JOINTS] for k in kins])
            row.append(f"{int((medians <= 5).sum())}/18, worst {fmt(medians.max())}, mean {fmt(medians.mean(), 2)}: "
                       + " ".join("/".join(fmt(v) for v in m) for m in medians))
        rows.append(row)
    out += ["The pairs against the truths triangulated through the refined calibration: the pair-joint medians within "
            "5°, the worst, the mean, and per pair (in the order of the tables above) knee/hip/elbow.", ""]
    out += table(["pairs calibrated with", *[f"against {t}, refined" for t in truths]], rows) + [""]
    return out


# --------------------------------------------------------------------------- calibration from the person alone

MIDPOINTS = [("left_shoulder", "right_shoulder"), ("left_hip", "right_hip"), ("left_knee", "right_knee"),
             ("left_ankle", "right_ankle"), ("left_elbow", "right_elbow"), ("left_wrist", "right_wrist")]


def body_points(track: PoseTrack, camera: Camera) -> tuple[np.ndarray, np.ndarray]:
    """(T, P, 2) normalised image points that a side swap cannot move (left/right midpoints, the nose), (T, P) sure."""
    points = [(track.xy[:, INDEX[a]] + track.xy[:, INDEX[b]]) / 2 for a, b in MIDPOINTS] + [track.xy[:, INDEX["nose"]]]
    sure = [np.minimum(track.confidence[:, INDEX[a]], track.confidence[:, INDEX[b]]) for a, b in MIDPOINTS]
    sure.append(track.confidence[:, INDEX["nose"]])
    return camera.normalised(np.stack(points, axis=1)), np.stack(sure, axis=1)


def self_calibrated(a: tuple[PoseTrack, Camera], b: tuple[PoseTrack, Camera]) -> tuple[Camera, Camera, float, float]:
    """The pair's cameras with b's pose relative to a from the body alone (scale from the true baseline: angles do
    not depend on it), and the rotation and direction errors of that pose (degrees)."""
    import cv2
    from scipy.optimize import least_squares

    from viddiff.pose.setup import matrix_to_rodrigues, rodrigues_to_matrix

    (track_a, cam_a), (track_b, cam_b) = a, b
    pa, sa = body_points(track_a, cam_a)
    pb, sb = body_points(track_b, cam_b)
    ok = (sa >= 0.7) & (sb >= 0.7) & np.isfinite(pa).all(-1) & np.isfinite(pb).all(-1)
    p1, p2 = pa[ok], pb[ok]
    focal = float(cam_a.matrix[0, 0])
    essential, inliers = cv2.findEssentialMat(p1, p2, np.eye(3), method=cv2.RANSAC, prob=0.999, threshold=3 / focal)
    _, rotation, direction, _ = cv2.recoverPose(essential, p1, p2, np.eye(3), mask=inliers)
    keep = inliers.ravel() > 0
    p1, p2 = p1[keep], p2[keep]
    start = cv2.triangulatePoints(np.hstack([np.eye(3), np.zeros((3, 1))]), np.hstack([rotation, direction]), p1.T, p2.T)
    start = (start[:3] / start[3]).T

    def unit(theta: float, phi: float) -> np.ndarray:
        return np.array([math.sin(theta) * math.cos(phi), math.sin(theta) * math.sin(phi), math.cos(theta)])

    def residuals(x: np.ndarray) -> np.ndarray:
        turn, shift, points = rodrigues_to_matrix(x[:3]), unit(x[3], x[4]), x[5:].reshape(-1, 3)
        seen_b = points @ turn.T + shift
        return focal * np.concatenate([(points[:, :2] / points[:, 2:3] - p1).ravel(), (seen_b[:, :2] / seen_b[:, 2:3] - p2).ravel()])

    d = direction.ravel()
    x0 = np.concatenate([matrix_to_rodrigues(rotation), [math.acos(float(np.clip(d[2], -1, 1))), math.atan2(d[1], d[0])], start.ravel()])
    fit = least_squares(residuals, x0, loss="huber", f_scale=5.0, x_scale="jac", max_nfev=200)
    turn, shift = rodrigues_to_matrix(fit.x[:3]), unit(fit.x[3], fit.x[4])
    true_turn = cam_b.rotation @ cam_a.rotation.T
    true_shift = cam_b.translation - true_turn @ cam_a.translation
    rotation_error = math.degrees(math.acos(float(np.clip((np.trace(turn @ true_turn.T) - 1) / 2, -1, 1))))
    direction_error = math.degrees(math.acos(float(np.clip(shift @ true_shift / np.linalg.norm(true_shift), -1, 1))))
    # in a's frame, turned back into the world so that "up" is the world's (only the pair's relative pose is estimated)
    world_a = replace(cam_a, error_px=None)
    world_b = replace(cam_b, rotation=turn @ cam_a.rotation,
                      translation=turn @ cam_a.translation + shift * float(np.linalg.norm(true_shift)), error_px=None)
    return world_a, world_b, rotation_error, direction_error


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
    parser.add_argument("--heavy-model", type=Path, default=DEFAULT_HEAVY_MODEL,
                        help="BlazePose Heavy as a Tasks .task, for the third truth (skipped when absent)")
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
    functions = pose2sim_functions(args.clips_dir / "Pose2Sim")
    truths = {OURS: truth_perf.kinematics(min_confidence=cfg.min_confidence),
              P2S_FULL: kinematics_of(pose2sim_points(tracks, cameras, functions), truth_perf, cfg)}
    out: list[str] = []
    heavy_tracks = heavy_model_tracks(args.heavy_model, videos, cache)
    if heavy_tracks is None:
        out += [f"Skipped the Heavy truth: {args.heavy_model} not found (BlazePose Heavy as a Tasks .task; --heavy-model).", ""]
    else:
        truths[HEAVY] = kinematics_of(pose2sim_points(heavy_tracks, cameras, functions), truth_perf, cfg)
    fitted_on = [OURS] + ([HEAVY] if HEAVY in truths else [])

    out += ["### The truths (4 views) against each other, per-frame joint angles", ""]
    rows = []
    for a, b in itertools.combinations(truths, 2):
        row = [f"{a} vs {b}"]
        for joint in JOINTS:
            e, have = angle_errors(truths[a], truths[b], joint)
            row.append(f"{fmt(np.median(e))} / {fmt(np.percentile(e, 95))}, {100 * have:.0f}%")
        rows.append(row)
    out += table(["truths", *[f"{j}: median / p95 (°), frames in both" for j in JOINTS]], rows) + [""]
    found_px = truth_perf.error_px[np.isfinite(truth_perf.error_px)]
    out += [f"4-view reprojection error (ours): median {fmt(np.median(found_px))} px, p90 {fmt(np.percentile(found_px, 90))} px "
            f"({truth_perf.width}x{truth_perf.height}); joint-frames triangulated: "
            f"{100 * np.isfinite(truth_perf.points_3d).all(-1).mean():.0f}%.", ""]

    pairs = list(itertools.combinations(range(4), 2))
    other = other_take_tracks(args.clips_dir / OTHER_TAKE, tracks, estimator, cache, cfg)
    takes = {"single": tracks} if other is None else {"single": tracks, "two-person": other}
    frame_rows: dict[str, list[list[str]]] = {t: [] for t in truths}
    records: dict[str, dict[str, dict[str, list[dict]]]] = {t: {take: {} for take in takes} for t in fitted_on}
    scales: dict[str, dict[str, PartScale]] = {take: {} for take in takes}
    medians: dict[str, dict[str, list[float]]] = {take: {j: [] for j in JOINTS} for take in takes}
    for take, take_tracks in takes.items():
        for a, b in pairs:
            name = f"{CAMERAS[a]}+{CAMERAS[b]}"
            perf = triangulate_performance(
                [take_tracks[a], take_tracks[b]],
                [cameras[a].fitted_to(take_tracks[a].width, take_tracks[a].height),
                 cameras[b].fitted_to(take_tracks[b].width, take_tracks[b].height)], GIVEN)
            # the other take is the same movement frame for frame: the single take's truths are its truths too
            kin = perf.kinematics(min_confidence=cfg.min_confidence)
            scales[take][name] = perf.part_scale
            for truth_name in fitted_on:
                records[truth_name][take][name] = statistic_records(perf, kin, truths[truth_name], cfg)
            if take != "single":
                for joint in JOINTS:
                    medians[take][joint].append(float(np.median(angle_errors(kin, truths[OURS], joint)[0])))
                continue
            for truth_name, truth in truths.items():
                row = [name, fmt(sight_angle(cameras[a], cameras[b], truth_perf.points_3d), 0), fmt(float(np.nanmedian(perf.error_px)))]
                for joint in JOINTS:
                    e, have = angle_errors(kin, truth, joint)
                    row.append(f"{fmt(np.median(e))} / {fmt(np.percentile(e, 95))}, {100 * have:.0f}%")
                frame_rows[truth_name].append(row)
    out += ["### Per-frame joint-angle error of each view pair", "",
            "Median / p95 |pair − truth| in degrees, left and right pooled; % = frames of the truth that the pair also "
            "measured. The pairs: our triangulation of BlazePose Full keypoints from two views, as shipped.", ""]
    for truth_name, rows in frame_rows.items():
        out += [f"Against {truth_name}:", ""]
        out += table(["pair", "lines of sight apart (°)", "reprojection (px)", *JOINTS], rows) + [""]

    out += error_sources(tracks, cameras, truths, fitted_on, cfg)
    out += refined_calibration(tracks, heavy_tracks, cameras, functions, cfg)

    out += ["### At the level of viddiff's statistics (min, max, mean, range; whole, halves, thirds), against " + OURS, ""]
    rows = []
    single = records[OURS]["single"]
    for name, rs in single.items():
        row = [name]
        for joint in JOINTS:
            e = [abs(r["value"] - r["truth"]) for r in rs if r["quantity"] == f"{joint}_angle"]
            mm = [abs(r["value"] - r["truth"]) for r in rs if r["quantity"] == f"{joint}_angle" and r["statistic"] in ("min", "max")]
            row.append(f"{fmt(np.median(e))} / {fmt(np.percentile(e, 95))} (min, max: {fmt(np.median(mm))})")
        rows.append(row)
    out += table(["pair", *[f"{j} angle: median / p95 (°)" for j in JOINTS]], rows) + [""]

    out += ["Interval coverage of the 4-view statistic, within the single take (part scaled per pair, "
            "viddiff.pose.triangulation_part):", ""]
    rows = []
    for truth_name in fitted_on:
        by_pair = records[truth_name]["single"]
        everything = [r for rs in by_pair.values() for r in rs]
        rows.append([truth_name, "no triangulation part", pct(*coverage(everything, {}))])
        for target in (0.9, 0.95):
            for joint in (None, *JOINTS):
                hit = [0, 0]
                for camera in range(4):
                    calibrate_on = [r for (a, b), rs in zip(pairs, by_pair.values()) if camera not in (a, b) for r in rs]
                    test_on = [r for (a, b), rs in zip(pairs, by_pair.values()) if camera in (a, b) for r in rs
                               if joint is None or r["quantity"] == f"{joint}_angle"]
                    k, n = coverage(test_on, calibrate(calibrate_on, target))
                    hit[0] += k
                    hit[1] += n
                label = (f"calibrated to {100 * target:.0f}% on the pairs without a camera, held out: the pairs with it"
                         if joint is None else f"  {joint} angle")
                rows.append([truth_name, label, pct(*hit)])
    out += table(["truth", "interval", "covers the truth"], rows) + [""]

    chosen: Optional[float] = None
    if other is not None:
        out += ["Across takes: the part calibrated on one take's six pairs, the coverage on the other's (the two-person "
                "take's pairs against the single take's truths: the same movement, encoded apart, a second person "
                "in the picture). Its per-frame median error against " + OURS + ", median over the pairs: "
                + ", ".join(f"{j} {fmt(np.median(v))}°" for j, v in medians["two-person"].items()) + ". A *constant* "
                "part is the same for every pair (as before); *sight angle only* is times one over the sine of the "
                "pair's sight angle; *scaled* is times each pair's part scale (the sight angle and the share of limb "
                "joints triangulated: what ships).", ""]
        rows = []
        for target in TARGETS:
            ok = True
            for truth_name in fitted_on:
                s_rs = [r for rs in records[truth_name]["single"].values() for r in rs]
                m_rs = [r for rs in records[truth_name]["two-person"].values() for r in rs]
                for kind, (s, m) in (("constant", (unscaled(s_rs), unscaled(m_rs))),
                                     ("sight angle only", (sight_only(s_rs), sight_only(m_rs))), ("scaled", (s_rs, m_rs))):
                    folds = [coverage(m, calibrate(s, target)), coverage(s, calibrate(m, target))]
                    by_joint = [pct(*coverage([r for r in m if r["quantity"] == f"{j}_angle"], calibrate(s, target))) for j in JOINTS]
                    rows.append([f"{100 * target:.1f}%", truth_name, kind, pct(*folds[0]), pct(*folds[1]),
                                 ", ".join(f"{j} {v}" for j, v in zip(JOINTS, by_joint))])
                    if kind == "scaled":
                        ok = ok and all(k >= 0.9 * n for k, n in folds)
            if chosen is None and ok:
                chosen = target
        out += table(["calibrated to cover", "truth", "part", "single -> two-person take", "two-person -> single take",
                      "single -> two-person, per joint"], rows) + [""]
    chosen = chosen or 0.95
    fits = [calibrate([r for take in records[t].values() for rs in take.values() for r in rs], chosen) for t in fitted_on]
    shipped = {q: max(f[q] for f in fits) for q in fits[0]}
    out += [f"Triangulation part to ship (`viddiff.pose.triangulation_part.TRIANGULATION_ERRORS`: for views 90° apart "
            f"that triangulate every limb joint), calibrated on both takes' pairs to cover {100 * chosen:.1f}% (the least "
            "target whose cross-take coverage was 90% both ways against every truth), the larger of the fits against "
            + " and ".join(fitted_on) + ": " + ", ".join(f"{q} {v:g}" for q, v in shipped.items()), ""]
    rows = []
    for take in takes:
        for name, scale in scales[take].items():
            cover = [pct(*coverage([r for r in records[t][take][name]], shipped)) for t in fitted_on]
            rows.append([take, name, fmt(scale.sight_deg, 0), f"{100 * scale.limb_share:.0f}%", fmt(scale.factor, 2),
                         fmt(shipped["knee_angle"] * scale.factor), fmt(shipped["hip_angle"] * scale.factor),
                         fmt(shipped["elbow_angle"] * scale.factor), *cover])
    out += table(["take", "pair", "sight angle (°)", "limb joints triangulated", "scale", "knee part (°)", "hip part (°)",
                  "elbow part (°)", *[f"covers {t}" for t in fitted_on]], rows) + [""]
    for truth_name in fitted_on:
        every = [r for take in records[truth_name].values() for rs in take.values() for r in rs]
        out += [f"Shipped part, all statistics of both takes against {truth_name}: {pct(*coverage(every, shipped))}; "
                + ", ".join(f"{j} {pct(*coverage([r for r in every if r['quantity'] == f'{j}_angle'], shipped))}" for j in JOINTS)
                + ".", ""]

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
    # the same with the video itself trimmed (BlazePose run again on the later frames, its tracker starting afresh)
    for a, b in ((0, 1), (1, 3), (0, 3)):
        for frames in CUTS[1:]:
            later = estimate_track(read_video(folder / "videos" / f"{CAMERAS[b]}.mp4", frames_trim=(frames, None)), estimator, cache, cfg.subject)
            truth_offset = -frames / 60
            name = f"{CAMERAS[a]}+{CAMERAS[b]} (video trimmed)"
            try:
                o = motion_offset(tracks[a], later, cameras[a], cameras[b])
                error = o.offset_s - truth_offset
                errors.append((abs(error), o.uncertainty_s))
                rows.append([name, f"{truth_offset:+.3f}", f"{o.offset_s:+.3f} ± {o.uncertainty_s:.3f}", f"{1000 * error:+.0f}",
                             "yes" if abs(error) <= 2 * o.uncertainty_s else "no"])
            except SyncError as exc:
                rows.append([name, f"{truth_offset:+.3f}", "refused", "", str(exc).split(":")[1][:60]])
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

    out += ["### Calibration from the person alone (not offered)", "",
            "Intrinsics known; the second camera's pose from the body (see the docstring). Per-frame angle error "
            "against the 4-view truth, median / p95 (°), with the Qualisys calibration's for the same pair in brackets.", ""]
    rows, medians = [], {j: [] for j in JOINTS}
    for a, b in pairs:
        cam_a, cam_b, rotation_error, direction_error = self_calibrated((tracks[a], cameras[a]), (tracks[b], cameras[b]))
        kin = triangulate_performance([tracks[a], tracks[b]], [cam_a, cam_b], GIVEN).kinematics(min_confidence=cfg.min_confidence)
        qualisys = triangulate_performance([tracks[a], tracks[b]], [cameras[a], cameras[b]], GIVEN).kinematics(min_confidence=cfg.min_confidence)
        row = [f"{CAMERAS[a]}+{CAMERAS[b]}", fmt(rotation_error), fmt(direction_error)]
        for joint in JOINTS:
            e, _ = angle_errors(kin, truths[OURS], joint)
            q, _ = angle_errors(qualisys, truths[OURS], joint)
            medians[joint].append(float(np.median(e)))
            row.append(f"{fmt(np.median(e))} / {fmt(np.percentile(e, 95))} ({fmt(np.median(q))})")
        rows.append(row)
    out += table(["pair", "rotation error (°)", "baseline direction error (°)", *JOINTS], rows) + [""]
    out += ["Median over the pairs of the median error: " + ", ".join(f"{j} {fmt(np.median(v))}°" for j, v in medians.items())
            + " (target: 5°).", ""]

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
