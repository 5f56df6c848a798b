"""A body in 3D for the report's skeleton view: one squatting pose in its own frame (metres; x to its left, y up,
z forwards, origin between the hips), and the same pose placed in a camera setup's world."""

from __future__ import annotations

import numpy as np

from viddiff.pose.skeleton import JOINTS

SQUAT = {
    "nose": (0.0, 0.72, 0.2), "left_shoulder": (0.18, 0.5, 0.08), "right_shoulder": (-0.18, 0.5, 0.08),
    "left_elbow": (0.26, 0.28, 0.2), "right_elbow": (-0.26, 0.28, 0.2), "left_wrist": (0.24, 0.12, 0.4),
    "right_wrist": (-0.24, 0.12, 0.4), "left_hip": (0.1, 0.0, 0.0), "right_hip": (-0.1, 0.0, 0.0),
    "left_knee": (0.16, 0.02, 0.42), "right_knee": (-0.16, 0.02, 0.42), "left_ankle": (0.15, -0.4, 0.25),
    "right_ankle": (-0.15, -0.4, 0.25), "left_heel": (0.15, -0.45, 0.19), "right_heel": (-0.15, -0.45, 0.19),
    "left_toe": (0.17, -0.47, 0.43), "right_toe": (-0.17, -0.47, 0.43),
}
"""The body frame's points of a deep squat (knees forward of the hips, thighs level)."""


def body_pose(knee_drop: float = 0.0) -> np.ndarray:
    """(J, 3) the squat in the body frame; ``knee_drop`` lowers the knees, ankles and feet (a shallower squat's
    hips sit higher above them)."""
    pose = np.array([SQUAT[name] for name in JOINTS], dtype=float)
    legs = [i for i, name in enumerate(JOINTS) if name.split("_")[-1] in ("knee", "ankle", "heel", "toe")]
    pose[legs, 1] -= knee_drop
    return pose


def in_world(pose: np.ndarray, *, up: tuple[float, float, float], turn_deg: float, at: tuple[float, float, float]):
    """The body-frame ``pose`` as a setup's world holds it: its up is the world's ``up`` (a unit axis), the body
    turned ``turn_deg`` about it, standing at ``at``. Returns (points as lists, up)."""
    y = np.asarray(up, dtype=float)
    x0 = np.array([1.0, 0.0, 0.0]) if abs(y[0]) < 0.9 else np.array([0.0, 0.0, 1.0])
    x0 = x0 - np.dot(x0, y) * y
    x0 /= np.linalg.norm(x0)
    z0 = np.cross(x0, y)
    angle = np.radians(turn_deg)
    x = np.cos(angle) * x0 + np.sin(angle) * z0
    z = np.cross(x, y)
    world = pose @ np.stack([x, y, z]) + np.asarray(at, dtype=float)
    return [tuple(float(v) for v in p) for p in world], tuple(y)
