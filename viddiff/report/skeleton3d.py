"""The report's 3D skeleton view: both performances' measured 3D poses at one keyframe, in one picture.

Each pose is moved into its body's own frame (origin between the hips, y up, x from the right hip to the left
one, z forwards), so A and B overlay wherever their cameras stood and however the person faced them; metres are
kept, so a deeper squat or a taller person shows as such. The page's own script (``report.js``) projects the
points and turns them as the reader drags; nothing is fetched, and the data travels in the SVG's
``data-skeleton`` attribute (escaped like every value of the page).
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from viddiff.pose.skeleton import BONES, INDEX, JOINTS
from viddiff.report.views import Skeleton3DView
from viddiff.schema import EvidencePoint

Point3 = Optional[tuple[float, float, float]]
MIN_JOINTS = 4
"""Fewer joints than this found in a pose: nothing worth turning around is drawn."""
Y_UP = (0.0, 1.0, 0.0)
"""The up of :class:`viddiff.schema.Skeleton3D`'s points."""


def keyframe_skeletons(a: Optional[EvidencePoint], b: Optional[EvidencePoint]) -> Optional[Skeleton3DView]:
    """The 3D view of a pair of keyframes, where both performances' evidence carries its body in 3D there (each
    filmed from calibrated views); ``None`` otherwise (one-view evidence has only the picture's keypoints)."""
    if a is None or b is None or a.skeleton is None or b.skeleton is None:
        return None
    if not a.skeleton.points or not b.skeleton.points:
        return None
    return skeleton_3d_view(a.skeleton.points, Y_UP, b.skeleton.points, Y_UP,
                            time_a=a.skeleton.time_s, time_b=b.skeleton.time_s)


def skeleton_3d_view(
    points_a: Sequence[Point3], up_a: Sequence[float], points_b: Sequence[Point3], up_b: Sequence[float],
    *, time_a: float, time_b: float,
) -> Optional[Skeleton3DView]:
    """The view of both poses (each a point per joint of :data:`JOINTS`, ``None`` where not triangulated, in its
    own world with its own ``up``), or ``None`` when either pose lacks its hips or too many joints."""
    bodies = [_body_frame(points, up) for points, up in ((points_a, up_a), (points_b, up_b))]
    if bodies[0] is None or bodies[1] is None:
        return None
    a, b = bodies
    found = [p for p in (*a, *b) if p is not None]
    radius = max(float(np.linalg.norm(p)) for p in found)
    return Skeleton3DView(
        a=a, b=b, joints=list(JOINTS), bones=[(INDEX[i], INDEX[j]) for i, j in BONES], radius=round(radius * 1.1, 3),
        label=f"A at {time_a:.2f} s, B at {time_b:.2f} s",
    )


def _body_frame(points: Sequence[Point3], up: Sequence[float]) -> Optional[list[Point3]]:
    """The points in the body's frame (see the module docstring), rounded to the millimetre."""
    if len(points) != len(JOINTS):
        raise ValueError(f"a pose has {len(points)} points; expected one per joint ({len(JOINTS)})")
    xyz = np.array([p if p is not None else (np.nan,) * 3 for p in points], dtype=float)
    left, right = xyz[INDEX["left_hip"]], xyz[INDEX["right_hip"]]
    if np.isnan(left).any() or np.isnan(right).any() or np.isfinite(xyz).all(axis=1).sum() < MIN_JOINTS:
        return None
    y = np.asarray(up, dtype=float)
    y = y / np.linalg.norm(y)
    across = left - right
    x = across - np.dot(across, y) * y  # the hip line, made horizontal
    if np.linalg.norm(x) < 1e-6:  # hips one above the other: lying on a side; any horizontal axis will do
        x = np.cross(y, [1.0, 0.0, 0.0] if abs(y[0]) < 0.9 else [0.0, 0.0, 1.0])
    x = x / np.linalg.norm(x)
    z = np.cross(x, y)
    body = (xyz - (left + right) / 2) @ np.stack([x, y, z]).T
    return [None if np.isnan(p).any() else tuple(round(float(v), 3) for v in p) for p in body]
