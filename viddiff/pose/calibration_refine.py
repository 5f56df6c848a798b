"""A given calibration's camera rotations refined from the take's own body (``pose.calibration_refine: body``).

A checkerboard or Qualisys calibration can be a fraction of a degree off in a camera's rotation; two views then
place a joint off alike in every frame, and the joint angles they give carry a steady bias. The body itself is a
calibration object: each extra camera is turned about its own centre (position, lens and the world's scale
untouched; the main camera holds the world) so that the keypoints it is sure of reproject best onto their own
triangulation (Huber loss). On the Pose2Sim demo take the cameras turned
0.26–0.84° and the pairs of views met the 5° target in more joints (docs/pose.md, "Two phones (3D)").

The refinement is refused, and the file's calibration kept, where it would turn a camera more than
:data:`MAX_TURN_DEG` (a calibration that far off is wrong, not a fraction of a degree off), where fewer than
:data:`MIN_KEYPOINTS` sure keypoints per camera exist, or where it does not lower the reprojection error.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Callable, Sequence

import numpy as np

from viddiff.pose.calibration import Camera
from viddiff.pose.setup import rodrigues_to_matrix
from viddiff.schema import CalibrationRefinement

SURE = 0.7
"""Only keypoints at least this confident enter the fit and its reprojection error."""
MAX_TURN_DEG = 3.0
"""A camera the body would turn further than this is not refined (the demo's pairs turned 0.26–2.7°)."""
MIN_KEYPOINTS = 200
"""Fewer sure keypoints (frames × joints) than this in a camera, with a triangulated point: not refined."""
HUBER_PX = 10.0
"""Residuals beyond this many pixels count linearly (a misplaced keypoint does not pull the camera)."""

PointsOf = Callable[[Sequence[Camera]], np.ndarray]
"""The take's (T, J, 3) points triangulated through the given cameras (NaN where none)."""


def turned(camera: Camera, rotation: np.ndarray) -> Camera:
    """``camera`` turned about its own centre by the Rodrigues vector ``rotation`` (world → camera)."""
    turn = rodrigues_to_matrix(rotation) @ camera.rotation
    return replace(camera, rotation=turn, translation=-turn @ camera.centre)


def turn_degrees(a: Camera, b: Camera) -> float:
    """The angle between two cameras' rotations, in degrees."""
    change = b.rotation @ a.rotation.T
    return math.degrees(math.acos(float(np.clip((np.trace(change) - 1) / 2, -1.0, 1.0))))


def sure_keypoints(points: np.ndarray, pixels: np.ndarray, confidence: np.ndarray) -> np.ndarray:
    """(T, J) which of one view's keypoints (``pixels`` (T, J, 2), ``confidence`` (T, J)) enter the fit."""
    return np.isfinite(points).all(-1) & (confidence >= SURE) & np.isfinite(pixels).all(-1)


def reprojection_px(cameras: Sequence[Camera], pixels: np.ndarray, confidence: np.ndarray, points: np.ndarray) -> float:
    """Median distance in pixels between the views' sure keypoints and the triangulated points they picture
    (``pixels`` (C, T, J, 2), ``confidence`` (C, T, J)); NaN where none."""
    distances = []
    for camera, px, conf in zip(cameras, pixels, confidence):
        ok = sure_keypoints(points, px, conf)
        distances.append(np.linalg.norm(camera.project(points[ok]) - px[ok], axis=-1))
    found = np.concatenate(distances)
    found = found[np.isfinite(found)]
    return float(np.median(found)) if len(found) else math.nan


def refine_rotations(cameras: Sequence[Camera], pixels: np.ndarray, confidence: np.ndarray, *,
                     hold_first: bool = True) -> list[Camera]:
    """The cameras turned about their centres so that the keypoints sure in at least two views reproject best onto
    their own triangulation (``pixels`` (C, T, J, 2) labelled alike, ``confidence`` (C, T, J)); the first camera
    holds the world when ``hold_first``. The points are triangulated again for every trial turn (a linear
    triangulation of the undistorted rays, which the turns do not change), so the turns and the points are fitted
    together: alternating the two would let the points follow a turned camera and undo little of its turn."""
    from scipy.optimize import least_squares

    cameras = list(cameras)
    free = list(range(1 if hold_first else 0, len(cameras)))
    sure = (confidence >= SURE) & np.isfinite(pixels).all(-1)
    enough = sure.sum(0) >= 2
    sure = sure[:, enough]  # (C, N)
    seen = pixels[:, enough]  # (C, N, 2)
    rays = np.stack([np.nan_to_num(camera.normalised(px)) for camera, px in zip(cameras, seen)])
    weight = sure.astype(np.float64)[..., None]

    def turned_all(x: np.ndarray) -> list[Camera]:
        out = list(cameras)
        for k, c in enumerate(free):
            out[c] = turned(cameras[c], x[3 * k:3 * k + 3])
        return out

    def residuals(x: np.ndarray) -> np.ndarray:
        trial = turned_all(x)
        rows = []
        for c, camera in enumerate(trial):
            p = camera.projection()
            rows += [weight[c] * (rays[c, :, 0:1] * p[2] - p[0]), weight[c] * (rays[c, :, 1:2] * p[2] - p[1])]
        _, _, vt = np.linalg.svd(np.stack(rows, axis=-2))
        with np.errstate(invalid="ignore", divide="ignore"):
            points = vt[:, -1, :3] / vt[:, -1, 3:4]
        errors = np.stack([camera.project(points) - px for camera, px in zip(trial, seen)])
        return np.nan_to_num(np.where(sure[..., None], errors, 0.0), nan=1e3).ravel()

    if not free or not enough.any():
        return cameras
    fit = least_squares(residuals, np.zeros(3 * len(free)), loss="huber", f_scale=HUBER_PX)
    return turned_all(fit.x)


def refine_calibration(cameras: Sequence[Camera], pixels: np.ndarray, confidence: np.ndarray, points_of: PointsOf, *,
                       max_turn_deg: float = MAX_TURN_DEG, min_keypoints: int = MIN_KEYPOINTS
                       ) -> tuple[list[Camera], CalibrationRefinement]:
    """The cameras to triangulate with (refined, or the given ones where refused: see the module docstring) and
    what the refinement did, the main camera (the first) held."""
    cameras = list(cameras)
    points = points_of(cameras)
    before = reprojection_px(cameras, pixels, confidence, points)
    counts = [int(sure_keypoints(points, pixels[k], confidence[k]).sum()) for k in range(1, len(cameras))]

    def refused(reason: str, turns: Sequence[float] = (), after: float = math.nan) -> tuple[list[Camera], CalibrationRefinement]:
        return cameras, CalibrationRefinement(
            refined=False, reason=reason, turns_deg=[round(t, 3) for t in turns], error_before_px=_px(before),
            error_after_px=_px(after), keypoints=min(counts, default=0))

    few = [(cameras[k].name, n) for k, n in enumerate(counts, start=1) if n < min_keypoints]
    if few:
        name, n = few[0]
        return refused(f"{n} sure keypoints in {name}, fewer than the {min_keypoints} a refinement needs")
    refined = refine_rotations(cameras, pixels, confidence, hold_first=True)
    turns = [turn_degrees(a, b) for a, b in zip(cameras[1:], refined[1:])]
    after = reprojection_px(refined, pixels, confidence, points_of(refined))
    worst = int(np.argmax(turns))
    if turns[worst] > max_turn_deg:
        return refused(f"the body would turn {cameras[worst + 1].name} by {turns[worst]:.1f}°, more than the "
                       f"{max_turn_deg:g}° a calibration can be off and still be trusted", turns, after)
    if not after < before:
        return refused(f"the reprojection error would not fall ({before:.1f} → {after:.1f} px)", turns, after)
    return refined, CalibrationRefinement(
        refined=True, turns_deg=[round(t, 3) for t in turns], error_before_px=_px(before), error_after_px=_px(after),
        keypoints=min(counts))


def _px(value: float) -> float | None:
    return round(value, 2) if math.isfinite(value) else None


__all__ = ["MAX_TURN_DEG", "MIN_KEYPOINTS", "SURE", "refine_calibration", "refine_rotations", "reprojection_px",
           "turn_degrees", "turned"]
