"""Write videos from frames with PyAV (H.264, VP9, AV1, ...; display rotation and timestamps as asked).

The synthetic benchmarks, the LMM baseline's video input, the tests and the bench scripts share this one
encoder path.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence, Union, cast

import numpy as np

from viddiff.errors import VideoError

# Friendly names -> FFmpeg encoder names; anything else is passed to FFmpeg as is.
_CODEC_ALIASES = {"h264": "libx264", "vp9": "libvpx-vp9", "mpeg4": "mpeg4", "hevc": "libx265", "av1": "libsvtav1"}
_QUIET_ENCODERS = {"libx265": {"x265-params": "log-level=error"}}  # x265 prints its settings to stderr
_TIME_BASE = Fraction(1, 1000)  # presentation times of variable-rate clips, in milliseconds


def _encoder_name(codec: str) -> str:
    """Resolve an alias to an encoder PyAV actually has, failing with a clear message."""
    import av

    name = _CODEC_ALIASES.get(codec, codec)
    for candidate in (name, codec):
        try:
            av.codec.Codec(candidate, "w")
            return candidate
        except Exception:  # PyAV raises UnknownCodecError or ValueError depending on version
            continue
    raise VideoError(f"codec {codec!r}: this PyAV/FFmpeg build has no such encoder; use libx264, libvpx-vp9 or mpeg4")


def _check_frame(frame: np.ndarray, index: int, shape: Optional[tuple[int, ...]], path: Path) -> None:
    """Reject frames the yuv420p encoders cannot take, before FFmpeg fails cryptically."""
    if frame.dtype != np.uint8 or frame.ndim != 3 or frame.shape[2] != 3:
        raise VideoError(
            f"{path}: frame {index} must be uint8 (H, W, 3) RGB, got {frame.dtype} {frame.shape}"
        )
    if frame.shape[0] % 2 or frame.shape[1] % 2:
        raise VideoError(f"{path}: frame {index} has odd size {frame.shape[:2]}; yuv420p needs even H and W")
    if shape is not None and frame.shape != shape:
        raise VideoError(f"{path}: frame {index} has shape {frame.shape}, earlier frames {shape}; use one size")


def write_video(
    path: Union[str, Path],
    frames: Union[Iterable[np.ndarray], np.ndarray],
    fps: float,
    codec: str = "libx264",
    *,
    options: Optional[Mapping[str, str]] = None,
    display_rotation: int = 0,
    mirrored: bool = False,
    times_s: Optional[Sequence[float]] = None,
) -> Path:
    """Encode RGB frames to ``path`` (container chosen by suffix) and return the path.

    ``frames`` may be a generator so long videos never sit in memory at once.
    ``options`` are passed to the encoder (e.g. ``{"preset": "ultrafast"}``).
    ``display_rotation`` (degrees counter-clockwise, a multiple of 90) and ``mirrored`` store a
    display matrix telling players to turn the stored frames, as phones do for portrait clips.
    ``times_s`` gives each frame's presentation time (a variable frame rate); ``fps`` is then only
    the nominal rate written in the stream header.
    """
    import av

    path = Path(path)
    if fps <= 0:
        raise VideoError(f"{path}: fps must be > 0, got {fps}")
    encoder = _encoder_name(codec)
    path.parent.mkdir(parents=True, exist_ok=True)
    rate = Fraction(fps).limit_denominator(1001)
    shape: Optional[tuple[int, ...]] = None
    with av.open(str(path), mode="w") as container:
        encoder_options = {**_QUIET_ENCODERS.get(encoder, {}), **dict(options or {})}
        stream = cast("av.VideoStream", container.add_stream(encoder, rate=rate, options=encoder_options))
        stream.pix_fmt = "yuv420p"
        if display_rotation % 360 or mirrored:
            stream.set_display_rotation(display_rotation, hflip=mirrored)
        if times_s is not None:
            stream.codec_context.time_base = _TIME_BASE
        for index, frame in enumerate(frames):
            frame = np.ascontiguousarray(frame)
            _check_frame(frame, index, shape, path)
            if shape is None:
                shape = frame.shape
                stream.height, stream.width = frame.shape[0], frame.shape[1]
            video_frame = av.VideoFrame.from_ndarray(frame, format="rgb24")
            if times_s is not None:
                if index >= len(times_s):
                    raise VideoError(f"{path}: more frames than times_s ({len(times_s)}); give one time per frame")
                video_frame.pts, video_frame.time_base = round(times_s[index] / _TIME_BASE), _TIME_BASE
            container.mux(stream.encode(video_frame))
        if shape is None:
            raise VideoError(f"{path}: no frames given; pass at least one frame")
        container.mux(stream.encode(None))
    return path
