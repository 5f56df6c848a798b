"""One performance filmed by several calibrated cameras (a main video and its extra views): its body in 3D over
time (:class:`PerformancePose`), from which the same kinematics as one video's are read, but the body's own.

The steps (docs/pose.md, "Two phones (3D)"):

1. each view's 2D keypoints (:func:`viddiff.pose.track.estimate_track`, cached per video), of the same person in
   every view where ``pose.subject`` is ``auto`` (:mod:`viddiff.pose.joint_subject`);
2. each extra view's offset in time against the main view (:mod:`viddiff.pose.sync`): given, from the sound, or
   from the motion; its keypoints are then read at the main view's sample times (linear between its own samples);
3. left and right labelled alike in every view, per frame and limb group, whichever view is the main one: the
   views paired by the labelling whose triangulation reprojects best (one view's estimator may swap sides where
   another's does not), the pair named by the body's own facing (:func:`label_alike`);
4. confidence-weighted triangulation (:func:`viddiff.pose.triangulation.triangulate`); a view where the joint
   is unsure (confidence under ``min_confidence``) does not count, a view that reprojects more than
   ``max_error`` (a share of the main picture's long side) away is left out while two others remain, and a point
   whose views still disagree is a gap;
5. a zero-phase Butterworth low-pass over time (:mod:`viddiff.pose.filtering`), as Pose2Sim does;
6. bones that keep their length: where an arm's or leg's bone is more than :data:`BONE_TOLERANCE` longer or
   shorter than its median over the take, both its joints are gaps in that frame. Two views cannot see a keypoint
   misplaced along the line joining them (it still reprojects well), but the bone it ends stretches or shrinks:
   on the Pose2Sim pairs this gate took the median elbow error from 6.2° to 4.7° (worst pair 10.7° to 8.2°) and
   the worst pair's hip error from 7.0° to 4.9°, leaving 72% of elbow and 81% of hip frames measured (88%, 90%
   before).

A value's interval gains a triangulation part that grows with how badly the views stand (their lines of sight
nearly parallel or opposite) and how little of the take they triangulated (:mod:`viddiff.pose.triangulation_part`).

Its world is the calibration's; "up" is the world axis nearest the cameras' mean up direction (phones stand
roughly upright; Pose2Sim's and Qualisys' worlds have z up, a checkerboard's world is whatever way it lay).
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Optional, Sequence, Union

import numpy as np

from viddiff.pose.calibration import Camera, CalibrationError
from viddiff.pose.calibration_error import calibration_parts
from viddiff.pose.facing import circular_median, wrap_degrees
from viddiff.pose.filtering import CUTOFF_HZ, butterworth
from viddiff.pose.joint_subject import choose_jointly
from viddiff.pose.kinematics import Kinematics, resolve_sides
from viddiff.pose.kinematics3d import compute_kinematics_3d, labels_against_facing
from viddiff.pose.skeleton import INDEX, LOWER_LIMBS, SWAP, UPPER_LIMBS
from viddiff.pose.resample import resample_track
from viddiff.pose.sync import SyncError, SyncInfo, ViewOffset, audio_offset, has_audio, motion_offset
from viddiff.pose.track import PoseTrack, estimate_track
from viddiff.pose.triangulation import triangulate
from viddiff.pose.triangulation_part import TRIANGULATION_ERRORS, PartScale, part_scale, scaled_parts
from viddiff.pose.view import MIN_FRAMES, triangulated_method, view_label
from viddiff.pose.trc import to_y_up
from viddiff.schema import CameraView, Skeleton3D, SubjectInfo

if TYPE_CHECKING:
    from viddiff.cache import Cache
    from viddiff.pose.estimators import PoseEstimator
    from viddiff.video import VideoFrames

MIN_CONFIDENCE = 0.3
"""A view's keypoint under this confidence does not enter the triangulation (Pose2Sim's likelihood threshold)."""
MAX_ERROR = 0.015
"""A view reprojecting further than this share of the main picture's long side from its keypoint is left out."""
BONE_TOLERANCE = 0.2
"""A limb bone more than this share off its median length marks its two joints as gaps in that frame."""
LIMB_BONES = tuple((f"{side}_{a}", f"{side}_{b}") for side in ("left", "right")
                   for a, b in (("shoulder", "elbow"), ("elbow", "wrist"), ("hip", "knee"), ("knee", "ankle")))
GROUPS = [[INDEX[f"{side}_{limb}"] for limb in limbs for side in ("left", "right")] for limbs in (UPPER_LIMBS, LOWER_LIMBS)]


@dataclass(frozen=True)
class PerformancePose:
    """One performance's body in 3D over the main view's samples (the joint axis follows ``skeleton.JOINTS``)."""

    times_s: np.ndarray
    """(T,) the main view's sample times (its clock)."""
    frame_indices: np.ndarray
    """(T,) the main view's source frame indices."""
    points_3d: np.ndarray
    """(T, J, 3) world points in metres, filtered; NaN where not triangulated."""
    confidence: np.ndarray
    """(T, J) the mean confidence of the views that entered each point; 0 where none."""
    error_px: np.ndarray
    """(T, J) RMS reprojection error of each point over the views it used (main-view pixels)."""
    views_used: np.ndarray
    """(T, J, C) which views entered each point."""
    tracks: tuple[PoseTrack, ...]
    """Each view's 2D track, as estimated (the main view first)."""
    cameras: tuple[Camera, ...]
    """Each view's camera, fitted to its frames' size."""
    sync: SyncInfo
    up: np.ndarray
    """(3,) the world's up direction."""
    triangulation_errors: Mapping[str, float] = field(default_factory=dict)
    """Per quantity, the triangulation and calibration part of a value's interval (``VideoMeasures``): the measured
    :data:`TRIANGULATION_ERRORS` times :attr:`part_scale`'s factor, combined with :attr:`calibration_errors`."""
    part_scale: Optional[PartScale] = None
    """How the views' placement and the share of limb joints triangulated widen the triangulation part
    (:mod:`viddiff.pose.triangulation_part`)."""
    calibration_errors: Mapping[str, float] = field(default_factory=dict)
    """Per quantity, the part the calibration's reported reprojection error adds (:mod:`viddiff.pose.calibration_error`;
    empty for a calibration that reports none)."""
    found_in_views: Optional[np.ndarray] = None
    """(T,) whether every view found a person at the sample (whether or not they triangulated together)."""

    @property
    def main(self) -> PoseTrack:
        return self.tracks[0]

    @property
    def estimator(self) -> str:
        return f"{self.main.estimator}; triangulated from {len(self.tracks)} calibrated views"

    @property
    def width(self) -> int:
        return self.main.width

    @property
    def height(self) -> int:
        return self.main.height

    @property
    def subject(self) -> SubjectInfo:
        return self.main.subject

    @property
    def pictured(self) -> np.ndarray:
        """(T, J, 2) the 3D points as the main camera pictures them (pixels)."""
        return self.cameras[0].project(self.points_3d)

    def kinematics(self, *, min_confidence: float = 0.5, smoothing_frames: int = 3, fix_sides: bool = True) -> Kinematics:
        """The body's own kinematics under the 2D series names (``smoothing_frames`` is not used: the points are
        already low-passed)."""
        del smoothing_frames
        return compute_kinematics_3d(
            self.points_3d, self.confidence, self.times_s, self.frame_indices, self.up, pictured=self.pictured,
            width=self.width, height=self.height, min_confidence=min_confidence, fix_sides=fix_sides,
            estimated=self.main.estimated, found_in_views=self.found_in_views,
        )

    def subject_info(self, kinematics: Optional[Kinematics] = None) -> SubjectInfo:
        """Who was measured (the main view's choice; every view's measured person is the one triangulated)."""
        return self.main.subject_info(kinematics)

    def skeleton(self, time_s: float) -> Skeleton3D:
        """The body at the sample nearest ``time_s`` (main clock), for drawing in 3D (see :class:`Skeleton3D`)."""
        t = int(np.argmin(np.abs(self.times_s - time_s)))
        points = to_y_up(self.points_3d[t], self.up)
        with np.errstate(invalid="ignore"):
            centre = (points[INDEX["left_hip"]] + points[INDEX["right_hip"]]) / 2
        points = points - np.nan_to_num(centre)
        return Skeleton3D(
            frame_index=int(self.frame_indices[t]), time_s=round(float(self.times_s[t]), 6),
            points=[tuple(round(float(v), 4) for v in p) if np.isfinite(p).all() else None for p in points],
        )

    def view(self, rows: Optional[np.ndarray] = None) -> CameraView:
        """The main camera's place relative to the body over ``rows`` (mask or indices; ``None`` = all), marked as
        a triangulated view: two triangulated views compare whatever their cameras (:func:`viddiff.pose.view.comparable_views`)."""
        yaw = camera_yaws(self.points_3d, self.up, self.cameras[0].centre)
        if rows is not None:
            yaw = yaw[rows]
        yaw = yaw[np.isfinite(yaw)]
        method = triangulated_method(len(self.tracks))
        if len(yaw) < MIN_FRAMES:
            return CameraView(label="unknown", frames=int(len(yaw)), method=method)
        middle = circular_median(yaw)
        q1, q3 = np.percentile(np.abs(wrap_degrees(yaw - middle)), [25, 75])
        return CameraView(label=view_label(middle), yaw_deg=round(float(middle), 1), spread_deg=round(float(q3 - q1) / 2, 1),
                          frames=int(len(yaw)), method=method, roll_deg=0.0)


def camera_yaws(points: np.ndarray, up: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """(T,) the yaw of a camera at ``centre`` relative to the body per frame, in :class:`CameraView`'s convention
    (0: the body faces the camera, +90: its left side towards it); NaN where hips or shoulders are missing."""
    left = (points[:, INDEX["left_hip"]] + points[:, INDEX["left_shoulder"]]) / 2
    right = (points[:, INDEX["right_hip"]] + points[:, INDEX["right_shoulder"]]) / 2
    across = left - right
    across = across - np.outer(across @ up, up)
    forward = np.cross(across, up)
    towards = centre - (left + right) / 2
    return np.degrees(np.arctan2(np.sum(towards * across, axis=-1) / np.linalg.norm(across, axis=-1),
                                 np.sum(towards * forward, axis=-1) / np.linalg.norm(forward, axis=-1)))


def world_up(cameras: Sequence[Camera]) -> np.ndarray:
    """(3,) the world axis (±x, ±y or ±z) nearest the cameras' mean up direction (a camera's up is its −y)."""
    mean = np.mean([-camera.rotation[1] for camera in cameras], axis=0)
    axis = int(np.argmax(np.abs(mean)))
    out = np.zeros(3)
    out[axis] = np.sign(mean[axis])
    return out


def estimate_performance(
    views: Sequence["VideoFrames"],
    cameras: Sequence[Camera],
    estimator: "PoseEstimator",
    cache: Optional["Cache"] = None,
    subject: str = "auto",
    *,
    offsets: Optional[Sequence[float]] = None,
    sources: Optional[Sequence[Union[str, Path]]] = None,
    max_offset_s: Optional[float] = None,
    triangulation_errors: Optional[Mapping[str, float]] = None,
) -> PerformancePose:
    """The performance's 3D body from its views (the main video first) and their cameras, in the same order.

    ``offsets``: each extra view's offset in seconds when known (else found: from the sound when ``sources``,
    the video files, all have an audio track, otherwise from the motion; :mod:`viddiff.pose.sync`). With
    ``subject`` ``auto``, the measured person is chosen across the views (:mod:`viddiff.pose.joint_subject`)."""
    if len(views) < 2:
        raise CalibrationError("a 3D performance needs at least two views")
    if len(cameras) != len(views):
        raise CalibrationError(f"{len(views)} videos need {len(views)} calibrated cameras; the calibration has {len(cameras)}")
    if subject == "auto":  # the same person in every view (an explicit rule is the user's, per view)
        tracks = choose_jointly(views, cameras, estimator, offsets, cache, max_offset_s=max_offset_s)
    else:
        tracks = [estimate_track(view, estimator, cache, subject) for view in views]
    fitted = [camera.fitted_to(track.width, track.height) for camera, track in zip(cameras, tracks)]
    sync = synchronise(tracks, fitted, views, offsets=offsets, sources=sources, max_offset_s=max_offset_s)
    return triangulate_performance(tracks, fitted, sync, triangulation_errors=triangulation_errors)


def synchronise(
    tracks: Sequence[PoseTrack], cameras: Sequence[Camera], views: Sequence["VideoFrames"], *, offsets: Optional[Sequence[float]] = None,
    sources: Optional[Sequence[Union[str, Path]]] = None, max_offset_s: Optional[float] = None,
) -> SyncInfo:
    """The extra views' offsets: given; else, per extra view, from the sound where it and the main video have it
    (from the motion where the sound cannot tell); else from the motion. Offsets are on the clips' clocks (the
    sound's, between the files, is moved by the trims)."""
    if offsets is not None:
        if len(offsets) != len(tracks) - 1:
            raise ValueError(f"{len(tracks) - 1} extra views need {len(tracks) - 1} offsets, got {len(offsets)}")
        return SyncInfo(offsets=tuple(ViewOffset(view=v, offset_s=float(o), uncertainty_s=0.0, method="given")
                                      for v, o in enumerate(offsets, start=1)))
    paths = [str(source) for source in sources] if sources is not None else []
    heard = bool(paths) and has_audio(paths[0])
    found = []
    for v in range(1, len(views)):
        if heard and has_audio(paths[v]):
            try:
                o = audio_offset(paths[0], paths[v], view=v, max_offset_s=max_offset_s)
            except SyncError as by_sound:
                try:
                    found.append(motion_offset(tracks[0], tracks[v], cameras[0], cameras[v], view=v, max_offset_s=max_offset_s))
                except SyncError as by_motion:
                    raise SyncError(f"{by_motion}; by sound: {by_sound}") from None
                continue
            found.append(o.model_copy(update={"offset_s": round(o.offset_s + views[0].offset_s - views[v].offset_s, 6)}))
        else:
            found.append(motion_offset(tracks[0], tracks[v], cameras[0], cameras[v], view=v, max_offset_s=max_offset_s))
    return SyncInfo(offsets=tuple(found))


def triangulate_performance(
    tracks: Sequence[PoseTrack], cameras: Sequence[Camera], sync: SyncInfo, *, min_confidence: float = MIN_CONFIDENCE,
    max_error: float = MAX_ERROR, cutoff_hz: float = CUTOFF_HZ, bone_tolerance: float = BONE_TOLERANCE,
    triangulation_errors: Optional[Mapping[str, float]] = None,
) -> PerformancePose:
    """Steps 3–6 of the module docstring on tracks already estimated and views already synchronised.

    ``triangulation_errors``: per quantity, the triangulation part for views at right angles that triangulate every
    limb joint (default :data:`viddiff.pose.triangulation_part.TRIANGULATION_ERRORS`); the performance's own is
    that times its :func:`viddiff.pose.triangulation_part.part_scale`."""
    main = tracks[0]
    times = main.times_s
    offsets = {o.view: o.offset_s for o in sync.offsets}
    xy, conf = [main.xy], [main.confidence]
    for v, track in enumerate(tracks[1:], start=1):
        p, c = resample_track(track, times + offsets.get(v, 0.0))
        xy.append(p)
        conf.append(c)
    pixels, confidence = np.stack(xy), np.stack(conf)
    pixels, confidence = label_alike(cameras, pixels, confidence, min_confidence)
    max_px = max_error * max(main.width, main.height)
    tri = triangulate(cameras, pixels, confidence, min_confidence=min_confidence, min_views=2, max_error_px=max_px)
    bad = ~(tri.error_px <= max_px)
    points = np.where(bad[..., None], np.nan, tri.points)
    used = tri.views & ~bad[..., None]
    with np.errstate(invalid="ignore"):
        mean_conf = np.where(used.any(-1), np.sum(np.moveaxis(confidence, 0, -1) * used, axis=-1) / used.sum(-1), 0.0)
    points = rigid_bones(butterworth(points, times, cutoff_hz), bone_tolerance)
    scale = part_scale(cameras, points)
    base = scaled_parts(TRIANGULATION_ERRORS if triangulation_errors is None else triangulation_errors, scale)
    up = world_up(cameras)
    from_calibration = calibration_parts(cameras, pixels, np.where(np.moveaxis(used, -1, 0), confidence, 0.0), times, up,
                                         cutoff_hz, list(base))
    parts = {q: round(float(np.hypot(v, from_calibration.get(q, 0.0))), 3) for q, v in base.items()}
    return PerformancePose(
        times_s=times, frame_indices=main.frame_indices, points_3d=points,
        confidence=np.nan_to_num(mean_conf), error_px=np.where(bad, np.nan, tri.error_px), views_used=used,
        tracks=tuple(tracks), cameras=tuple(cameras), sync=sync, up=up, triangulation_errors=parts,
        calibration_errors=from_calibration, part_scale=scale, found_in_views=(confidence > 0).any(axis=-1).all(axis=0),
    )


def rigid_bones(points: np.ndarray, tolerance: float = BONE_TOLERANCE) -> np.ndarray:
    """(T, J, 3) ``points`` with both joints of a limb bone made gaps in the frames where that bone is more than
    ``tolerance`` off its median length over the take (step 6 of the module docstring)."""
    out = points.copy()
    for a, b in LIMB_BONES:
        i, j = INDEX[a], INDEX[b]
        length = np.linalg.norm(points[:, i] - points[:, j], axis=-1)
        if not np.isfinite(length).any():
            continue
        with np.errstate(invalid="ignore"):
            off = np.abs(length / np.nanmedian(length) - 1) > tolerance
        out[off, i] = np.nan
        out[off, j] = np.nan
    return out


def label_alike(
    cameras: Sequence[Camera], pixels: np.ndarray, confidence: np.ndarray, min_confidence: float,
) -> tuple[np.ndarray, np.ndarray]:
    """(C, T, J, 2) ``pixels`` and (C, T, J) ``confidence`` with every view's left/right labels, per frame and
    limb group, set by a rule that does not depend on which view is the main one (step 3 of the module docstring).

    First the views are *paired*: of the ways to label the views against each other, the one whose triangulation
    reprojects best (median over the group's joints) says which keypoints are the same joint. Then the pairing is
    *named* by :func:`_side_cues`, the body's own evidence, and continuity in 3D carries the names through the
    frames where no cue speaks, at no cost for leaving any view's own labels. Keeping the main view's labels
    instead made the same two videos triangulate differently with the other one as main (the left hip's minimum
    123° against 140° on the Pose2Sim cam01+cam02 clips)."""
    paired_pixels, paired_confidence, flipped = _pair_views(cameras, pixels, confidence, min_confidence)
    points, _ = _fast_dlt(cameras, paired_pixels, paired_confidence, min_confidence)
    _, swapped, _ = resolve_sides(points, penalty=0.0, view=_side_cues(points, world_up(cameras), flipped))
    for column, group in enumerate(GROUPS):
        rows = np.flatnonzero(swapped[:, column])
        if len(rows):
            paired_pixels[:, rows[:, None], group] = paired_pixels[:, rows][:, :, SWAP][:, :, group]
            paired_confidence[:, rows[:, None], group] = paired_confidence[:, rows][:, :, SWAP][:, :, group]
    return paired_pixels, paired_confidence


def _side_cues(points: np.ndarray, up: np.ndarray, flipped: np.ndarray) -> np.ndarray:
    """(T, 2) per frame, arms and legs: +1 where the body says the paired points' names are right, -1 where it
    says they are swapped, 0 where nothing tells. In order of trust:

    1. the way the body faces (the left shoulder or hip to the left of the nose's side;
       :func:`viddiff.pose.kinematics3d.labels_against_facing`);
    2. else the other limb group's facing, where the shoulders and hips lie alike or against each other (within
       60°: a body does not twist half round), since the nose often stands right above the hips;
    3. else the views' own estimators, where more of them keep the pairing's names than swap them
       (``flipped``, (C, T, 2): which views' labels the pairing swapped)."""
    cues = labels_against_facing(points, up).astype(np.int8)
    shoulders = points[:, INDEX["left_shoulder"]] - points[:, INDEX["right_shoulder"]]
    hips = points[:, INDEX["left_hip"]] - points[:, INDEX["right_hip"]]
    with np.errstate(invalid="ignore"):
        alike = np.sum(shoulders * hips, axis=-1) / (np.linalg.norm(shoulders, axis=-1) * np.linalg.norm(hips, axis=-1))
    coupled = np.nan_to_num(np.where(np.abs(alike) >= 0.5, np.sign(alike), 0.0)).astype(np.int8)
    for column in (0, 1):
        told = cues[:, column] != 0
        cues[~told, column] = (coupled * labels_against_facing(points, up)[:, 1 - column])[~told]
    votes = np.sign(np.sum(np.where(flipped, -1, 1), axis=0)).astype(np.int8)  # (T, 2)
    return np.where(cues != 0, cues, votes)


def _pair_views(
    cameras: Sequence[Camera], pixels: np.ndarray, confidence: np.ndarray, min_confidence: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``pixels`` and ``confidence`` with the extra views' labels per frame and limb group swapped where that
    reprojects best against the first view's: the pairing of joints across views, whatever their names; and
    (C, T, 2) which views' labels it swapped, per limb group."""
    n_cams, n_frames = pixels.shape[:2]
    out_pixels, out_confidence = pixels.copy(), confidence.copy()
    flipped = np.zeros((n_cams, n_frames, len(GROUPS)), dtype=bool)
    choices = list(itertools.product((False, True), repeat=n_cams - 1))
    for column, group in enumerate(GROUPS):
        costs = np.full((len(choices), n_frames), np.inf)
        for k, flips in enumerate(choices):
            px = np.stack([pixels[0]] + [pixels[c][:, SWAP] if f else pixels[c] for c, f in enumerate(flips, start=1)])
            cf = np.stack([confidence[0]] + [confidence[c][:, SWAP] if f else confidence[c] for c, f in enumerate(flips, start=1)])
            _, errors = _fast_dlt(cameras, px[:, :, group], cf[:, :, group], min_confidence)
            with warnings.catch_warnings():  # a frame where no joint of the group triangulates: no labelling wins
                warnings.simplefilter("ignore", RuntimeWarning)
                median = np.nanmedian(np.where(np.isfinite(errors), errors, np.nan), axis=1)
            costs[k] = np.where(np.isfinite(median), median, np.inf)
        best = np.argmin(costs, axis=0)
        for k, flips in enumerate(choices):
            rows = np.flatnonzero((best == k) & np.isfinite(costs[k]))
            for c, f in enumerate(flips, start=1):
                if f and len(rows):
                    out_pixels[c][np.ix_(rows, group)] = pixels[c][rows][:, SWAP][:, group]
                    out_confidence[c][np.ix_(rows, group)] = confidence[c][rows][:, SWAP][:, group]
                    flipped[c, rows, column] = True
    return out_pixels, out_confidence, flipped


def _fast_dlt(
    cameras: Sequence[Camera], pixels: np.ndarray, confidence: np.ndarray, min_confidence: float,
) -> tuple[np.ndarray, np.ndarray]:
    """(T, G, 3) points of an unweighted all-view DLT and (T, G) the worst view's reprojection error of each
    (NaN where a view misses it): a quick triangulation for choosing labels, not the measurement."""
    n_cams = len(cameras)
    rays = np.stack([cam.normalised(pixels[c]) for c, cam in enumerate(cameras)])  # (C, T, G, 2)
    seen = (confidence >= min_confidence) & np.isfinite(rays).all(-1)
    projections = np.stack([cam.projection() for cam in cameras])  # (C, 3, 4)
    rows = []
    for c in range(n_cams):
        p = projections[c]
        x, y = rays[c, ..., 0:1], rays[c, ..., 1:2]
        rows += [x * p[2] - p[0], y * p[2] - p[1]]
    a = np.stack(rows, axis=-2)  # (T, G, 2C, 4)
    ok = seen.all(axis=0)
    a = np.where(ok[..., None, None], np.nan_to_num(a), 0.0)
    a[~ok] = np.eye(2 * n_cams, 4)
    _, _, vt = np.linalg.svd(a)
    h = vt[..., -1, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        points = h[..., :3] / h[..., 3:4]
    errors = np.stack([np.linalg.norm(cam.project(points) - pixels[c], axis=-1) for c, cam in enumerate(cameras)])
    return np.where(ok[..., None], points, np.nan), np.where(ok, errors.max(axis=0), np.nan)


__all__ = [
    "BONE_TOLERANCE", "MAX_ERROR", "MIN_CONFIDENCE", "PerformancePose", "camera_yaws", "estimate_performance",
    "label_alike", "rigid_bones", "synchronise", "triangulate_performance", "world_up",
]
