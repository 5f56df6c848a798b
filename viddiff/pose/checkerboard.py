"""Calibrating phones with a printed checkerboard, as OpenCap and Pose2Sim do (OpenCV).

- **Intrinsics** (focal lengths, principal point, lens distortion) per phone from a clip of the board moved
  around in front of it: the board's inner corners are found in sampled frames (``findChessboardCorners``,
  refined to sub-pixel) and ``calibrateCamera`` fits them (k3 fixed at 0: phone lenses need no more, and
  Pose2Sim's format has four coefficients).
- **Extrinsics** (where each phone stands) from a board that stays still while both phones film it: the pose of
  the board in each camera (``solvePnP``) puts every camera in the board's world (metres; the board's first
  inner corner is the origin, its rows x, its columns y, its normal z).

The board must look the same to every phone: upright (standing, not lying flat), both phones on the same side
of it. A board's corners can be found in either of two orders (rotated 180°); the order is taken so that the rows
run down the picture, which an upright board and upright phones agree on.

Every calibration reports its RMS reprojection error in pixels (:attr:`Camera.error_px`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional, Sequence

import numpy as np

from viddiff.pose.calibration import Camera, CalibrationError
from viddiff.pose.setup import rodrigues_to_matrix

MIN_VIEWS = 5
"""Board views an intrinsic calibration needs (fewer leave the focal length and distortion poorly fixed)."""


@dataclass(frozen=True)
class Board:
    """A printed checkerboard: inner corners across and down, and the side of one square in metres."""

    columns: int
    rows: int
    square_m: float

    def points(self) -> np.ndarray:
        """(rows·columns, 3) the inner corners in the board's frame, in OpenCV's order (row by row), metres."""
        grid = np.mgrid[0 : self.columns, 0 : self.rows].T.reshape(-1, 2)
        return np.hstack([grid * self.square_m, np.zeros((len(grid), 1))]).astype(np.float64)


def find_corners(frame: np.ndarray, board: Board) -> Optional[np.ndarray]:
    """(rows·columns, 2) the board's inner corners in an RGB (or grey) frame, sub-pixel, rows running down the
    picture; ``None`` where the whole board is not seen."""
    import cv2

    grey = cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY) if frame.ndim == 3 else frame
    found, corners = cv2.findChessboardCorners(
        grey, (board.columns, board.rows), flags=cv2.CALIB_CB_ADAPTIVE_THRESH | cv2.CALIB_CB_NORMALIZE_IMAGE)
    if not found:
        return None
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 50, 0.001)
    corners = cv2.cornerSubPix(grey, corners, (5, 5), (-1, -1), criteria).reshape(-1, 2).astype(np.float64)
    if corners[-1, 1] < corners[0, 1]:  # the other of the two orders: rows running up the picture
        corners = corners[::-1].copy()
    return corners


def calibrate_intrinsics(frames: Sequence[np.ndarray], board: Board, name: str) -> tuple[Camera, int]:
    """A camera's intrinsics from frames showing the board (in front of it, at several angles), and how many
    frames showed it. The camera sits at the world's origin (no extrinsics yet)."""
    import cv2

    if not len(frames):
        raise CalibrationError(f"{name}: no frames to calibrate from")
    height, width = frames[0].shape[:2]
    found = [c for c in (find_corners(f, board) for f in frames) if c is not None]
    if len(found) < MIN_VIEWS:
        raise CalibrationError(
            f"{name}: the {board.columns}x{board.rows} board was found in {len(found)} of {len(frames)} frames; "
            f"intrinsics need at least {MIN_VIEWS} (film the whole board, still, at several angles and distances)")
    objects = [board.points().astype(np.float32)] * len(found)
    images = [c.astype(np.float32) for c in found]
    flags = cv2.CALIB_FIX_K3
    rms, matrix, distortion, _, _ = cv2.calibrateCamera(objects, images, (width, height), None, None, flags=flags)
    camera = Camera(name=name, width=width, height=height, matrix=np.asarray(matrix, dtype=np.float64),
                    distortion=np.resize(np.asarray(distortion, dtype=np.float64).ravel(), 5), rotation=np.eye(3),
                    translation=np.zeros(3), error_px=float(rms))
    return camera, len(found)


def locate(camera: Camera, corners: np.ndarray, board: Board) -> Camera:
    """``camera`` placed in the board's world from the board's corners in one of its frames (``solvePnP``); its
    ``error_px`` becomes the RMS of its intrinsic error and this fit's reprojection error."""
    import cv2

    objects = board.points()
    ok, rvec, tvec = cv2.solvePnP(objects, corners, camera.matrix, camera.distortion, flags=cv2.SOLVEPNP_ITERATIVE)
    if not ok:
        raise CalibrationError(f"{camera.name}: the board's pose could not be found")
    placed = replace(camera, rotation=rodrigues_to_matrix(np.ravel(rvec)), translation=np.ravel(tvec).astype(np.float64))
    fit = float(np.sqrt(np.mean(np.sum((placed.project(objects) - corners) ** 2, axis=1))))
    intrinsic = camera.error_px or 0.0
    return replace(placed, error_px=float(np.hypot(intrinsic, fit)))


def best_corners(frames: Sequence[np.ndarray], board: Board, camera: Camera) -> np.ndarray:
    """The board's corners in the frame (of a still board) that ``camera`` fits best: a blurred or half-hidden
    frame fits worse."""
    candidates = [c for c in (find_corners(f, board) for f in frames) if c is not None]
    if not candidates:
        raise CalibrationError(f"{camera.name}: the {board.columns}x{board.rows} board was not found in any frame")
    return min(candidates, key=lambda c: locate(replace(camera, error_px=None), c, board).error_px or 0.0)


__all__ = ["Board", "MIN_VIEWS", "best_corners", "calibrate_intrinsics", "find_corners", "locate"]
