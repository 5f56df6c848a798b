"""What the pose accuracy benches score, shared by ``pose_accuracy.py``, ``pose_two_view_differences.py`` and
``pose_3d.py`` so that their numbers stay about the same statements: which quantities and sides, which statistics,
which windows of a take, and what counts as a clear difference against the 3D truth.

A bench helper, not part of viddiff: the scripts run from this folder (``python bench/pose_accuracy.py``), which
Python puts first on the import path.
"""

from __future__ import annotations

import numpy as np

from viddiff.pose.vocabulary import QUANTITIES

QUANTITY_SIDES = {
    "knee_angle": ("left", "right", "both"), "hip_angle": ("left", "right", "both"),
    "elbow_angle": ("left", "right", "both"), "shoulder_angle": ("left", "right", "both"),
    "ankle_angle": ("left", "right", "both"), "trunk_lean": ("none",), "stance_width": ("none",),
    "grip_width": ("none",), "hip_height": ("none",), "wrist_height": ("left", "right"),
}
STATISTICS = ("mean", "min", "max", "range")
CLEAR = {"°": 10.0, "body": 0.2}
"""A clear difference: the 3D truth differs by at least this (degrees; body units) and by more than its noise."""


def unit_kind(quantity: str) -> str:
    return "°" if QUANTITIES[quantity].unit == "°" else "body"


def is_clear(gap: float, noise: float, quantity: str) -> bool:
    """Whether the truth's B − A (``gap``) is a clear difference, given the truth's own noise on it."""
    return abs(gap) >= CLEAR[unit_kind(quantity)] and abs(gap) > noise


def take_windows(times: np.ndarray) -> dict[str, tuple[float, float]]:
    """The whole take, its halves and its thirds, in seconds."""
    step = float(np.median(np.diff(times)))
    end = float(times[-1] + step)
    out = {"whole": (0.0, end)}
    out.update({f"half {k + 1}": (end * k / 2, end * (k + 1) / 2) for k in range(2)})
    out.update({f"third {k + 1}": (end * k / 3, end * (k + 1) / 3) for k in range(3)})
    return out
