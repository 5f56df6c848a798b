"""Is the pose evidence *accurate*: does a quoted value (and its interval) say what the body did? (issue 40)

Truth: the four synchronised, calibrated cameras of the Pose2Sim demo take (``Calib.qca.txt``, a Qualisys
calibration; :mod:`viddiff.pose.calibration`). BlazePose's 2D keypoints of the measured person in all four
views are triangulated (:mod:`viddiff.pose.triangulation`: weighted DLT; per frame and limb group the left/right
labelling of each view that best agrees with the others; a view more than 25 px off is dropped while three
remain), and the body's quantities are computed in 3D: joint angles, trunk lean from the world vertical, widths
and heights in body units. Its own uncertainty (the *truth noise*) is how far a statistic moves when any one
camera is left out.

The takes: ``Demo_SinglePerson`` (= ``Demo_Batch/Trial_1``, byte-identical videos) and ``Demo_MultiPerson``
(= ``Demo_Batch/Trial_2``): the same recording of the athlete with a second person composited in front; its
athlete is the same movement frame for frame (checked below), so the single take's truth is the truth of both.

It prints:

1. the triangulation's reprojection error per camera (pixels);
2. the error of viddiff's per-video statistics against the 3D truth, per quantity and view, split into the
   *view* part (the true 3D points projected into that camera, measured in the picture, against 3D) and the
   *estimator* part (viddiff's value against that picture of the truth);
3. the view's effect as a function of where the camera stands (virtual cameras around the body, on the truth):
   the tolerance within which a 2D angle is the body's angle;
4. interval coverage of the true statistic: the intervals as quoted, and with the calibrated view part (the
   calibration on some cameras, the coverage on a camera left out, and on the other take);
5. known differences (first vs second half, and the three equal thirds against each other, of each view of
   each take): of the clear ones (3D truth differs by >= 10° or 0.2 body units and by more than the truth's
   noise), hits, misses and reversals;
6. identical movement: the athlete of the single take against the same camera of the two-person take (the
   same movement; only the second person and the encoding differ): a/b answers.

Pose runs go through the project's default estimator and kinematics settings (``--set`` changes them, e.g.
``--set pose.blazepose.detect_every_s=0`` for BlazePose's detector on every frame) and are cached in --work.

With ``--two-view``, it prints instead the same known-difference and identical-movement checks for performances
filmed by two calibrated phones (3D), through the product's evidence (``bench/pose_two_view_differences.py``).

Usage: python bench/pose_accuracy.py [--clips-dir DIR] [--work DIR] [--markdown FILE] [--two-view] [--set KEY=VALUE]
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from viddiff.cache import Cache
from viddiff.config import PoseConfig, load_config
from viddiff.pose.calibration import Camera, read_qca
from viddiff.pose.estimators import build_pose_estimator
from viddiff.pose.kinematics import ANGLES, compute_kinematics, joint_angle, smooth
from viddiff.pose.measure import Settings, VideoMeasures, decide, measure
from viddiff.pose.skeleton import INDEX, JOINTS, LOWER_LIMBS, SWAP, UPPER_LIMBS
from viddiff.pose.statistics import inside, read_statistic, running_median, window_samples
from viddiff.pose.track import PoseTrack, estimate_track
from viddiff.pose.triangulation import reprojection_errors, triangulate
from viddiff.pose.view import comparable_views, estimate_view
from viddiff.schema import Evidence, MeasurementSpec
from viddiff.video import read_video

from pose_statements import CLEAR, QUANTITY_SIDES, STATISTICS, is_clear, take_windows, unit_kind  # noqa: E402 (bench/)

DEFAULT_CLIPS_DIR = Path(os.environ.get("VIDDIFF_POSE_CLIPS", "/work/scratch/pose2sim"))
"""Where the pose2sim wheel is unpacked (``pip download pose2sim==0.10.49 --no-deps``; unzip)."""
TAKES = {"single": "Pose2Sim/Demo_SinglePerson", "two-person": "Pose2Sim/Demo_MultiPerson"}
CAMERAS = ("cam01", "cam02", "cam03", "cam04")
MAX_ERROR_PX = 25.0


# --------------------------------------------------------------------------- reading


@dataclass
class View:
    """One camera of one take: its frames' pose, kinematics and calibration."""

    take: str
    camera: Camera
    track: PoseTrack
    kinematics: object

    @property
    def name(self) -> str:
        return f"{self.take} {self.camera.name}"


def load_views(clips: Path, cache: Cache, cfg: PoseConfig) -> tuple[dict[str, list[View]], dict[str, str]]:
    """Every view of both takes. In the two-person take the athlete is measured: the first ``pose.subject`` rule
    (``auto`` first) whose person is within 40 px (median) of the single take's athlete in the same camera;
    returns which rule that was per camera (``auto`` measures the bystander in one camera: issue 40, item 4)."""
    estimator = build_pose_estimator(cfg)
    views: dict[str, list[View]] = {}
    rules: dict[str, str] = {}
    for take, folder in TAKES.items():
        calibration = clips / folder / "calibration" / "Calib.qca.txt"
        if not calibration.is_file():
            sys.exit(f"error: {calibration} missing: unpack the pose2sim 0.10.49 wheel into --clips-dir")
        cameras = {c.name: c for c in read_qca(calibration)}
        views[take] = []
        for i, name in enumerate(CAMERAS):
            video = read_video(clips / folder / "videos" / f"{name}.mp4")
            track = estimate_track(video, estimator, cache, cfg.subject)
            if take != "single":
                reference = views["single"][i].track.xy
                for rule in ("auto", "left", "right", "largest", "centre"):
                    track = estimate_track(video, estimator, cache, rule)
                    if np.nanmedian(np.linalg.norm(track.xy - reference, axis=-1)) < 40:
                        break
                rules[name] = rule
            kin = track.kinematics(min_confidence=cfg.min_confidence, smoothing_frames=cfg.smoothing_frames,
                                   fix_sides=cfg.fix_side_swaps)
            camera = cameras[name].fitted_to(track.width, track.height)
            views[take].append(View(take, camera, track, kin))
    return views, rules


# --------------------------------------------------------------------------- truth

GROUPS = [[INDEX[f"{s}_{limb}"] for limb in limbs for s in ("left", "right")] for limbs in (UPPER_LIMBS, LOWER_LIMBS)]


def label_views(cameras: list[Camera], xy: np.ndarray, conf: np.ndarray) -> np.ndarray:
    """(C, T, J, 2) pixels with each view's left/right labels per frame and limb group set to the labelling that
    agrees best with the other views (of two labellings that are mirror images of each other, the one that
    keeps more views as the estimator labelled them)."""
    out = xy.copy()
    n_cams, n_frames = xy.shape[:2]
    for t in range(n_frames):
        for group in GROUPS:
            best, best_cost = None, np.inf
            for flips in itertools.product((False, True), repeat=n_cams):
                if sum(flips) > n_cams / 2 or (sum(flips) == n_cams / 2 and not flips[0]):
                    continue  # its mirror image (every view flipped) is the same geometry; keep the fewer flips
                px = np.stack([xy[c, t][list(SWAP)] if f else xy[c, t] for c, f in enumerate(flips)])
                cf = np.stack([conf[c, t][list(SWAP)] if f else conf[c, t] for c, f in enumerate(flips)])
                tri = triangulate(cameras, px[:, group], cf[:, group], max_error_px=np.inf)
                errors = tri.error_px[np.isfinite(tri.error_px)]
                cost = float(np.median(errors)) if len(errors) else np.inf
                if cost < best_cost - 1e-9:
                    best, best_cost = flips, cost
            if best is None:
                continue
            for c, f in enumerate(best):
                if f:
                    out[c, t, group] = xy[c, t][list(SWAP)][group]
    return out


class TruthStatistics:
    """The body's statistic of a measurement over a window, and its noise (the largest change when one camera is
    left out of the triangulation), computed once each."""

    def __init__(self, truth: "Truth", cfg: PoseConfig):
        self.times = truth.times_s
        self.cfg = cfg
        self.all = truth_series(truth.points)
        self.without = [truth_series(p) for p in truth.without]
        self.memo: dict[tuple, tuple[float, float]] = {}

    def __call__(self, spec: MeasurementSpec, window: tuple[float, float]) -> tuple[float, float]:
        k = (spec.quantity, spec.side, spec.statistic, window)
        if k not in self.memo:
            value = statistic(combined(self.all, spec.quantity, spec.side), self.times, *window, spec.statistic, self.cfg)
            noise = max(abs(statistic(combined(s, spec.quantity, spec.side), self.times, *window, spec.statistic, self.cfg)
                            - value) for s in self.without)
            self.memo[k] = value, float(noise) if np.isfinite(noise) else float("nan")
        return self.memo[k]


@dataclass
class Truth:
    points: np.ndarray
    """(T, J, 3) smoothed world points (metres, z up)."""
    without: list[np.ndarray]
    """The same with each camera left out."""
    error_px: np.ndarray
    """(C, T, J) reprojection error of each view's keypoint, where used."""
    times_s: np.ndarray


def build_truth(views: list[View], smoothing: int) -> Truth:
    cameras = [v.camera for v in views]
    xy = np.stack([v.track.xy for v in views])
    conf = np.stack([v.track.confidence for v in views])
    labelled = label_views(cameras, xy, conf)
    conf_l = np.stack([np.where(np.isfinite(labelled[c]).all(-1), conf[c], 0) for c in range(len(cameras))])
    full = triangulate(cameras, labelled, conf_l, max_error_px=MAX_ERROR_PX, min_views=3)
    errors = np.where(full.views.transpose(2, 0, 1), reprojection_errors(cameras, full.points, labelled), np.nan)
    without = []
    for leave in range(len(cameras)):
        keep = [c for c in range(len(cameras)) if c != leave]
        part = triangulate([cameras[c] for c in keep], labelled[keep], conf_l[keep], max_error_px=MAX_ERROR_PX, min_views=2)
        without.append(smooth(part.points, smoothing))
    return Truth(points=smooth(full.points, smoothing), without=without, error_px=errors, times_s=views[0].track.times_s)


def truth_series(points: np.ndarray) -> dict[str, np.ndarray]:
    """The body's quantities from (T, J, 3) world points (z up), named like the kinematics series."""
    at = {name: points[:, INDEX[name]] for name in JOINTS}
    series = {}
    for side in ("left", "right"):
        for joint, (a, b, c) in ANGLES.items():
            series[f"{side}_{joint}_angle"] = joint_angle(at[f"{side}_{a}"], at[f"{side}_{b}"], at[f"{side}_{c}"])
    mid_shoulder = (at["left_shoulder"] + at["right_shoulder"]) / 2
    mid_hip = (at["left_hip"] + at["right_hip"]) / 2
    trunk = mid_shoulder - mid_hip
    torso = np.linalg.norm(trunk, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        series["trunk_lean"] = np.degrees(np.arccos(np.clip(trunk[:, 2] / torso, -1, 1)))
        scale = float(np.nanmedian(torso))
        series["stance_width"] = np.linalg.norm(at["left_ankle"] - at["right_ankle"], axis=-1) / np.linalg.norm(
            at["left_hip"] - at["right_hip"], axis=-1)
        series["grip_width"] = np.linalg.norm(at["left_wrist"] - at["right_wrist"], axis=-1) / np.linalg.norm(
            at["left_shoulder"] - at["right_shoulder"], axis=-1)
        series["hip_height"] = (mid_hip[:, 2] - (at["left_ankle"][:, 2] + at["right_ankle"][:, 2]) / 2) / scale
        for side in ("left", "right"):
            series[f"{side}_wrist_height"] = (at[f"{side}_wrist"][:, 2] - mid_shoulder[:, 2]) / scale
    return series


def combined(series: dict[str, np.ndarray], quantity: str, side: str) -> np.ndarray:
    names = [quantity] if side == "none" else [f"{s}_{quantity}" for s in (("left", "right") if side == "both" else (side,))]
    stacked = np.stack([series[n] for n in names])
    with np.errstate(invalid="ignore"):
        return np.nanmean(stacked, axis=0) if len(names) > 1 else stacked[0]


def statistic(values: np.ndarray, times: np.ndarray, start: float, end: float, stat: str, cfg: PoseConfig) -> float:
    """The statistic as viddiff reads it (running median, over real time)."""
    width = window_samples(times, cfg.robust_window_s)
    robust = running_median(values, width)
    reading = read_statistic(stat, times, robust, start, end, noise=0.0, smoothing_frames=cfg.smoothing_frames,
                             edge_samples=width)
    return float("nan") if reading.value is None else reading.value


def picture_series(camera: Camera, points: np.ndarray, times: np.ndarray) -> dict[str, np.ndarray]:
    """The 2D kinematics of the true 3D points as ``camera`` pictures them (no estimator involved)."""
    xy = camera.project(points)
    confidence = np.where(np.isfinite(xy).all(-1), 1.0, 0.0)
    kin = compute_kinematics(xy, confidence, times, np.arange(len(times)), width=camera.width, height=camera.height,
                             smoothing_frames=1, fix_sides=False)
    return kin.values


# --------------------------------------------------------------------------- measuring


def settings_of(cfg: PoseConfig) -> Settings:
    return Settings(
        min_coverage=cfg.min_coverage, min_frames=cfg.min_frames, min_seconds=cfg.min_seconds,
        robust_window_s=cfg.robust_window_s, smoothing_frames=cfg.smoothing_frames,
        noise_floors=cfg.noise_floors.model_dump(), alignment=cfg.alignment,
        views_differ=lambda a, b, spec: comparable_views(a, b, cfg.view_tolerance_deg, spec),
        view_errors=cfg.view_errors.model_dump(), plane_tolerance_deg=cfg.plane_tolerance_deg,
        view_difference_errors=cfg.view_difference_errors.model_dump(),
    )


def video_measures(view: View, window: tuple[float, float]) -> VideoMeasures:
    track = view.track
    return VideoMeasures(
        windows=np.array([window]), frame_indices=track.frame_indices, times_s=track.times_s,
        kinematics=view.kinematics, frame_step_s=float(np.median(np.diff(track.times_s))),
        view=estimate_view(track, inside(track.times_s, *window)), subject=track.subject,
    )


def key(spec: MeasurementSpec) -> tuple[str, str, str]:
    return spec.quantity, spec.side, spec.statistic


def specs() -> list[MeasurementSpec]:
    return [MeasurementSpec(quantity=q, side=side, statistic=stat, direction="greater")
            for q, sides in QUANTITY_SIDES.items() for side in sides for stat in STATISTICS]


@dataclass
class Record:
    """One statistic of one video window: viddiff's value and interval, and the truth."""

    take: str
    camera: str
    scope: str
    spec: MeasurementSpec
    status: str
    value: Optional[float]
    half_width: float
    view_part: float
    in_picture: bool
    yaw: Optional[float]
    truth: float
    truth_noise: float
    picture: float
    """The true 3D points as this camera pictures them, measured in 2D."""

    @property
    def quantity(self) -> str:
        return self.spec.quantity


def collect(views: dict[str, list[View]], truth: Truth, truths: TruthStatistics, cfg: PoseConfig) -> tuple[list[Record], dict]:
    """Every statistic of every window of every view, and the evidence of every pair of windows of a view (and
    of the same window of the same camera across the two takes)."""
    settings = settings_of(cfg)
    times = truth.times_s
    records: list[Record] = []
    pairs: dict[tuple, tuple[MeasurementSpec, Evidence]] = {}
    for take, take_views in views.items():
        for view in take_views:
            pictured = picture_series(view.camera, truth.points, times)
            windows = take_windows(view.track.times_s)
            measures = {name: video_measures(view, w) for name, w in windows.items()}
            for spec in specs():
                pic = combined(pictured, spec.quantity, spec.side)
                for name, (start, end) in windows.items():
                    ev = measure("s", spec, measures[name], measures[name], ["whole"], estimator="blazepose", settings=settings)
                    true, noise = truths(spec, (start, end))
                    interval = ev.interval_a
                    records.append(Record(
                        take=take, camera=view.camera.name, scope=name, spec=spec, status=ev.status, value=ev.value_a,
                        half_width=interval.half_width if interval else float("nan"),
                        view_part=interval.view if interval else 0.0, in_picture=bool(interval and interval.in_picture),
                        yaw=ev.view_a.yaw_deg if ev.view_a else None, truth=true,
                        truth_noise=noise,
                        picture=statistic(pic, times, start, end, spec.statistic, cfg),
                    ))
                for first, second in itertools.combinations(list(windows)[1:], 2):
                    if first.split()[0] != second.split()[0]:
                        continue  # halves with halves, thirds with thirds
                    pairs[(take, view.camera.name, first, second, key(spec))] = (spec, measure(
                        "s", spec, measures[first], measures[second], ["whole"], estimator="blazepose", settings=settings))
        # the same camera and window of the other take: the same movement
    for a_view, b_view in zip(views["single"], views["two-person"]):
        windows = take_windows(a_view.track.times_s)
        for name, window in windows.items():
            ma, mb = video_measures(a_view, window), video_measures(b_view, window)
            for spec in specs():
                pairs[("identical", a_view.camera.name, name, name, key(spec))] = (spec, measure(
                    "s", spec, ma, mb, ["whole"], estimator="blazepose", settings=settings))
    return records, pairs


# --------------------------------------------------------------------------- where the camera stands


def hip_axis(points: np.ndarray) -> np.ndarray:
    """(3,) the body's horizontal left–right axis (median over the take), unit length."""
    axis = points[:, INDEX["left_hip"]] - points[:, INDEX["right_hip"]]
    axis[:, 2] = 0
    axis = np.nanmedian(axis / np.linalg.norm(axis, axis=1, keepdims=True), axis=0)
    return axis / np.linalg.norm(axis)


def off_side(camera_centre: np.ndarray, body_centre: np.ndarray, axis: np.ndarray) -> float:
    """Degrees between the camera's horizontal line of sight and the body's left–right axis: 0 = side-on (the
    sagittal plane faces the camera), 90 = front or back."""
    sight = body_centre - camera_centre
    sight[2] = 0
    cosine = abs(float(sight @ axis)) / float(np.linalg.norm(sight))
    return math.degrees(math.acos(min(1.0, cosine)))


def virtual_camera(body_centre: np.ndarray, azimuth_deg: float, axis: np.ndarray, template: Camera) -> Camera:
    """A camera 3.5 m from the body at 1.2 m height, ``azimuth_deg`` round from the body's left side (0 = looking
    at their left side, 90 = at their front or back), looking at the body's centre."""
    a = math.radians(azimuth_deg)
    forward_axis = np.cross(np.array([0.0, 0.0, 1.0]), axis)
    direction = math.cos(a) * axis + math.sin(a) * forward_axis
    position = body_centre + 3.5 * direction
    position[2] = 1.2
    z = body_centre - position
    z /= np.linalg.norm(z)
    x = np.cross(z, np.array([0.0, 0.0, 1.0]))
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    rotation = np.stack([x, y, z])
    return Camera(name=f"virtual {azimuth_deg:g}", width=template.width, height=template.height, matrix=template.matrix,
                  distortion=np.zeros(5), rotation=rotation, translation=-rotation @ position)


def view_sweep(truth: Truth, template: Camera, cfg: PoseConfig) -> dict[str, dict[int, float]]:
    """Quantity → off-side angle (0..90 in 10° steps) → 90th percentile of |2D picture statistic − 3D statistic|
    over azimuths at that angle, windows, sides and statistics (no estimator: the view alone)."""
    points, times = truth.points, truth.times_s
    centre = np.nanmedian((points[:, INDEX["left_hip"]] + points[:, INDEX["right_hip"]]) / 2, axis=0)
    axis = hip_axis(points)
    true = truth_series(points)
    errors: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for azimuth in range(0, 360, 10):
        offside = int(round(math.degrees(math.asin(abs(math.sin(math.radians(azimuth)))))))
        pictured = picture_series(virtual_camera(centre, azimuth, axis, template), points, times)
        for quantity, sides in QUANTITY_SIDES.items():
            for side in sides:
                if side == "both":
                    continue
                for start, end in take_windows(times).values():
                    for stat in STATISTICS:
                        a = statistic(combined(pictured, quantity, side), times, start, end, stat, cfg)
                        b = statistic(combined(true, quantity, side), times, start, end, stat, cfg)
                        if np.isfinite(a) and np.isfinite(b):
                            errors[quantity][offside].append(abs(a - b))
    return {q: {k: float(np.percentile(v, 90)) for k, v in sorted(by.items())} for q, by in errors.items()}


# --------------------------------------------------------------------------- analysis


def measured(records: list[Record]) -> list[Record]:
    return [r for r in records if r.value is not None and np.isfinite(r.truth)]


def covered(r: Record, view_part: Optional[float] = None) -> bool:
    """Whether the interval covers the true statistic (``view_part``: replace the record's view part by this)."""
    half = r.half_width
    if view_part is not None:
        half = math.sqrt(max(0.0, half * half - r.view_part ** 2) + view_part ** 2)
    return abs(r.value - r.truth) <= half


def calibrate(records: list[Record], target: float = 0.95) -> dict[str, float]:
    """Per quantity, the smallest view part (to 0.1° or 0.01 body units) that makes the intervals cover the truth
    in at least ``target`` of ``records``."""
    out = {}
    for quantity in QUANTITY_SIDES:
        rows = [r for r in records if r.quantity == quantity]
        if not rows:
            continue
        step = 0.1 if unit_kind(quantity) == "°" else 0.01
        part = 0.0
        while np.mean([covered(r, part) for r in rows]) < target:
            part += step
        out[quantity] = round(part, 3)
    return out


def coverage_rate(records: list[Record], parts: Optional[dict[str, float]] = None) -> tuple[int, int]:
    hits = [covered(r, None if parts is None else parts.get(r.quantity, 0.0)) for r in records]
    return int(sum(hits)), len(hits)


def fmt(value: float, digits: int = 1) -> str:
    return "–" if value is None or not np.isfinite(value) else f"{value:.{digits}f}"


def pct(k: int, n: int) -> str:
    return f"{k}/{n} ({100 * k / n:.0f}%)" if n else "0/0"


@dataclass
class Pair:
    """Two windows' evidence on one statement, and what the truth says."""

    take: str
    camera: str
    spec: MeasurementSpec
    evidence: Evidence
    gap: float
    """B − A of the body's statistic."""
    noise: float
    """The truth's own noise on that gap."""

    @property
    def clear(self) -> bool:
        return is_clear(self.gap, self.noise, self.spec.quantity)

    @property
    def small(self) -> bool:
        return abs(self.gap) < CLEAR[unit_kind(self.spec.quantity)] / 4


def make_pairs(pairs: dict, truths: TruthStatistics) -> list[Pair]:
    out = []
    for (take, camera, first, second, _), (spec, ev) in pairs.items():
        windows = take_windows(truths.times)
        (ta, na), (tb, nb) = truths(spec, windows[first]), truths(spec, windows[second])
        if take != "identical" and np.isfinite(tb - ta):
            out.append(Pair(take, camera, spec, ev, tb - ta, math.hypot(na, nb)))
        elif take == "identical":
            out.append(Pair(take, camera, spec, ev, 0.0, 0.0))
    return out


RULES = {
    "before issue 40 (both intervals, no view parts)": "old",
    "as quoted (decide: intervals without view parts, plus the view part of the difference)": "quoted",
    "full intervals (view parts included)": "full",
}


def width(interval, with_view: bool) -> float:
    if interval is None:
        return 0.0
    return interval.half_width if with_view else math.sqrt(max(0.0, interval.half_width ** 2 - interval.view ** 2))


def verdict(pair: Pair, rule: str, margins: dict) -> str:
    """hit / reversed / same / not comparable / uncertain under a decision rule (identical pairs: a/b or not)."""
    ev = pair.evidence
    if rule == "quoted" or ev.status != "measured":
        letter, _ = decide(ev, margins)
    else:
        a, b = ev.value_a, ev.value_b
        full = rule == "full"
        noise = math.hypot(width(ev.interval_a, full), width(ev.interval_b, full))
        margin = margins["angle_deg" if unit_kind(ev.measurement.quantity) == "°" else "length"]
        letter = ("b" if b > a else "a") if abs(b - a) > noise and abs(b - a) > margin else "c"
    if letter in ("a", "b"):
        if pair.take == "identical":
            return "a/b"
        return "hit" if (letter == "b") == (pair.gap > 0) else "reversed"
    if letter == "c":
        return "same"
    return "not comparable" if ev.status == "not_comparable" else "uncertain"


def calibrate_relative(pairs: list[Pair], target: float = 0.95) -> dict[str, float]:
    """Per quantity, the smallest extra part of a difference's uncertainty that covers |viddiff's B − A − the
    body's B − A| in ``target`` of measured pairs of comparable views."""
    out = {}
    for quantity in QUANTITY_SIDES:
        rows = [p for p in pairs if p.spec.quantity == quantity and p.evidence.status == "measured"]
        if not rows:
            continue
        errors = np.array([abs((p.evidence.value_b - p.evidence.value_a) - p.gap) for p in rows])
        base = np.array([math.hypot(width(p.evidence.interval_a, False), width(p.evidence.interval_b, False)) for p in rows])
        step = 0.1 if unit_kind(quantity) == "°" else 0.01
        part = 0.0
        while np.mean(errors <= np.hypot(base, part)) < target:
            part += step
        out[quantity] = round(part, 3)
    return out


def recalibrated(pair: Pair, parts: dict[str, float]) -> Pair:
    """``pair`` with the view part of its difference replaced by ``parts`` (where its evidence carries one)."""
    ev = pair.evidence
    if ev.status == "uncertain" or not (ev.interval_a.in_picture or ev.interval_b.in_picture):
        return pair
    update = {"view_difference": parts.get(ev.measurement.quantity, 0.0)}
    return Pair(pair.take, pair.camera, pair.spec, ev.model_copy(update=update), pair.gap, pair.noise)


def held_out_by_camera(known: list[Pair], identical: list[Pair]) -> tuple[list[Pair], list[Pair]]:
    """The single take's known differences and the identical-movement pairs of each camera, with the view part of
    the difference calibrated on the two-person take's pairs of the *other* three cameras."""
    clear, same = [], []
    for camera in CAMERAS:
        parts = calibrate_relative([p for p in known if p.take == "two-person" and p.camera != camera])
        clear += [recalibrated(p, parts) for p in known if p.take == "single" and p.camera == camera]
        same += [recalibrated(p, parts) for p in identical if p.camera == camera]
    return clear, same


VERDICTS = ("hit", "reversed", "same", "not comparable", "uncertain")


def differences_section(pairs: dict, truths: TruthStatistics, margins: dict) -> list[str]:
    everything = make_pairs(pairs, truths)
    known = [p for p in everything if p.take != "identical"]
    identical = [p for p in everything if p.take == "identical"]
    relative = calibrate_relative([p for p in known if p.take == "two-person"])
    held_known, held_identical = held_out_by_camera(known, identical)
    out = ["### Known differences and identical movement", "",
           "Known differences: first vs second half, and thirds against each other, of each view of each take; clear "
           f"where the body's statistics differ by >= {CLEAR['°']:g}° or {CLEAR['body']:g} body units and by more than "
           "the truth's noise. Identical movement: the single take against the same camera and window of the "
           "two-person take (the athlete measured in both). Rules scored on the single take; the view part of a "
           "difference (`pose.view_difference_errors`) calibrated on the two-person take's pairs would be: "
           + ", ".join(f"{q} {v:g}" for q, v in relative.items()) + ".", ""]
    rows = []
    scored = [(words, rule, known, identical) for words, rule in RULES.items()]
    scored.append(("as quoted, the view part of the difference calibrated without the camera scored (held out)",
                   "quoted", held_known, held_identical))
    for words, rule, knowns, identicals in scored:
        clear = [verdict(p, rule, margins) for p in knowns if p.clear and p.take == "single"]
        small = [verdict(p, rule, margins) for p in knowns if p.small and p.take == "single"]
        same = [verdict(p, rule, margins) for p in identicals]
        n = len(clear)
        rows.append([words, *[pct(clear.count(k), n) for k in VERDICTS],
                     pct(sum(v in ("hit", "reversed") for v in small), len(small)), pct(same.count("a/b"), len(same))])
    out += table(["rule", "clear: found", "reversed", "said same", "not comparable", "uncertain",
                  "a/b where the truth differs < ¼ of that", "identical movement: a/b"], rows) + [""]
    by_quantity = []
    for quantity in QUANTITY_SIDES:
        clear = [verdict(p, "quoted", margins) for p in known if p.clear and p.take == "single" and p.spec.quantity == quantity]
        if clear:
            by_quantity.append([quantity.replace("_", " "), *[str(clear.count(k)) for k in ("hit", "reversed", "same", "not comparable", "uncertain")]])
    out += ["As quoted, per quantity (single take, clear differences):", ""]
    out += table(["quantity", "found", "reversed", "same", "not comparable", "uncertain"], by_quantity) + [""]
    by_camera = []
    for camera in CAMERAS:
        clear = [verdict(p, "quoted", margins) for p in known if p.clear and p.take == "single" and p.camera == camera]
        by_camera.append([camera, *[str(clear.count(k)) for k in VERDICTS]])
    out += ["As quoted, per camera (single take, clear differences):", ""]
    out += table(["camera", "found", "reversed", "same", "not comparable", "uncertain"], by_camera) + [""]
    measured_clear = [p for p in known if p.clear and p.take == "single" and p.evidence.status == "measured"]
    flipped = sum((p.evidence.value_b - p.evidence.value_a > 0) != (p.gap > 0) for p in measured_clear)
    quiet = sum(abs(p.evidence.value_b - p.evidence.value_a) <= math.hypot(width(p.evidence.interval_a, False),
                width(p.evidence.interval_b, False)) for p in measured_clear)
    out += [f"What one view cannot show: of the {len(measured_clear)} clear differences measured between comparable "
            f"views, the picture's difference has the opposite sign to the body's in {flipped}, and is within the "
            f"estimator's own noise (no view part) in {quiet}.", ""]
    reasons: dict[str, int] = defaultdict(int)
    for p in known:
        if p.clear and p.take == "single" and p.evidence.status == "uncertain":
            reasons[p.evidence.reason.split(": ", 1)[-1].split(" in ")[0][:90]] += 1
    out += ["Why clear differences were uncertain: " + "; ".join(f"{k} ({v})" for k, v in sorted(reasons.items(), key=lambda kv: -kv[1])[:4]), ""]
    return out


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clips-dir", type=Path, default=DEFAULT_CLIPS_DIR)
    parser.add_argument("--work", type=Path, default=Path("/tmp/viddiff-pose-accuracy"))
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--two-view", action="store_true",
                        help="known differences and identical movement from two calibrated views (3D) instead")
    parser.add_argument("--set", dest="sets", action="append", default=[],
                        help="config overrides, e.g. pose.blazepose.detect_every_s=0 (the estimator's settings are part "
                        "of the pose cache's keys)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.two_view:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from pose_two_view_differences import run as two_view  # noqa: E402 (a sibling bench script)

        text = "\n".join(two_view(args.clips_dir, args.work))
        print(text)
        if args.markdown:
            args.markdown.write_text(text + "\n")
        return
    started = time.perf_counter()
    cfg = load_config(None, args.sets).pose
    margins = cfg.margins.model_dump()
    views, rules = load_views(args.clips_dir, Cache(args.work / "pose.sqlite"), cfg)
    truth = build_truth(views["single"], cfg.smoothing_frames)
    out: list[str] = []

    out += ["### Triangulation (the single take, 4 views)", ""]
    rows = []
    for c, view in enumerate(views["single"]):
        e = truth.error_px[c]
        e = e[np.isfinite(e)]
        rows.append([view.camera.name, f"{view.track.width}x{view.track.height}", fmt(np.median(e)), fmt(np.percentile(e, 90)),
                     pct(len(e), int(np.isfinite(view.track.xy).all(-1).sum()))])
    all_e = truth.error_px[np.isfinite(truth.error_px)]
    rows.append(["all", "", fmt(np.median(all_e)), fmt(np.percentile(all_e, 90)), ""])
    out += table(["camera", "video", "reprojection error, median (px)", "90th pct (px)", "keypoints used"], rows) + [""]
    found = np.isfinite(truth.points).all(-1)
    out += [f"3D points: {pct(int(found.sum()), found.size)} of joint-frames (at least 3 agreeing views).", ""]
    gaps = []
    for a, b in zip(views["single"], views["two-person"]):
        d = np.linalg.norm(a.track.xy - b.track.xy, axis=-1)
        gaps.append(f"{a.camera.name} {fmt(np.nanmedian(d))} px")
    out += ["Same movement in both takes: median distance between the measured person's keypoints in the single and "
            "the two-person take, same camera and frame: " + ", ".join(gaps) + "; the athlete was measured in the "
            "two-person take with `pose.subject` " + ", ".join(f"{k}: {v}" for k, v in rules.items()) + ".", ""]

    truths = TruthStatistics(truth, cfg)
    records, pairs = collect(views, truth, truths, cfg)
    values = measured(records)
    body_centre = np.nanmedian((truth.points[:, INDEX["left_hip"]] + truth.points[:, INDEX["right_hip"]]) / 2, axis=0)
    axis = hip_axis(truth.points)
    out += ["### Where each camera stands", ""]
    rows = []
    for view in views["single"]:
        yaw = estimate_view(view.track).yaw_deg
        rows.append([view.camera.name, fmt(off_side(view.camera.centre, body_centre, axis), 0),
                     "–" if yaw is None else f"{yaw:+.0f}° (off side-on {abs(90 - abs(yaw)):.0f}°)"])
    out += table(["camera", "off side-on, from the calibration (°)", "viddiff's view estimate"], rows) + [""]

    out += ["### Error against the 3D truth, per quantity and camera", "",
            "Median |viddiff's statistic − the body's| (degrees or body units) over windows (whole, halves, thirds), "
            "sides and statistics (mean, min, max, range), both takes; *view* = the true points pictured by that "
            "camera against 3D; *estimator* = viddiff's value against that picture.", ""]
    rows = []
    for quantity in QUANTITY_SIDES:
        row = [quantity.replace("_", " ")]
        for camera in CAMERAS:
            rs = [r for r in values if r.quantity == quantity and r.camera == camera]
            total = [abs(r.value - r.truth) for r in rs]
            view = [abs(r.picture - r.truth) for r in rs if np.isfinite(r.picture)]
            estimator = [abs(r.value - r.picture) for r in rs if np.isfinite(r.picture)]
            row.append(f"{fmt(np.median(total) if total else np.nan)} ({fmt(np.median(view) if view else np.nan)} / "
                       f"{fmt(np.median(estimator) if estimator else np.nan)})")
        rs = [abs(r.value - r.truth) for r in values if r.quantity == quantity]
        row.append(f"{fmt(np.median(rs))} / {fmt(np.percentile(rs, 95))}" if rs else "–")
        rows.append(row)
    out += table(["quantity", *[f"{c}: total (view / estimator)" for c in CAMERAS], "all: median / p95"], rows) + [""]

    sweep = view_sweep(truth, views["single"][0].camera, cfg)
    offsides = sorted(next(iter(sweep.values())))
    out += ["### The view alone: virtual cameras round the body (the 3D truth pictured, no estimator)", "",
            "90th percentile of |2D statistic − 3D statistic| by how far the camera is from side-on "
            "(0° = the sagittal plane faces the camera).", ""]
    out += table(["quantity", *[f"{k}°" for k in offsides]],
                 [[q.replace("_", " "), *[fmt(by.get(k, np.nan)) for k in offsides]] for q, by in sweep.items()]) + [""]

    out += ["### Interval coverage of the body's true statistic", ""]
    rows = []
    for quantity in [None, *QUANTITY_SIDES]:
        rs = [r for r in values if quantity is None or r.quantity == quantity]
        before = coverage_rate(rs, {q: 0.0 for q in QUANTITY_SIDES})
        rows.append([quantity.replace("_", " ") if quantity else "all (both takes, all views)", pct(*before), pct(*coverage_rate(rs)),
                     pct(sum(r.in_picture for r in rs), len(rs))])
    out += table(["quantity", "without view parts (before)", "as quoted now", "labelled as seen in the picture"], rows) + [""]
    calibration = [r for r in values if r.take == "two-person"]
    held_out = [r for r in values if r.take == "single"]
    rows = []
    for target in (0.9, 0.95):
        how = f"calibrated to cover {100 * target:.0f}%"
        parts = calibrate(calibration, target)
        rows.append([f"{how}: calibrated on the two-person take, held out: the single take",
                     pct(*coverage_rate(held_out, parts))])
        lo = [0, 0]
        for camera in CAMERAS:
            fold = calibrate([r for r in values if r.camera != camera], target)
            k, n = coverage_rate([r for r in values if r.camera == camera], fold)
            lo[0] += k
            lo[1] += n
            rows.append([f"  {how}: calibrated without {camera}, held out: {camera}", pct(k, n)])
        rows.append([f"{how}: leave one camera out, pooled", pct(*lo)])
        out += [f"View part per quantity ({how} of the two-person take's intervals): "
                + ", ".join(f"{q} {v:g}" for q, v in parts.items()), ""]
    out += table(["view part", "cover the truth"], rows) + [""]

    out += differences_section(pairs, truths, margins)
    out += [f"({time.perf_counter() - started:.0f} s)"]
    text = "\n".join(out)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")


if __name__ == "__main__":
    main()
