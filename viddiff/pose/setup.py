"""A camera setup on disk: read any calibration file viddiff accepts into :class:`Camera`s, and write the TOML
that ``viddiff calibrate`` produces.

Accepted: a Qualisys ``.qca.txt`` (:func:`viddiff.pose.calibration.read_qca`), and Pose2Sim's TOML (what
Pose2Sim's own calibration writes, and what viddiff writes: the same format, so a setup moves between the two
tools). A TOML camera is one section holding ``matrix``; ``[metadata]`` and any other section are skipped.
Per camera: ``name``, ``size`` = [width, height] px, ``matrix`` (K), ``distortions`` ([k1, k2, p1, p2] and an
optional k3, written only where it is not 0), ``rotation`` (Rodrigues vector, world → camera), ``translation`` (world → camera, metres), and,
where viddiff measured it, ``error_px`` (the calibration's RMS reprojection error; Pose2Sim ignores the key).
A fisheye camera is refused: the pinhole model with Brown–Conrady distortion cannot describe it.

The cameras come back in file order (a TOML's section order; a ``.qca.txt`` sorted by name): a performance's
main video is the first camera, its extra views the next ones in order.
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path
from typing import Any, Sequence, Union

import numpy as np

from viddiff.pose.calibration import Camera, CalibrationError, read_qca


def read_cameras(path: Union[str, Path]) -> list[Camera]:
    """The cameras of a calibration file (``.qca.txt`` or ``.toml``), in the file's order."""
    path = Path(path)
    if path.name.lower().endswith((".qca.txt", ".qca")):
        return read_qca(path)
    if path.suffix.lower() == ".toml":
        return read_toml(path)
    raise CalibrationError(
        f"{path}: not a calibration file viddiff reads (a Pose2Sim or viddiff .toml, or a Qualisys .qca.txt)"
    )


def read_toml(path: Union[str, Path]) -> list[Camera]:
    """The cameras of a Pose2Sim / viddiff calibration TOML (see the module docstring)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CalibrationError(f"cannot read calibration file {path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CalibrationError(f"{path} is not a TOML file: {exc}") from None
    cameras = [
        _toml_camera(section, values, str(path))
        for section, values in data.items()
        if isinstance(values, dict) and "matrix" in values
    ]
    if not cameras:
        raise CalibrationError(f"{path} describes no cameras (no section with a 'matrix')")
    return cameras


def _toml_camera(section: str, values: dict[str, Any], source: str) -> Camera:
    where = f"{source}, [{section}]"

    def array(key: str, shape: tuple[int, ...]) -> np.ndarray:
        try:
            out = np.asarray(values[key], dtype=np.float64)
        except KeyError:
            raise CalibrationError(f"{where}: '{key}' is missing") from None
        except (TypeError, ValueError):
            raise CalibrationError(f"{where}: '{key}' is not numbers") from None
        if out.shape != shape or not np.isfinite(out).all():
            raise CalibrationError(f"{where}: '{key}' should be {shape} finite numbers, got {values[key]!r}")
        return out

    if values.get("fisheye", False):
        raise CalibrationError(f"{where}: fisheye cameras are not supported (only the pinhole model)")
    size = array("size", (2,))
    distortion = np.asarray(values.get("distortions", [0.0] * 4), dtype=np.float64)
    if distortion.shape not in ((4,), (5,)):
        raise CalibrationError(f"{where}: 'distortions' should be [k1, k2, p1, p2] or [k1, k2, p1, p2, k3]")
    error = values.get("error_px")
    return Camera(
        name=str(values.get("name", section)), width=int(round(size[0])), height=int(round(size[1])),
        matrix=array("matrix", (3, 3)), distortion=np.resize(np.append(distortion, 0.0), 5) if len(distortion) == 4 else distortion,
        rotation=rodrigues_to_matrix(array("rotation", (3,))), translation=array("translation", (3,)),
        error_px=None if error is None else float(error),
    )


def write_toml(path: Union[str, Path], cameras: Sequence[Camera]) -> Path:
    """Write ``cameras`` as a Pose2Sim-format TOML (readable by Pose2Sim and by :func:`read_cameras`)."""
    path = Path(path)
    lines: list[str] = []
    for camera in cameras:
        k = camera.matrix
        lines += [
            f"[{_key(camera.name)}]",
            f"name = {_string(camera.name)}",
            f"size = [ {float(camera.width)}, {float(camera.height)}]",
            "matrix = [ " + ", ".join("[ " + ", ".join(repr(float(v)) for v in row) + "]" for row in k) + "]",
            "distortions = [ " + ", ".join(repr(float(v)) for v in _coefficients(camera.distortion)) + "]",
            "rotation = [ " + ", ".join(repr(float(v)) for v in matrix_to_rodrigues(camera.rotation)) + "]",
            "translation = [ " + ", ".join(repr(float(v)) for v in camera.translation) + "]",
            "fisheye = false",
        ]
        if camera.error_px is not None:
            lines.append(f"error_px = {float(camera.error_px)!r}")
        lines.append("")
    errors = [c.error_px for c in cameras if c.error_px is not None]
    lines += ["[metadata]", "adjusted = false", f"error = {float(np.mean(errors)) if errors else 0.0!r}", ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _coefficients(distortion: np.ndarray) -> np.ndarray:
    """Pose2Sim's four coefficients, or five where k3 is not 0 (OpenCV, which Pose2Sim hands them to, takes either)."""
    return distortion if float(distortion[4]) != 0.0 else distortion[:4]


def _key(name: str) -> str:
    return name if name and all(ch.isalnum() or ch in "_-" for ch in name) else _string(name)


def _string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def rodrigues_to_matrix(vector: np.ndarray) -> np.ndarray:
    """(3, 3) rotation of a Rodrigues vector (axis × angle in radians), as OpenCV's ``Rodrigues``."""
    vector = np.asarray(vector, dtype=np.float64)
    angle = float(np.linalg.norm(vector))
    if angle < 1e-12:
        return np.eye(3)
    x, y, z = vector / angle
    cross = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.eye(3) + math.sin(angle) * cross + (1 - math.cos(angle)) * cross @ cross


def matrix_to_rodrigues(rotation: np.ndarray) -> np.ndarray:
    """(3,) the Rodrigues vector of a rotation matrix (the inverse of :func:`rodrigues_to_matrix`)."""
    r = np.asarray(rotation, dtype=np.float64)
    skew = np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]]) / 2  # sin(angle) * axis
    sine, cosine = float(np.linalg.norm(skew)), (float(np.trace(r)) - 1) / 2
    angle = math.atan2(sine, cosine)
    if sine > 1e-4:
        return skew / sine * angle
    if cosine > 0:  # near 0: the vector is the skew part itself
        return skew
    # near 180°: the axis from the symmetric part (R + I = 2 a aᵀ), its sign from the skew part
    column = int(np.argmax(np.diag(r)))
    axis = (r[:, column] + np.eye(3)[:, column]) / math.sqrt(2 * (1 + r[column, column]))
    if float(axis @ skew) < 0:
        axis = -axis
    return axis * angle


__all__ = ["matrix_to_rodrigues", "read_cameras", "read_toml", "rodrigues_to_matrix", "write_toml"]
