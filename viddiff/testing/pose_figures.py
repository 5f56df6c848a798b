"""Stick figures with known joint angles: keypoint tracks whose kinematics are known exactly (tests, benches).

A figure is built by forward kinematics in image pixels (x right, y down) from the angles the pose wing
measures, so a test can state the expected angle, lean, width, height or speed and compare with what
:mod:`viddiff.pose.kinematics` computes from the positions alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from viddiff.pose.skeleton import INDEX, JOINTS


@dataclass(frozen=True)
class Figure:
    """One frame's posture. Angles in degrees, lengths in pixels; the person faces the camera (their left
    side on the image's right)."""

    knee: float = 170.0
    hip: float = 170.0
    elbow: float = 160.0
    shoulder: float = 20.0
    ankle: float = 100.0
    lean: float = 0.0
    """Trunk tilt from vertical, towards the image's right for positive values."""
    hip_x: float = 320.0
    hip_y: float = 300.0
    torso: float = 100.0
    hip_width: float = 40.0
    shoulder_width: float = 60.0
    thigh: float = 80.0
    shin: float = 80.0
    upper_arm: float = 55.0
    forearm: float = 50.0
    foot: float = 25.0
    leg_spread: float = 0.0
    """Extra outward turn of each thigh (degrees): a wider stance, and a hip angle that much smaller."""


def _rotate(vector: np.ndarray, degrees: float) -> np.ndarray:
    angle = np.radians(degrees)
    c, s = np.cos(angle), np.sin(angle)
    return np.array([c * vector[0] - s * vector[1], s * vector[0] + c * vector[1]])


def pose_of(figure: Figure) -> np.ndarray:
    """(J, 2) positions of :data:`JOINTS` for ``figure``; every angle is exactly the figure's."""
    f = figure
    xy = np.zeros((len(JOINTS), 2))
    up = np.array([np.sin(np.radians(f.lean)), -np.cos(np.radians(f.lean))])
    across = np.array([-up[1], up[0]])  # the person's left, perpendicular to the trunk (image right when upright)
    mid_hip = np.array([f.hip_x, f.hip_y])
    mid_shoulder = mid_hip + f.torso * up
    for side, sign in (("left", 1.0), ("right", -1.0)):
        hip = mid_hip + sign * f.hip_width / 2 * across
        shoulder = mid_shoulder + sign * f.shoulder_width / 2 * across
        side_up = (shoulder - hip) / np.linalg.norm(shoulder - hip)  # this side's trunk line: the angles' reference
        # The thigh makes the hip angle with this side's trunk line, turned outwards by the spread.
        thigh_dir = _rotate(side_up, sign * (f.hip - f.leg_spread))
        knee = hip + f.thigh * thigh_dir
        shin_dir = _rotate(-thigh_dir, -sign * f.knee)
        ankle = knee + f.shin * shin_dir
        toe = ankle + f.foot * _rotate(-shin_dir, sign * f.ankle)
        heel = ankle + 0.3 * f.foot * _rotate(-shin_dir, -sign * (180 - f.ankle))
        arm_dir = _rotate(-side_up, -sign * f.shoulder)
        elbow = shoulder + f.upper_arm * arm_dir
        wrist = elbow + f.forearm * _rotate(-arm_dir, sign * f.elbow)
        for name, point in (("shoulder", shoulder), ("elbow", elbow), ("wrist", wrist), ("hip", hip), ("knee", knee),
                            ("ankle", ankle), ("heel", heel), ("toe", toe)):
            xy[INDEX[f"{side}_{name}"]] = point
    xy[INDEX["nose"]] = mid_shoulder + 0.35 * f.torso * up
    return xy


def track_of(figures: list[Figure]) -> np.ndarray:
    """(T, J, 2) positions of a sequence of figures."""
    return np.stack([pose_of(f) for f in figures])
