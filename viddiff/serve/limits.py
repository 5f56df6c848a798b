"""The service's limits (the ``serve`` config section), each answered with its own 4xx.

Videos are judged by content and by what their container's header claims (:mod:`viddiff.video.container`)
before any decoder opens them; only a file within every limit is then probed with PyAV, which decodes
its first frame.
"""

from __future__ import annotations

import math
import threading
import time
from pathlib import Path

from viddiff.config import ServeConfig
from viddiff.errors import VideoError
from viddiff.serve.errors import ApiError
from viddiff.video import probe_video
from viddiff.video.container import ContainerClaims, NotAVideoError, read_claims


def check_video(path: Path, label: str, cfg: ServeConfig) -> ContainerClaims:
    """The claims of an uploaded video within the limits; 415 for a file that is no video container,
    422 for a damaged one or one over a limit (duration, pixels per frame, frames)."""
    try:
        claims = read_claims(path)
    except VideoError as exc:
        status = 415 if isinstance(exc, NotAVideoError) else 422
        raise ApiError(status, f"{label}: {_without_tmp_name(exc, path)}") from None
    over = []
    if claims.duration_s is not None and claims.duration_s > cfg.max_duration_s:
        over.append(f"lasts {claims.duration_s:.0f} s (serve.max_duration_s = {cfg.max_duration_s:g})")
    if claims.pixels is not None and claims.pixels > cfg.max_pixels:
        over.append(
            f"has {claims.width}x{claims.height} = {claims.pixels} pixels per frame (serve.max_pixels = {cfg.max_pixels})"
        )
    if claims.n_frames is not None and claims.n_frames > cfg.max_frames:
        over.append(f"has {claims.n_frames} frames (serve.max_frames = {cfg.max_frames})")
    if over:
        raise ApiError(422, f"{label}: the video {' and '.join(over)}, as its header states; send a shorter or smaller video")
    if claims.n_frames is None and claims.duration_s is None:
        raise ApiError(422, f"{label}: its header states neither its length nor its frame count; re-export the video")
    try:
        info = probe_video(path)
    except VideoError as exc:
        raise ApiError(422, f"{label}: {_without_tmp_name(exc, path)}") from None
    if info.width * info.height > cfg.max_pixels or info.n_frames > cfg.max_frames:
        raise ApiError(422, f"{label}: its stream has {info.width}x{info.height} pixels and {info.n_frames} frames, "
                       "beyond serve.max_pixels or serve.max_frames")
    return claims


def _without_tmp_name(exc: VideoError, path: Path) -> str:
    """The reader names the stored file; the client knows its video by the field name."""
    text = str(exc)
    for name in (str(path), path.name):
        text = text.replace(f"{name}: ", "")
    return text


class RateLimiter:
    """Requests per key per minute: a bucket of ``per_minute`` tokens per key that refills evenly."""

    def __init__(self, per_minute: int):
        self.per_minute = per_minute
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, key: str) -> None:
        """Spend one token of ``key``'s bucket, or raise 429 with the seconds until one is back."""
        now = time.monotonic()
        rate = self.per_minute / 60.0
        with self._lock:
            tokens, last = self._buckets.get(key, (float(self.per_minute), now))
            tokens = min(float(self.per_minute), tokens + (now - last) * rate)
            if tokens < 1:
                self._buckets[key] = (tokens, now)
                wait = math.ceil((1 - tokens) / rate)
                raise ApiError(
                    429, f"more than serve.requests_per_minute = {self.per_minute} requests for this key; "
                    f"retry in {wait} s", {"Retry-After": str(wait)},
                )
            self._buckets[key] = (tokens - 1, now)
