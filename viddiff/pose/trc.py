"""A 3D performance as an OpenSim marker file (``.trc``), as Pose2Sim writes one, for OpenSim's scaling and
inverse kinematics.

The format (OpenSim's ``TRCFileAdapter``): five tab-separated header lines — ``PathFileType 4 (X/Y/Z) name``;
the names ``DataRate CameraRate NumFrames NumMarkers Units OrigDataRate OrigDataStartFrame OrigNumFrames``;
their values; ``Frame# Time`` and each marker's name followed by two empty columns; ``X1 Y1 Z1 X2 ...`` under
them — then one row per frame: its number (from 1), its time in seconds, and each marker's X, Y, Z in
``units`` (an empty field where the marker was not triangulated). OpenSim's world has Y up: the performance's
world is turned so (for a z-up world, as Pose2Sim does: X, Y, Z = y, z, x). Markers are named as
:data:`viddiff.pose.skeleton.JOINTS`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Protocol, Union

import numpy as np

from viddiff.pose.skeleton import JOINTS


class Markers(Protocol):
    """What a marker file is written from (:class:`viddiff.pose.multiview.PerformancePose`)."""

    @property
    def times_s(self) -> np.ndarray: ...  # (T,) seconds

    @property
    def points_3d(self) -> np.ndarray: ...  # (T, J, 3) metres

    @property
    def up(self) -> np.ndarray: ...  # (3,) the world's up axis

SCALE = {"m": 1.0, "mm": 1000.0}


def to_y_up(points: np.ndarray, up: np.ndarray) -> np.ndarray:
    """(..., 3) world points turned so that ``up`` (a world axis, ±x, ±y or ±z) becomes +Y, by a rotation that
    cycles the axes (z up: X, Y, Z = y, z, x, Pose2Sim's ``zup2yup``), with a half turn for a negative axis."""
    axis = int(np.argmax(np.abs(up)))
    turned = np.asarray(points, dtype=np.float64)[..., [(axis - 1) % 3, axis, (axis + 1) % 3]]  # a cyclic permutation
    if up[axis] < 0:  # then a half turn about the new Z
        turned = turned * np.array([-1.0, -1.0, 1.0])
    return turned


def write_trc(path: Union[str, Path], performance: Markers, *, units: Literal["m", "mm"] = "m") -> Path:
    """Write ``performance``'s filtered 3D points as ``path`` (see the module docstring)."""
    if units not in SCALE:
        raise ValueError(f"units must be 'm' or 'mm', not {units!r}")
    path = Path(path)
    times = np.asarray(performance.times_s, dtype=np.float64)
    points = to_y_up(performance.points_3d, performance.up) * SCALE[units]
    rate = 1.0 / float(np.median(np.diff(times))) if len(times) > 1 else 0.0
    n_frames, n_markers = points.shape[0], points.shape[1]
    lines = [
        f"PathFileType\t4\t(X/Y/Z)\t{path.name}",
        "DataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\tOrigDataRate\tOrigDataStartFrame\tOrigNumFrames",
        f"{rate:.6g}\t{rate:.6g}\t{n_frames}\t{n_markers}\t{units}\t{rate:.6g}\t1\t{n_frames}",
        "Frame#\tTime\t" + "\t\t\t".join(JOINTS[:n_markers]) + "\t\t",
        "\t\t" + "\t".join(f"X{i}\tY{i}\tZ{i}" for i in range(1, n_markers + 1)),
    ]
    for frame in range(n_frames):
        fields = [str(frame + 1), f"{times[frame]:.6f}"]
        fields += ["" if not np.isfinite(v) else f"{v:.6f}" for v in points[frame].reshape(-1)]
        lines.append("\t".join(fields))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


__all__ = ["Markers", "to_y_up", "write_trc"]
