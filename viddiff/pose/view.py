"""Where the camera stands relative to the measured body (:class:`viddiff.schema.CameraView`), and whether two
videos' views allow comparing body angles (:func:`comparable_views`).

The yaw per frame comes from :mod:`viddiff.pose.facing` (3D world landmarks where the estimator gives them,
else 2D torso geometry); a video's view is the circular median over the frames asked for, its spread half
the interquartile range of the frames' distances from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import numpy as np

from viddiff.pose.facing import circular_median, facing_per_frame, wrap_degrees as _wrap, yaw_2d, yaw_3d
from viddiff.pose.people import describe_subject
from viddiff.pose.roll import body_up
from viddiff.pose.vocabulary import QUANTITIES
from viddiff.schema import CameraView, Evidence, MeasurementSpec

if TYPE_CHECKING:
    from viddiff.pose.track import PoseTrack

THREE_D = "3D world landmarks"
TWO_D = "2D torso geometry"
TRIANGULATED = "triangulated 3D from"
"""How a 3D performance's view starts (:func:`triangulated_method`): its values are the body's own."""
MIN_FRAMES = 3
"""Fewer frames with a readable torso than this: the view is ``unknown``."""
FRONT_WITHIN = 30.0
"""|yaw| up to this: ``front``; from 180 minus this: ``back``; within this of ±90: ``side``; else ``oblique``."""
WORDS = {"front": "the front", "back": "behind", "side": "the side", "oblique": "an angle", "unknown": "an unknown angle"}


def triangulated_method(views: int) -> str:
    """The :attr:`CameraView.method` of a performance triangulated from ``views`` calibrated videos (its yaw is
    the main camera's)."""
    return f"{TRIANGULATED} {views} calibrated views"


def is_triangulated(view: Optional[CameraView]) -> bool:
    """Whether a view is a triangulated 3D performance's (:func:`triangulated_method`)."""
    return view is not None and view.method.startswith(TRIANGULATED)


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
    up = body_up(track)  # the camera's roll is the clip's, whatever part of it is measured
    roll = dict(roll_deg=None if up is None else round(up, 1), turned_deg=track.turned_deg)
    if len(yaw) < MIN_FRAMES:
        return CameraView(label="unknown", frames=int(len(yaw)), method=method, **roll)
    middle = circular_median(yaw)
    distances = np.abs(_wrap(yaw - middle))
    q1, q3 = np.percentile(distances, [25, 75])
    return CameraView(
        label=view_label(middle), yaw_deg=round(float(middle), 1), spread_deg=round(float(q3 - q1) / 2, 1),
        frames=int(len(yaw)), method=method, **roll,
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
    bound of the real gap. A triangulated performance's yaw (its main camera's) is a full-circle one, like 3D
    landmarks'."""
    if a.yaw_deg is None or b.yaw_deg is None:
        return float("nan")
    if _full_circle(a) and _full_circle(b):
        return abs(float(_wrap(np.float64(a.yaw_deg) - np.float64(b.yaw_deg))))
    return abs(_turn(a.yaw_deg) - _turn(b.yaw_deg))


def _full_circle(view: CameraView) -> bool:
    """Whether the view's yaw tells front from back and left from right (3D landmarks, or a triangulated body)."""
    return view.method == THREE_D or is_triangulated(view)


def _turn(yaw: float) -> float:
    turned = abs(float(yaw))
    return min(turned, 180.0 - turned)


def comparable_views(
    a: CameraView, b: CameraView, tolerance_deg: float, spec: Optional[MeasurementSpec] = None
) -> Optional[str]:
    """``None`` when the quantity ``spec`` of A and B can be compared; otherwise why not, in plain words.

    The views' yaws must be within ``tolerance_deg`` (:func:`view_gap`). B's mirror image is never taken as the
    match, even for a quantity that keeps its value in a mirror: a pixel-mirrored copy and a real camera at the
    mirrored angle cannot be told apart by the view, and the Pose2Sim back-left and back-right cameras (yaw +145°
    and −133°) matched that way gave 9 false a/b of 84 (docs/pose.md, "Mirrors"). For a quantity read against
    the picture's vertical (trunk lean, heights: ``roll``), the body's up directions (:attr:`CameraView.roll_deg`,
    after any quarter turns) must also be within ``tolerance_deg``: a rolled camera tilts them all.
    ``spec=None``: the yaw alone. Two triangulated 3D views always compare (their values are the body's own,
    whatever the cameras); a 3D view against a 2D one follows the rules above, with the 3D side's main camera."""
    if is_triangulated(a) and is_triangulated(b):
        return None
    if a.yaw_deg is None or b.yaw_deg is None:
        unknown = [name for name, view in (("A", a), ("B", b)) if view.yaw_deg is None]
        return (
            f"the camera's view of the body could not be estimated in {' and '.join(unknown)} (too few frames "
            "show the torso), so body angles cannot be checked to be seen from comparable directions"
        )
    gap = view_gap(a, b)
    if gap > tolerance_deg:
        return (
            f"A filmed from {WORDS[a.label]} (yaw {a.yaw_deg:+.0f}°), B from {WORDS[b.label]} (yaw {b.yaw_deg:+.0f}°): "
            f"views {gap:.0f}° apart, more than the {tolerance_deg:g}° within which 2D body angles compare"
        )
    if spec is None or not QUANTITIES[spec.quantity].roll or a.roll_deg is None or b.roll_deg is None:
        return None
    tilt = abs(float(_wrap(b.roll_deg - a.roll_deg)))
    if tilt <= tolerance_deg:
        return None
    return (
        f"the body's up direction in the picture differs by {tilt:.0f}° between A ({a.roll_deg:+.0f}°) and B ({b.roll_deg:+.0f}°), "
        f"more than {tolerance_deg:g}°: a rolled camera and a different posture cannot be "
        f"told apart, and {QUANTITIES[spec.quantity].name.replace('_', ' ')} is read against the picture's vertical"
    )


def describe_measured(evidence: Evidence) -> str:
    """Who was measured in each video and from where, for people: "A: the person on the left, 1 of 3 in view,
    filmed from the front (yaw +1°); B: the only person in view, filmed from an angle (yaw −40°)"."""
    parts = []
    for which, view, subject in (("A", evidence.view_a, evidence.subject_a), ("B", evidence.view_b, evidence.subject_b)):
        words = [w for w in (subject and describe_subject(subject), view and describe_view(view)) if w]
        if words:
            parts.append(f"{which}: {', '.join(words)}")
    return "; ".join(parts)


def faces_plane(view: Optional[CameraView], plane: Optional[str], tolerance_deg: float) -> bool:
    """Whether the camera faces a quantity's plane of motion within ``tolerance_deg``, so that its 2D value is the
    body's own: ``sagittal`` (joint angles, lean) from the side, ``frontal`` (widths) from the front or back.
    Front and back are folded together, so a 2D view estimate answers as well as a 3D one."""
    if is_triangulated(view):
        return True
    if view is None or view.yaw_deg is None or plane is None:
        return False
    turn = _turn(view.yaw_deg)
    return turn >= 90.0 - tolerance_deg if plane == "sagittal" else turn <= tolerance_deg


def describe_view(view: CameraView) -> str:
    """The view in words: "filmed from an angle (yaw −40°)", with any quarter turns made to measure it; a
    triangulated view says so ("in 3D from 2 calibrated views, the main one from the side (yaw +85°)")."""
    if is_triangulated(view):
        views = view.method[len(TRIANGULATED):].strip()
        main = "" if view.label == "unknown" else f", the main one from {WORDS[view.label]} (yaw {view.yaw_deg:+.0f}°)"
        return f"in 3D from {views}{main}"
    if view.label == "unknown":
        words = "camera view unknown"
    else:
        words = f"filmed from {WORDS[view.label]}" + (f" (yaw {view.yaw_deg:+.0f}°)" if view.yaw_deg is not None else "")
    if view.turned_deg:
        how = "upside down" if view.turned_deg == 180 else f"on its side, turned {view.turned_deg}° back"
        words += f"; the picture is {how} relative to the other video's (keypoints turned back to measure)"
    return words


__all__ = [
    "circular_median", "comparable_views", "describe_measured", "describe_view", "estimate_view", "faces_plane",
    "frame_yaws", "is_triangulated", "triangulated_method", "view_gap", "view_label",
]
