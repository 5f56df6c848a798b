"""Which way the body faces the camera, frame by frame: the yaw, and front/back told apart over time.

- **3D world landmarks** (BlazePose): the body's left-right axis (left minus right shoulder and hip) in the
  camera's x-z plane gives the yaw; the nose in front of or behind the shoulders (depth) says whether the face
  is towards the camera.
- **2D torso geometry** (any estimator): the shoulders' and hips' width against the torso's length gives how
  square-on the torso is (|cos yaw|), the nose's offset from the shoulders which side is nearer; front or back
  only as the left/right labels say (BlazePose's nose visibility stays near 1 with the back to the camera,
  measured on the Pose2Sim cameras 3 and 4, so it cannot tell).

One frame's front/back reading is not trusted: on a front-view Pose2Sim camera BlazePose returned, in 6 of 25
frames, a whole body seen from behind (nose behind the shoulders, left and right swapped together), a
self-consistent mirror image. A person cannot turn from front to back without passing through a side-on torso,
so front/back is decided per *square-on run* (consecutive frames with |cos yaw| above ``SQUARE_ON``) by the
run's clear majority (``DECIDED``); a run without one is contested: its sides cannot be resolved. A single
side-on frame between two square-on ones does not end a run: on the frontal Pose2Sim camera (cam02) one glitched
frame (|cos yaw| 0.29 between 0.97 and 0.91) split the take in two, and the second part, whose mirror images
(21 of 54 frames) fell short of the majority alone, lost its sides in all 54 frames.
Sign convention of :class:`viddiff.schema.CameraView`: 0 = facing the camera, +90 = the person's left side
towards it, ±180 = back to it. Pure numpy.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from viddiff.pose.skeleton import INDEX

FRONT_WIDTH = 0.55
"""Half the sum of shoulder and hip widths over the torso length of a torso seen square-on (2D); a narrower
torso is turned by arccos(width / this). Fitted against the 3D yaw over the 8 Pose2Sim cameras (200 frames):
the folded 2D yaw is then within 12° of the 3D one (median; 90th percentile 23°)."""
NOSE_DEPTH_M = 0.04
"""The nose at least this far (metres) nearer the camera than the shoulders: facing it; this far behind: back."""
SQUARE_ON = 0.5
"""|cos yaw| above this (within 60° of front or back): the x-order of left and right is a usable check."""
DECIDED = 2 / 3
"""Share of a square-on run's front/back readings that must agree for the run to be decided."""
KEY_CONFIDENCE = 0.5


def _pair(points: np.ndarray, joint: str) -> tuple[np.ndarray, np.ndarray]:
    return points[:, INDEX[f"left_{joint}"]], points[:, INDEX[f"right_{joint}"]]


def yaw_3d(world: np.ndarray) -> np.ndarray:
    """(T,) yaw in degrees from (T, J, 3) world landmarks (x right, y down, z away from the camera), as labelled;
    NaN where the torso is missing. Front/back as the labels say (see :func:`face_towards_camera`)."""
    ls, rs = _pair(world, "shoulder")
    lh, rh = _pair(world, "hip")
    across = (ls - rs) + (lh - rh)
    return np.degrees(np.arctan2(-across[:, 2], across[:, 0]))


def face_towards_camera(world: Optional[np.ndarray], n: int) -> np.ndarray:
    """(n,) one frame's reading: +1 the nose nearer the camera than the shoulders, -1 behind them, 0 unknown
    (and always 0 without world landmarks)."""
    facing = np.zeros(n, dtype=np.int8)
    if world is None:
        return facing
    ls, rs = _pair(world, "shoulder")
    depth = world[:, INDEX["nose"], 2] - (ls[:, 2] + rs[:, 2]) / 2
    with np.errstate(invalid="ignore"):
        facing[depth < -NOSE_DEPTH_M] = 1
        facing[depth > NOSE_DEPTH_M] = -1
    return facing


def square_on(xy: np.ndarray, world: Optional[np.ndarray]) -> np.ndarray:
    """(T,) |cos yaw|: 1 square-on (front or back), 0 side-on; from 3D where given, else 2D widths. NaN unknown."""
    flat = np.clip(torso_width_ratio(xy) / FRONT_WIDTH, 0.0, 1.0)
    if world is None:
        return flat
    deep = np.abs(np.cos(np.radians(yaw_3d(world))))
    return np.where(np.isfinite(deep), deep, flat)


def torso_width_ratio(xy: np.ndarray) -> np.ndarray:
    """(T,) half the sum of shoulder and hip widths (image x-y distance) over the torso length."""
    ls, rs = _pair(xy, "shoulder")
    lh, rh = _pair(xy, "hip")
    torso = np.linalg.norm((ls + rs) / 2 - (lh + rh) / 2, axis=-1)
    width = (np.linalg.norm(ls - rs, axis=-1) + np.linalg.norm(lh - rh, axis=-1)) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(torso > 0, width / torso, np.nan)


def yaw_2d(xy: np.ndarray, confidence: np.ndarray) -> np.ndarray:
    """(T,) yaw in degrees from 2D torso geometry; NaN where the torso is not sure. Front or back as the
    labels say (left on the image's right: front)."""
    torso_ok = (confidence[:, [INDEX[f"{s}_{j}"] for s in ("left", "right") for j in ("shoulder", "hip")]] >= KEY_CONFIDENCE).all(axis=1)
    square = np.clip(torso_width_ratio(xy) / FRONT_WIDTH, 0.0, 1.0)
    ls, rs = _pair(xy, "shoulder")
    lh, rh = _pair(xy, "hip")
    front = np.sign((ls[:, 0] - rs[:, 0]) + (lh[:, 0] - rh[:, 0])) >= 0
    nose_offset = xy[:, INDEX["nose"], 0] - (ls[:, 0] + rs[:, 0]) / 2
    towards_left = np.where(front, nose_offset < 0, nose_offset > 0)  # the side nearer the camera
    turn = np.degrees(np.arccos(square))  # 0..90 from square-on
    yaw = np.where(front, turn, 180.0 - turn) * np.where(towards_left, 1.0, -1.0)
    return np.where(torso_ok & np.isfinite(square), yaw, np.nan)


def facing_per_frame(
    xy: np.ndarray, confidence: np.ndarray, world: Optional[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Front/back decided per square-on run (see the module docstring). Returns (T,) +1 face towards the camera,
    -1 away, 0 where the view cannot say (side-on, no world landmarks, or contested), and (T,) the frames of
    contested runs (front and back readings without a clear majority)."""
    n = len(xy)
    votes = face_towards_camera(world, n)
    square = _bridged(np.nan_to_num(square_on(xy, world), nan=0.0) > SQUARE_ON)
    facing = np.zeros(n, dtype=np.int8)
    contested = np.zeros(n, dtype=bool)
    start = 0
    while start < n:
        if not square[start]:
            start += 1
            continue
        end = start
        while end + 1 < n and square[end + 1]:
            end += 1
        run = votes[start : end + 1]
        front, back = int((run > 0).sum()), int((run < 0).sum())
        if front + back:
            if max(front, back) >= DECIDED * (front + back):
                facing[start : end + 1] = 1 if front > back else -1
            else:
                contested[start : end + 1] = True
        start = end + 1
    return facing, contested


def _bridged(square: np.ndarray) -> np.ndarray:
    """``square`` with each lone non-square frame between two square ones counted as square: a turn from front to
    back passes through side-on for longer than one glitched frame."""
    out = square.copy()
    out[1:-1] |= square[:-2] & square[2:]
    return out


def circular_median(degrees: np.ndarray) -> float:
    """The angle minimising the summed circular distance to ``degrees`` (searched over the data themselves)."""
    values = np.asarray(degrees, dtype=np.float64)
    costs = [np.abs(wrap_degrees(values - v)).sum() for v in values]
    return float(values[int(np.argmin(costs))])


def wrap_degrees(degrees: np.ndarray) -> np.ndarray:
    """Into (-180, 180]."""
    return 180.0 - np.mod(180.0 - np.asarray(degrees, dtype=np.float64), 360.0)


__all__ = [
    "FRONT_WIDTH", "circular_median", "wrap_degrees", "face_towards_camera", "facing_per_frame", "square_on", "torso_width_ratio", "yaw_2d", "yaw_3d",
]
