"""Uploaded calibration files: small text files saying where each camera of a two-view (or more) take stood.

A calibration is judged by its content, like a video: it must be UTF-8 text within ``serve.max_calibration_bytes``,
either a TOML file (Pose2Sim's, or the one ``viddiff calibrate`` writes) or a Qualisys ``.qca.txt`` (XML), and
the pose wing's reader must find cameras in it. So a comparison never starts on a file that fails minutes later,
and the stored file keeps the suffix its reader goes by.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from viddiff.pose.setup import read_cameras
from viddiff.serve.errors import ApiError

CalibrationFormat = Literal["toml", "qca"]
SUFFIXES: dict[CalibrationFormat, str] = {"toml": ".toml", "qca": ".qca.txt"}


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


def calibration_format(path: Path, label: str, max_bytes: int) -> CalibrationFormat:
    """An uploaded calibration's format, judged by its content: 413 over ``max_bytes``, 415 for no text."""
    size = path.stat().st_size
    if size > max_bytes:
        raise ApiError(413, f"{label}: {size} bytes, more than serve.max_calibration_bytes = {max_bytes}")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise not_text(label) from None
    if "\x00" in text:
        raise not_text(label)
    return "qca" if text.lstrip().startswith("<") else "toml"


def count_cameras(path: Path, label: str) -> int:
    """How many cameras the pose wing's reader finds in a calibration kept under the suffix of its format; 422
    in the reader's words (naming the field, not the file on the server) where it finds none."""
    try:
        return len(read_cameras(path))
    except (ValueError, TypeError) as exc:  # CalibrationError is a ValueError; numbers of the wrong kind too
        text = str(exc).replace(f"{path}, ", "").replace(f"{path}: ", "").replace(str(path), "the file")
        raise ApiError(422, f"{label}: {text}") from None
