"""Calibrated cameras: intrinsics, lens distortion and pose in the world, read from a Qualisys ``.qca.txt`` file.

A calibrated camera turns a 3D point into a pixel (:meth:`Camera.project`) and a pixel into a ray
(:meth:`Camera.normalised`), which is what triangulation (:mod:`viddiff.pose.triangulation`) needs to measure
the body's true 3D angles from several synchronised views (``bench/pose_accuracy.py``), and what a two-view 3D
measurement builds on.

Conventions (OpenCV's pinhole model): world points in metres; ``rotation``/``translation`` map a world point X
to the camera frame as ``R @ X + t`` (x right, y down, z forward, along the optical axis); pixels with (0, 0)
the centre of the top-left pixel; distortion ``(k1, k2, p1, p2, k3)`` on normalised coordinates.

The Qualisys file (as Pose2Sim's demo ships it, and as ``Pose2Sim/calibration.py`` reads it) stores, per camera:
``transform`` — the camera's position in the world (millimetres) and a rotation ``M`` (``r11``..``r33`` by
rows) whose Qualisys camera frame has y up and z backwards, so the OpenCV rotation is ``diag(1, -1, -1) @ M``;
``intrinsic`` — focal lengths and principal point in sub-pixel units of 1/64 pixel of the sensor, with the
principal point counted from the sensor's corner (``fov_video`` says which part of the sensor the video
shows); and radial/tangential distortion coefficients, read as stored (Pose2Sim also divides them by 64; on
the demo takes the triangulation's reprojection error is the same either way, 16.6 px median before outliers are
dropped, since these lenses barely distort). A ``viewrotation`` other than 0 (the video stored rotated against the sensor) is not supported
and is refused with a clear error rather than read wrongly.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional, Union

import numpy as np

from viddiff.errors import ViddiffError

SUBPIXELS = 64.0
"""Qualisys intrinsics are in 1/64 of a sensor pixel."""
_QUALISYS_TO_OPENCV = np.diag([1.0, -1.0, -1.0])
"""A Qualisys camera frame looks down its -z with y up; OpenCV's looks down +z with y down."""


class CalibrationError(ViddiffError, ValueError):
    """A calibration that cannot be read or made (one clear message naming what is wrong)."""


@dataclass(frozen=True)
class Camera:
    """One calibrated camera (see the module docstring for the conventions)."""

    name: str
    width: int
    height: int
    """The calibrated image's size in pixels."""
    matrix: np.ndarray
    """(3, 3) intrinsic matrix K."""
    distortion: np.ndarray
    """(5,) k1, k2, p1, p2, k3."""
    rotation: np.ndarray
    """(3, 3) world → camera."""
    translation: np.ndarray
    """(3,) world → camera, metres."""
    error_px: Optional[float] = None
    """The calibration's RMS reprojection error in pixels, where it was measured (``viddiff calibrate``); ``None``
    when the file does not say (a Qualisys ``avg-residual`` is a 3D marker residual in mm, not pixels)."""

    @property
    def centre(self) -> np.ndarray:
        """(3,) the camera's position in the world, metres."""
        return -self.rotation.T @ self.translation

    def projection(self) -> np.ndarray:
        """(3, 4) ``[R | t]``: world → normalised (undistorted) image coordinates, homogeneous."""
        return np.hstack([self.rotation, self.translation[:, None]])

    def project(self, points: np.ndarray) -> np.ndarray:
        """(..., 3) world points → (..., 2) pixels, with the lens distortion (NaN behind the camera)."""
        points = np.asarray(points, dtype=np.float64)
        cam = points @ self.rotation.T + self.translation
        with np.errstate(invalid="ignore", divide="ignore"):
            z = np.where(cam[..., 2] > 0, cam[..., 2], np.nan)
            xn = cam[..., :2] / z[..., None]
        xd = distort(xn, self.distortion)
        return xd @ self.matrix[:2, :2].T + self.matrix[:2, 2]

    def normalised(self, pixels: np.ndarray) -> np.ndarray:
        """(..., 2) pixels → (..., 2) undistorted normalised image coordinates (the ray's x/z, y/z)."""
        pixels = np.asarray(pixels, dtype=np.float64)
        distorted = (pixels - self.matrix[:2, 2]) @ np.linalg.inv(self.matrix[:2, :2]).T
        return undistort(distorted, self.distortion)

    def fitted_to(self, width: int, height: int) -> "Camera":
        """This camera for a video stored at ``width`` × ``height`` instead of its calibrated size: the picture
        scaled to fit (each axis by its own factor). A size that is not a mild rescale of the calibrated one
        (aspect ratio off by more than 2%) is refused: the video is then not what was calibrated."""
        if (width, height) == (self.width, self.height):
            return self
        sx, sy = width / self.width, height / self.height
        if abs(sx / sy - 1) > 0.02:
            raise CalibrationError(
                f"camera {self.name} was calibrated at {self.width}x{self.height}; a {width}x{height} video is not "
                "a rescale of it (a crop or another camera?)"
            )
        scale = np.diag([sx, sy, 1.0])
        # pixel centres: u' + 0.5 = sx (u + 0.5)
        shift = np.array([[1.0, 0.0, (sx - 1) / 2], [0.0, 1.0, (sy - 1) / 2], [0.0, 0.0, 1.0]])
        error = None if self.error_px is None else self.error_px * (sx + sy) / 2
        return replace(self, width=width, height=height, matrix=shift @ scale @ self.matrix, error_px=error)


def distort(normalised: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """Brown–Conrady distortion of (..., 2) normalised coordinates (OpenCV's k1, k2, p1, p2, k3)."""
    k1, k2, p1, p2, k3 = (float(c) for c in np.resize(np.asarray(coefficients, dtype=np.float64), 5))
    x, y = normalised[..., 0], normalised[..., 1]
    r2 = x * x + y * y
    radial = 1 + r2 * (k1 + r2 * (k2 + r2 * k3))
    xd = x * radial + 2 * p1 * x * y + p2 * (r2 + 2 * x * x)
    yd = y * radial + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y
    return np.stack([xd, yd], axis=-1)


def undistort(distorted: np.ndarray, coefficients: np.ndarray, iterations: int = 20) -> np.ndarray:
    """The inverse of :func:`distort` by fixed-point iteration (converges for the mild lenses of video cameras)."""
    guess = np.array(distorted, dtype=np.float64)
    for _ in range(iterations):
        error = distort(guess, coefficients) - distorted
        guess = guess - error
    return guess


def read_qca(path: Union[str, Path]) -> list[Camera]:
    """The cameras of a Qualisys ``.qca.txt`` file, sorted by name."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise CalibrationError(f"cannot read calibration file {path}: {exc.strerror or exc}") from None
    return parse_qca(text, source=str(path))


def parse_qca(text: str, source: str = "calibration") -> list[Camera]:
    """The cameras described by the text of a Qualisys ``.qca.txt`` file (see the module docstring)."""
    try:
        root = ElementTree.fromstring(text.encode("utf-8") if text.lstrip().startswith("<?xml") else text)
    except ElementTree.ParseError as exc:
        raise CalibrationError(f"{source} is not a Qualisys calibration (XML): {exc}") from None
    cameras = [_camera(tag, source) for tag in root.findall("cameras/camera")]
    if not cameras:
        raise CalibrationError(f"{source} describes no cameras (no <cameras><camera> elements)")
    return sorted(cameras, key=lambda c: c.name)


def _camera(tag: ElementTree.Element, source: str) -> Camera:
    name = tag.get("serial") or "?"
    where = f"{source}, camera {name}"
    rotation_tag = tag.get("viewrotation", "0")
    if _number(rotation_tag, "viewrotation", where) != 0:
        raise CalibrationError(f"{where}: viewrotation {rotation_tag} is not supported (only unrotated views)")
    fov, transform, intrinsic = (tag.find(child) for child in ("fov_video", "transform", "intrinsic"))
    if fov is None or transform is None or intrinsic is None:
        raise CalibrationError(f"{where}: needs <fov_video>, <transform> and <intrinsic>")

    def get(element: ElementTree.Element, key: str) -> float:
        return _number(element.get(key), key, where)

    left, top = get(fov, "left"), get(fov, "top")
    width, height = int(get(fov, "right") - left + 1), int(get(fov, "bottom") - top + 1)
    matrix = np.array([
        [get(intrinsic, "focalLengthU") / SUBPIXELS, get(intrinsic, "skew"), get(intrinsic, "centerPointU") / SUBPIXELS - left],
        [0.0, get(intrinsic, "focalLengthV") / SUBPIXELS, get(intrinsic, "centerPointV") / SUBPIXELS - top],
        [0.0, 0.0, 1.0],
    ])
    distortion = np.array([get(intrinsic, k) for k in (
        "radialDistortion1", "radialDistortion2", "tangentalDistortion1", "tangentalDistortion2", "radialDistortion3")])
    m = np.array([[get(transform, f"r{i}{j}") for j in (1, 2, 3)] for i in (1, 2, 3)])
    if not np.allclose(m @ m.T, np.eye(3), atol=1e-4):
        raise CalibrationError(f"{where}: the transform's r11..r33 are not a rotation")
    position = np.array([get(transform, axis) for axis in "xyz"]) / 1000.0
    rotation = _QUALISYS_TO_OPENCV @ m
    return Camera(name=name, width=width, height=height, matrix=matrix, distortion=distortion, rotation=rotation,
                  translation=-rotation @ position)


def _number(value: object, key: str, where: str) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise CalibrationError(f"{where}: {key} is {value!r}, not a number") from None


__all__ = ["Camera", "CalibrationError", "distort", "parse_qca", "read_qca", "undistort"]
