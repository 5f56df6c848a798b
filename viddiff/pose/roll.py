"""The camera's roll: which way the body's up points in the picture, and pictures turned a quarter or half turn.

A phone filmed sideways without a rotation tag shows the person lying on their side; one held upside down
shows them head down. Joint angles, widths and speeds do not change when the picture turns, but trunk lean
(from the picture's vertical) and heights do: a sideways copy of a clip read "the torso leans further: 93° vs
47°" against its upright original. The body's own up direction (ankles to shoulders, else hips to shoulders;
the circular median over the clip) is the gravity direction a standing or moving person gives; on a real clip
and its copies turned by 90°, 180° and 270° it moved by those angles within 2° (docs/pose.md, "Roll").

One video alone cannot tell a turned camera from a body that is really horizontal or upside down (a push-up,
a handstand), so the correction is made between the two videos of a pair (:func:`level_pair`): where their
up directions differ by about a quarter or half turn (within :data:`STEP_TOLERANCE_DEG`), the video whose
picture is further from upright has its keypoints turned back by that many quarter turns before anything is
measured. Whatever difference remains is checked against the view tolerance for the quantities it changes
(:func:`viddiff.pose.view.comparable_views`). Pure numpy.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Optional

import numpy as np

from viddiff.pose.facing import circular_median, wrap_degrees
from viddiff.pose.skeleton import INDEX

if TYPE_CHECKING:
    from viddiff.pose.track import PoseTrack

STEP_TOLERANCE_DEG = 30.0
"""Up directions of a pair this close to a whole number of quarter turns apart: one picture is turned."""
MIN_FRAMES = 3
KEY_CONFIDENCE = 0.5


def frame_ups(xy: np.ndarray, confidence: np.ndarray) -> np.ndarray:
    """(T,) the body's up direction in each frame, degrees clockwise from the picture's up (0 upright, 90 the head
    towards the picture's right, 180 upside down); NaN where the shoulders and hips are not sure."""
    def middle(joint: str) -> tuple[np.ndarray, np.ndarray]:
        left, right = INDEX[f"left_{joint}"], INDEX[f"right_{joint}"]
        sure = (confidence[:, left] >= KEY_CONFIDENCE) & (confidence[:, right] >= KEY_CONFIDENCE)
        return (xy[:, left] + xy[:, right]) / 2, sure

    shoulders, shoulders_sure = middle("shoulder")
    hips, hips_sure = middle("hip")
    ankles, ankles_sure = middle("ankle")
    base = np.where(ankles_sure[:, None], ankles, hips)
    up = shoulders - base
    angle = np.degrees(np.arctan2(up[:, 0], -up[:, 1]))
    return np.where(shoulders_sure & hips_sure & (np.linalg.norm(up, axis=1) > 0), angle, np.nan)


def body_up(track: "PoseTrack") -> Optional[float]:
    """The circular median of :func:`frame_ups` over the whole clip (``None``: fewer than :data:`MIN_FRAMES`)."""
    ups = frame_ups(track.xy, track.confidence)
    ups = ups[np.isfinite(ups)]
    return circular_median(ups) if len(ups) >= MIN_FRAMES else None


def turned(track: "PoseTrack", degrees: int) -> "PoseTrack":
    """``track`` as if its picture had been turned ``degrees`` (a multiple of 90) counter-clockwise: the
    keypoints, the world landmarks' x and y, and the frame's size."""
    quarters = (degrees // 90) % 4
    if quarters == 0:
        return track
    x, y = track.xy[..., 0], track.xy[..., 1]
    width, height = track.width, track.height
    if quarters == 1:
        xy, size = np.stack([y, width - x], axis=-1), (height, width)
    elif quarters == 2:
        xy, size = np.stack([width - x, height - y], axis=-1), (width, height)
    else:
        xy, size = np.stack([height - y, x], axis=-1), (height, width)
    world = track.world_xyz
    if world is not None:
        wx, wy, wz = world[..., 0], world[..., 1], world[..., 2]
        world = np.stack({1: (wy, -wx, wz), 2: (-wx, -wy, wz), 3: (-wy, wx, wz)}[quarters], axis=-1)
    return dataclasses.replace(
        track, xy=xy, world_xyz=world, width=size[0], height=size[1], turned_deg=(track.turned_deg + 90 * quarters) % 360,
    )


def level_pair(a: "PoseTrack", b: "PoseTrack") -> tuple["PoseTrack", "PoseTrack"]:
    """Both tracks, the one whose picture is further from upright turned back by whole quarter turns where the
    pair's up directions differ by about that much (see the module docstring); unchanged otherwise."""
    if a is b:
        return a, b
    up_a, up_b = body_up(a), body_up(b)
    if up_a is None or up_b is None:
        return a, b
    gap = float(wrap_degrees(up_b - up_a))
    quarters = int(np.round(gap / 90.0))
    if quarters == 0 or abs(gap - 90 * quarters) > STEP_TOLERANCE_DEG:
        return a, b
    if abs(up_b) >= abs(up_a):  # B's picture is the turned one: turn it back by the gap (counter-clockwise)
        return a, turned(b, 90 * quarters)
    return turned(a, -90 * quarters), b


__all__ = ["STEP_TOLERANCE_DEG", "body_up", "frame_ups", "level_pair", "turned"]
