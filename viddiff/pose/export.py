"""``keypoints.csv`` and ``angles.csv``: a video's pose and kinematics as files for spreadsheets and
biomechanics tools (one row per sampled frame; an empty cell is a gap, never a guessed value)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Iterable, Optional

import numpy as np

from viddiff.pose.kinematics import ANGLES, Kinematics
from viddiff.pose.skeleton import JOINTS
from viddiff.pose.track import PoseTrack

ANGLE_COLUMNS: tuple[str, ...] = (
    *(f"{side}_{joint}_angle" for joint in ANGLES for side in ("left", "right")),
    "trunk_lean", "stance_width", "grip_width", "left_wrist_height", "right_wrist_height", "hip_height",
)
"""Columns of ``angles.csv`` after the frame and time: degrees, then body-relative widths and heights."""
_DIGITS = 4


def write_keypoints_csv(path: Path, track: PoseTrack) -> Path:
    """``frame_index, time_s, detected`` then ``<joint>_x, <joint>_y, <joint>_confidence`` per joint (pixels of
    the upright frames the estimator saw)."""
    header = ["frame_index", "time_s", "detected"] + [f"{j}_{c}" for j in JOINTS for c in ("x", "y", "confidence")]
    detected = track.detected

    def rows() -> Iterable[list[str]]:
        for t in range(len(track.frame_indices)):
            cells = [str(int(track.frame_indices[t])), _cell(track.times_s[t]), str(int(detected[t]))]
            for j in range(len(JOINTS)):
                cells += [_cell(track.xy[t, j, 0]), _cell(track.xy[t, j, 1]), _cell(track.confidence[t, j] if detected[t] else None)]
            yield cells

    return _write(path, header, rows())


def write_angles_csv(path: Path, kinematics: Kinematics) -> Path:
    """``frame_index, time_s`` then :data:`ANGLE_COLUMNS` (after side fixing and smoothing)."""
    header = ["frame_index", "time_s", *ANGLE_COLUMNS]

    def rows() -> Iterable[list[str]]:
        for t in range(len(kinematics.frame_indices)):
            yield [str(int(kinematics.frame_indices[t])), _cell(kinematics.times_s[t])] + [
                _cell(kinematics.values[c][t]) for c in ANGLE_COLUMNS
            ]

    return _write(path, header, rows())


def _cell(value: Optional[float]) -> str:
    return f"{float(value):.{_DIGITS}f}".rstrip("0").rstrip(".") if value is not None and np.isfinite(value) else ""


def _write(path: Path, header: list[str], rows: Iterable[list[str]]) -> Path:
    path = Path(path)
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path
