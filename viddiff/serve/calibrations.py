"""Uploaded calibration files: small text files saying where each camera of a two-view (or more) take stood.

A calibration is judged by its content, like a video: it must be UTF-8 text within ``serve.max_calibration_bytes``,
either a TOML file (Pose2Sim's, or the one ``viddiff calibrate`` writes) or a Qualisys ``.qca.txt`` (XML), and
the pose wing's reader must find cameras in it. So a comparison never starts on a file that fails minutes later,
and the stored file keeps the suffix its reader goes by.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from viddiff.pose.calibration import parse_qca
from viddiff.serve.errors import ApiError

CalibrationFormat = Literal["toml", "qca"]
SUFFIXES: dict[CalibrationFormat, str] = {"toml": ".toml", "qca": ".qca.txt"}


@dataclass(frozen=True)
class CalibrationClaims:
    format: CalibrationFormat
    cameras: int
    """How many cameras it holds: the main video and then each view of a performance, in that order."""


def looks_like_text(head: bytes) -> bool:
    """Whether a file's first bytes can start a UTF-8 text file (no NUL, no invalid sequence but a cut last one)."""
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3 and exc.reason == "unexpected end of data"
    return True


def not_text(label: str) -> ApiError:
    return ApiError(415, f"{label}: not a text file; send a calibration as a Pose2Sim .toml or a Qualisys .qca.txt")


def check_calibration(path: Path, label: str, max_bytes: int) -> CalibrationClaims:
    """The format and camera count of an uploaded calibration; 413 over ``max_bytes``, 415 for no text, 422 for
    text that holds no cameras (the reader's own words, naming what is wrong)."""
    size = path.stat().st_size
    if size > max_bytes:
        raise ApiError(413, f"{label}: {size} bytes, more than serve.max_calibration_bytes = {max_bytes}")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise not_text(label) from None
    if "\x00" in text:
        raise not_text(label)
    fmt: CalibrationFormat = "qca" if text.lstrip().startswith("<") else "toml"
    try:
        cameras = _read_cameras(text, fmt)
    except ValueError as exc:
        raise ApiError(422, f"{label}: {exc}") from None
    if not cameras:
        raise ApiError(422, f"{label}: no camera in it")
    return CalibrationClaims(format=fmt, cameras=cameras)


def _read_cameras(text: str, fmt: CalibrationFormat) -> int:
    if fmt == "qca":
        return len(parse_qca(text, "the file"))
    try:
        tables = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"neither a Qualisys .qca.txt (XML) nor valid TOML ({exc})") from None
    needed = ("matrix", "distortions", "rotation", "translation")
    cameras = [v for k, v in tables.items() if k != "metadata" and isinstance(v, dict)]
    for camera in cameras:
        missing = [key for key in needed if key not in camera]
        if missing:
            raise ValueError(f"camera {camera.get('name', '?')!r} has no {', '.join(missing)}")
    return len(cameras)
