"""How far a 3D performance's quantities may move because its calibration is not exact: the calibration part of
a two-view value's interval, for a calibration that reports its reprojection error (``viddiff calibrate``).

A calibration error is systematic: the same small turn of a camera for the whole take. So each camera is
turned by a random small rotation whose angle per axis has a standard deviation of its reprojection error over
its focal length (a calibration whose corners fit to ``e`` px can be off by about that much in direction), the
same 2D keypoints are triangulated through the turned cameras (a weighted DLT over the views each point used),
filtered, and the quantities compared with the unturned ones; the part is twice the RMS change (≈95%), per
quantity, over a few draws. A Qualisys calibration gives no pixel error and gets no such part: its error is
part of what ``bench/pose_3d.py`` calibrated :data:`viddiff.pose.triangulation_part.TRIANGULATION_ERRORS` on.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from viddiff.pose.calibration import Camera
from viddiff.pose.filtering import butterworth
from viddiff.pose.kinematics3d import derive_3d
from viddiff.pose.kinematics import OK
from viddiff.pose.setup import rodrigues_to_matrix

DRAWS = 4


def weighted_dlt(cameras: Sequence[Camera], pixels: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(..., 3) points from (C, ..., 2) pixels and (C, ...) weights (0: the view does not count), all at once;
    NaN where fewer than two views count."""
    n_cams = len(cameras)
    rays = np.stack([camera.normalised(pixels[c]) for c, camera in enumerate(cameras)])
    weights = np.where(np.isfinite(rays).all(-1), weights, 0.0)
    rays = np.nan_to_num(rays)
    rows = []
    for c, camera in enumerate(cameras):
        p = camera.projection()
        w = weights[c][..., None]
        rows += [w * (rays[c, ..., 0:1] * p[2] - p[0]), w * (rays[c, ..., 1:2] * p[2] - p[1])]
    a = np.stack(rows, axis=-2)  # (..., 2C, 4)
    enough = (weights > 0).sum(axis=0) >= 2
    a = np.where(enough[..., None, None], a, np.eye(2 * n_cams, 4))
    _, _, vt = np.linalg.svd(a)
    h = vt[..., -1, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        points = h[..., :3] / h[..., 3:4]
    return np.where(enough[..., None], points, np.nan)


def turned(camera: Camera, rng: np.random.Generator) -> Camera:
    """``camera`` turned by a random rotation of about its reprojection error over its focal length per axis."""
    spread = (camera.error_px or 0.0) / float(camera.matrix[0, 0])
    rotation = rodrigues_to_matrix(rng.normal(0.0, spread, 3)) @ camera.rotation
    centre = camera.centre
    return Camera(**{**camera.__dict__, "rotation": rotation, "translation": -rotation @ centre})


def calibration_parts(
    cameras: Sequence[Camera], pixels: np.ndarray, weights: np.ndarray, times_s: np.ndarray, up: np.ndarray,
    cutoff_hz: float, quantities: Sequence[str], seed: int = 0,
) -> dict[str, float]:
    """Per quantity of ``quantities``, the calibration part (see the module docstring); empty when no camera
    reports a reprojection error."""
    if not any(camera.error_px for camera in cameras):
        return {}
    reasons = np.full(pixels.shape[1:3], OK, dtype=np.int8)

    def series(cams: Sequence[Camera]) -> dict[str, np.ndarray]:
        points = butterworth(weighted_dlt(cams, pixels, weights), times_s, cutoff_hz)
        values, _ = derive_3d(points, reasons, times_s, up)
        return values

    base = series(cameras)
    rng = np.random.default_rng(seed)
    changes: dict[str, list[np.ndarray]] = {q: [] for q in quantities}
    for _ in range(DRAWS):
        moved = series([turned(camera, rng) for camera in cameras])
        for name, values in moved.items():
            quantity = name.split("_", 1)[1] if name.startswith(("left_", "right_")) else name
            if quantity in changes:
                changes[quantity].append(values - base[name])
    out = {}
    for quantity, found in changes.items():
        stacked = np.concatenate([f[np.isfinite(f)] for f in found]) if found else np.array([])
        if len(stacked):
            out[quantity] = round(2.0 * float(np.sqrt(np.mean(stacked ** 2))), 3)
    return out


__all__ = ["calibration_parts", "turned", "weighted_dlt"]
