"""Images and videos for a self-contained page: keyframes as JPEG data URLs, videos by relative URL.

A report must open from disk with no server and no network, so keyframes are embedded. Videos
are large: they are referenced by a path relative to the page (so a report directory moved
together with its data keeps working) unless the caller asks to embed them too.
"""

from __future__ import annotations

import base64
import io
import logging
import os
from pathlib import Path
from typing import Optional
from urllib.parse import quote

import numpy as np
from PIL import Image

log = logging.getLogger(__name__)
MIN_LONG_SIDE = 400
"""Display size of a keyframe's long side in CSS pixels: enough to judge a pose (the issue asks ≥360)."""
MAX_STORED_SIDE = 1280
"""Embedded JPEGs are capped here: the enlarged view needs detail, the page needs to stay loadable."""
JPEG_QUALITY = 88
EMBED_WARN_BYTES = 100 * 2**20

_VIDEO_MIME = {
    ".mp4": "video/mp4",
    ".m4v": "video/mp4",
    ".mov": "video/mp4",
    ".webm": "video/webm",
    ".mkv": "video/webm",
    ".ogv": "video/ogg",
    ".ogg": "video/ogg",
}


def jpeg_data_url(frame: np.ndarray, max_side: int = MAX_STORED_SIDE, quality: int = JPEG_QUALITY) -> str:
    """An RGB frame as a ``data:image/jpeg`` URL, downscaled so its long side is at most ``max_side``."""
    image = Image.fromarray(np.ascontiguousarray(frame))
    if max(image.size) > max_side:
        scale = max_side / max(image.size)
        image = image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))), Image.LANCZOS)
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=quality)
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def display_size(width: int, height: int, long_side: int = MIN_LONG_SIDE) -> tuple[int, int]:
    """(width, height) in CSS pixels with the long side equal to ``long_side``, aspect preserved."""
    scale = long_side / max(width, height, 1)
    return max(1, round(width * scale)), max(1, round(height * scale))


def video_mime(path: Path) -> Optional[str]:
    return _VIDEO_MIME.get(path.suffix.lower())


def relative_url(target: Path, page_dir: Path) -> str:
    """URL of ``target`` relative to a page in ``page_dir`` (percent-encoded, ``/`` separators)."""
    rel = os.path.relpath(Path(target).resolve(), Path(page_dir).resolve())
    return quote(Path(rel).as_posix())


def embedded_video_url(path: Path) -> str:
    """The whole file as a data URL (``--report-embed-videos``): the page then needs nothing beside it."""
    data = Path(path).read_bytes()
    if len(data) > EMBED_WARN_BYTES:
        log.warning("embedding %s (%.0f MB) makes the report that much larger", path, len(data) / 2**20)
    mime = video_mime(Path(path)) or "video/mp4"
    return f"data:{mime};base64," + base64.b64encode(data).decode("ascii")


def player_source(path: Path, page_dir: Path, embed: bool) -> tuple[Optional[str], Optional[str]]:
    """A video's ``<video src>`` (a relative URL, or the file itself with ``embed``) or ``None``, and why not."""
    if path.is_dir():
        return None, "a directory of frame images: no inline player"
    if not path.is_file():
        return None, "the file is missing: no inline player"
    return (embedded_video_url(path) if embed else relative_url(path, page_dir)), None


def safe_name(text: str, max_chars: int = 80) -> str:
    """A file-name-safe form of a dataset key: no separators, no ``..``, never empty."""
    cleaned = "".join(c if c.isalnum() or c in "-_." else "_" for c in text)[:max_chars].strip(".")
    return cleaned or "_"
