"""Where the camera stands relative to the measured body (:class:`viddiff.schema.CameraView`), and whether two
videos' views allow comparing body angles (:func:`comparable_views`).

The yaw per frame comes from :mod:`viddiff.pose.facing` (3D world landmarks where the estimator gives them,
else 2D torso geometry); a video's view is the circular median over the frames asked for, its spread half
the interquartile range of the frames' distances from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import numpy as np

from viddiff.pose.facing import facing_per_frame, yaw_2d, yaw_3d
from viddiff.schema import CameraView

if TYPE_CHECKING:
    from viddiff.pose.track import PoseTrack

THREE_D = "3D world landmarks"
TWO_D = "2D torso geometry"
MIN_FRAMES = 3
"""Fewer frames with a readable torso than this: the view is ``unknown``."""
FRONT_WITHIN = 30.0
"""|yaw| up to this: ``front``; from 180 minus this: ``back``; within this of ±90: ``side``; else ``oblique``."""
WORDS = {"front": "the front", "back": "behind", "side": "the side", "oblique": "an angle", "unknown": "an unknown angle"}


def frame_yaws(track: "PoseTrack", rows: Optional[np.ndarray] = None) -> tuple[np.ndarray, str]:
    """(n,) yaw per frame of ``rows`` (NaN where unreadable), and the method's words."""
    index = np.arange(len(track.xy)) if rows is None else np.arange(len(track.xy))[rows]
    world = track.world_xyz
    if world is not None and np.isfinite(world[index]).all(axis=(1, 2)).any():
        facing, _ = facing_per_frame(track.xy, track.confidence, world)  # over the whole track: runs span rows
        yaw, facing = yaw_3d(world[index]), facing[index]
        labelled_front = np.abs(yaw) < 90
        # a frame seen as its own mirror image (back for front, sides swapped) has its yaw off by 180°
        mirrored = ((facing > 0) & ~labelled_front) | ((facing < 0) & labelled_front)
        return np.where(mirrored, _wrap(yaw + 180.0), yaw), THREE_D
    return yaw_2d(track.xy[index], track.confidence[index]), TWO_D


def estimate_view(track: "PoseTrack", rows: Optional[np.ndarray] = None) -> CameraView:
    """The view over the sampled frames ``rows`` (a boolean mask or indices; ``None`` = all frames)."""
    yaw, method = frame_yaws(track, rows)
    yaw = yaw[np.isfinite(yaw)]
    if len(yaw) < MIN_FRAMES:
        return CameraView(label="unknown", frames=int(len(yaw)), method=method)
    middle = circular_median(yaw)
    distances = np.abs(_wrap(yaw - middle))
    q1, q3 = np.percentile(distances, [25, 75])
    return CameraView(
        label=view_label(middle), yaw_deg=round(float(middle), 1), spread_deg=round(float(q3 - q1) / 2, 1),
        frames=int(len(yaw)), method=method,
    )


def view_label(yaw: float) -> str:
    turned = abs(float(yaw))
    if turned <= FRONT_WITHIN:
        return "front"
    if turned >= 180.0 - FRONT_WITHIN:
        return "back"
    if abs(turned - 90.0) <= FRONT_WITHIN:
        return "side"
    return "oblique"


def view_gap(a: CameraView, b: CameraView) -> float:
    """Degrees between two views' yaws. From 3D world landmarks both: the full circular difference (a camera
    behind is 180° from one in front: the picture is mirrored, and on the Pose2Sim cameras a front-left and a
    back-right view 5° from mirror images still gave knee angles 10–11° apart). From 2D: only how far each is
    turned from square-on (0–90°), since 2D cannot tell front from back or one side from the other; a lower
    bound of the real gap."""
    if a.yaw_deg is None or b.yaw_deg is None:
        return float("nan")
    if a.method == b.method == THREE_D:
        return abs(float(_wrap(np.float64(a.yaw_deg) - np.float64(b.yaw_deg))))
    return abs(_turn(a.yaw_deg) - _turn(b.yaw_deg))


def _turn(yaw: float) -> float:
    turned = abs(float(yaw))
    return min(turned, 180.0 - turned)


def comparable_views(a: CameraView, b: CameraView, tolerance_deg: float) -> Optional[str]:
    """``None`` when body angles of A and B can be compared (:func:`view_gap` within ``tolerance_deg``);
    otherwise why not, in plain words."""
    if a.yaw_deg is None or b.yaw_deg is None:
        unknown = [name for name, view in (("A", a), ("B", b)) if view.yaw_deg is None]
        return (
            f"the camera's view of the body could not be estimated in {' and '.join(unknown)} (too few frames "
            "show the torso), so body angles cannot be checked to be seen from comparable directions"
        )
    gap = view_gap(a, b)
    if gap <= tolerance_deg:
        return None
    return (
        f"A filmed from {WORDS[a.label]} (yaw {a.yaw_deg:+.0f}°), B from {WORDS[b.label]} (yaw {b.yaw_deg:+.0f}°): "
        f"views {gap:.0f}° apart, more than the {tolerance_deg:g}° within which 2D body angles compare"
    )


def faces_plane(view: Optional[CameraView], plane: Optional[str], tolerance_deg: float) -> bool:
    """Whether the camera faces a quantity's plane of motion within ``tolerance_deg``, so that its 2D value is the
    body's own: ``sagittal`` (joint angles, lean) from the side, ``frontal`` (widths) from the front or back.
    Front and back are folded together, so a 2D view estimate answers as well as a 3D one."""
    if view is None or view.yaw_deg is None or plane is None:
        return False
    turn = _turn(view.yaw_deg)
    return turn >= 90.0 - tolerance_deg if plane == "sagittal" else turn <= tolerance_deg


def circular_median(degrees: np.ndarray) -> float:
    """The angle minimising the summed circular distance to ``degrees`` (searched over the data themselves)."""
    values = np.asarray(degrees, dtype=np.float64)
    costs = [np.abs(_wrap(values - v)).sum() for v in values]
    return float(values[int(np.argmin(costs))])


def _wrap(degrees: np.ndarray) -> np.ndarray:
    """Into (-180, 180]."""
    return 180.0 - np.mod(180.0 - np.asarray(degrees, dtype=np.float64), 360.0)


__all__ = ["circular_median", "comparable_views", "estimate_view", "faces_plane", "frame_yaws", "view_gap", "view_label"]
