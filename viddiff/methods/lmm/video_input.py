"""Video-native request parts for servers that accept ``video_url`` content (e.g. vLLM with Qwen2.5-VL).

The sampled frames are re-encoded as a small H.264 MP4 in memory, at their
effective frame rate, so the server sees exactly the frames (and fps) that
the image mode would have sent.
"""

from __future__ import annotations

import base64
import io
from fractions import Fraction
from typing import Any, Optional

import av
import numpy as np
from PIL import Image

from viddiff.video import scaled_size


def _even(n: int) -> int:
    """yuv420p needs even sides."""
    return max(2, n - n % 2)


def encode_mp4(frames: np.ndarray, fps: float, max_side: Optional[int] = None) -> bytes:
    """H.264 MP4 of ``frames`` (N, H, W, 3) uint8 at ``fps``, longer side at most ``max_side``.

    One encoder thread: x264's output depends on its thread count, and the
    bytes are part of the cache key, so they must not vary between machines.
    """
    height, width = frames.shape[1:3]
    out_w, out_h = scaled_size(width, height, max_side)
    out_w, out_h = _even(out_w), _even(out_h)
    buf = io.BytesIO()
    with av.open(buf, mode="w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=Fraction(fps).limit_denominator(1000))
        stream.width, stream.height = out_w, out_h
        stream.pix_fmt = "yuv420p"
        stream.codec_context.thread_count = 1
        stream.codec_context.options = {"crf": "18"}
        for frame in frames:
            image = Image.fromarray(np.ascontiguousarray(frame))
            if image.size != (out_w, out_h):
                image = image.resize((out_w, out_h), Image.Resampling.LANCZOS)
            for packet in stream.encode(av.VideoFrame.from_image(image)):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return buf.getvalue()


def video_part(frames: np.ndarray, fps: float, max_side: Optional[int] = None) -> dict[str, Any]:
    """One ``video_url`` content part holding the frames as a base64 MP4 data URL."""
    data = base64.b64encode(encode_mp4(frames, fps, max_side)).decode("ascii")
    return {"type": "video_url", "video_url": {"url": f"data:video/mp4;base64,{data}"}}
