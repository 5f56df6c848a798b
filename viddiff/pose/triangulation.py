"""3D points from 2D keypoints in several calibrated, synchronised views: weighted DLT, with the views that
disagree left out, and the reprojection error that says how far to trust the result.

Each view's pixel is undistorted into a ray (:meth:`viddiff.pose.calibration.Camera.normalised`); the point
is the weighted least-squares intersection of the rays in the direct linear transform (two rows per view,
weighted by the keypoint's confidence: a keypoint the estimator is unsure of pulls less). A view whose
reprojection error stays above ``max_error_px`` (a mislabelled side, another person's limb) is left out (the one
whose absence lets the others agree best), while more than ``min_views`` remain. Pure numpy.
"""

from __future__ import annotations

import math

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from viddiff.pose.calibration import Camera


@dataclass(frozen=True)
class Triangulated:
    """Points triangulated from several views, and how well each agrees with the views it used."""

    points: np.ndarray
    """(..., 3) world points, metres; NaN where fewer than ``min_views`` views saw the keypoint."""
    error_px: np.ndarray
    """(...,) root-mean-square reprojection error over the views used, pixels."""
    views: np.ndarray
    """(..., C) which views entered each point."""


def triangulate_point(projections: Sequence[np.ndarray], rays: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(3,) the point whose projections best fit ``rays`` ((C, 2) normalised coordinates) through
    ``projections`` ((C, 3, 4) ``[R | t]``), weighted by ``weights`` ((C,); 0 = unused): the right singular
    vector of the stacked DLT rows. NaN with fewer than two views of positive weight."""
    rows = []
    for p, (x, y), w in zip(projections, rays, weights):
        if w > 0 and np.isfinite(x) and np.isfinite(y):
            rows += [w * (x * p[2] - p[0]), w * (y * p[2] - p[1])]
    if len(rows) < 4:
        return np.full(3, np.nan)
    _, _, vt = np.linalg.svd(np.asarray(rows))
    h = vt[-1]
    if abs(h[3]) < 1e-12:
        return np.full(3, np.nan)
    return h[:3] / h[3]


def triangulate(
    cameras: Sequence[Camera],
    pixels: np.ndarray,
    confidence: np.ndarray,
    *,
    min_confidence: float = 0.5,
    min_views: int = 2,
    max_error_px: float = 15.0,
) -> Triangulated:
    """Triangulate keypoints seen by ``cameras``.

    ``pixels``: (C, ..., 2) per camera; ``confidence``: (C, ...) (below ``min_confidence``, or NaN pixels: not
    seen). While a point's worst view reprojects more than ``max_error_px`` away and more than ``min_views``
    views remain, the view whose absence lets the others agree best is left out."""
    pixels = np.asarray(pixels, dtype=np.float64)
    confidence = np.nan_to_num(np.asarray(confidence, dtype=np.float64), nan=0.0)
    n_cams = len(cameras)
    if pixels.shape[0] != n_cams or confidence.shape != pixels.shape[:-1]:
        raise ValueError(f"{n_cams} cameras need pixels (C, ..., 2) and confidence (C, ...); got {pixels.shape}, {confidence.shape}")
    shape = pixels.shape[1:-1]
    flat_px = pixels.reshape(n_cams, -1, 2)
    flat_conf = confidence.reshape(n_cams, -1)
    rays = np.stack([cam.normalised(flat_px[c]) for c, cam in enumerate(cameras)])
    projections = np.stack([cam.projection() for cam in cameras])
    n = flat_px.shape[1]
    points, errors = np.full((n, 3), np.nan), np.full(n, np.nan)
    used = np.zeros((n, n_cams), dtype=bool)
    seen = (flat_conf >= min_confidence) & np.isfinite(flat_px).all(axis=-1)
    for i in range(n):
        views = seen[:, i].copy()
        if views.sum() < min_views:
            continue
        point, gaps = _solve(cameras, projections, rays[:, i], flat_conf[:, i], flat_px[:, i], views)
        while np.isfinite(point).all() and _worst(gaps) > max_error_px and views.sum() > min_views:
            # leave out the view whose absence lets the others agree best (the worst-fitting view of the full
            # solution need not be the wrong one: least squares spreads one view's error over all)
            trials = []
            for c in np.flatnonzero(views):
                fewer = views.copy()
                fewer[c] = False
                trials.append((fewer, *_solve(cameras, projections, rays[:, i], flat_conf[:, i], flat_px[:, i], fewer)))
            views, point, gaps = min(trials, key=lambda trial: _worst(trial[2]) if np.isfinite(trial[1]).all() else np.inf)
        if np.isfinite(point).all():
            points[i], errors[i], used[i] = point, _rms(gaps), views
    return Triangulated(points=points.reshape(*shape, 3), error_px=errors.reshape(shape), views=used.reshape(*shape, n_cams))


def _worst(gaps: np.ndarray) -> float:
    """The largest reprojection gap; NaN where no view's gap is known (a point behind every camera), without
    numpy's 'All-NaN slice' warning reaching the user's terminal."""
    known = gaps[np.isfinite(gaps)]
    return float(known.max()) if known.size else math.nan


def _rms(gaps: np.ndarray) -> float:
    """The root mean square of the known gaps (NaN where none is known, as :func:`_worst`)."""
    known = gaps[np.isfinite(gaps)]
    return float(np.sqrt(np.mean(known ** 2))) if known.size else math.nan


def _solve(
    cameras: Sequence[Camera], projections: np.ndarray, rays: np.ndarray, weights: np.ndarray, pixels: np.ndarray,
    views: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """One point from ``views``, and each used view's reprojection error in pixels (NaN for the others)."""
    point = triangulate_point(projections, rays, np.where(views, weights, 0.0))
    if not np.isfinite(point).all():
        return point, np.full(len(cameras), np.inf)
    gaps = np.array([np.linalg.norm(cam.project(point) - pixels[c]) if views[c] else np.nan for c, cam in enumerate(cameras)])
    return point, gaps


def reprojection_errors(cameras: Sequence[Camera], points: np.ndarray, pixels: np.ndarray) -> np.ndarray:
    """(C, ...) pixel distance between each camera's projection of ``points`` ((..., 3)) and ``pixels``
    ((C, ..., 2)); NaN where either is missing."""
    return np.stack([np.linalg.norm(cam.project(points) - pixels[c], axis=-1) for c, cam in enumerate(cameras)])


__all__ = ["Triangulated", "reprojection_errors", "triangulate", "triangulate_point"]
