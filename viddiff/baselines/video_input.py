"""Video-native request parts for servers that accept ``video_url`` content (e.g. vLLM with Qwen2.5-VL)."""

from __future__ import annotations

import base64
import io
from fractions import Fraction
from typing import Any

import av
import numpy as np


def encode_mp4(frames: np.ndarray, fps: float) -> bytes:
    """H.264 MP4 of the sampled frames at their effective fps, in memory."""
    buf = io.BytesIO()
    height, width = frames.shape[1:3]
    with av.open(buf, mode="w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=Fraction(fps).limit_denominator(1000))
        stream.width, stream.height = width - width % 2, height - height % 2
        stream.pix_fmt = "yuv420p"
        for frame in frames:
            image = av.VideoFrame.from_ndarray(np.ascontiguousarray(frame[: stream.height, : stream.width]), format="rgb24")
            for packet in stream.encode(image):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return buf.getvalue()


def video_part(frames: np.ndarray, fps: float) -> dict[str, Any]:
    data = base64.b64encode(encode_mp4(frames, fps)).decode()
    return {"type": "video_url", "video_url": {"url": f"data:video/mp4;base64,{data}"}}
