"""Video-native input: sampled frames re-encoded as an in-memory MP4 ``video_url`` part."""

from __future__ import annotations

import base64
import io

import av
import numpy as np

from viddiff.methods.lmm.video_input import encode_mp4, video_part


def _frames(n: int, height: int, width: int) -> np.ndarray:
    return np.stack([np.full((height, width, 3), 20 * i, dtype=np.uint8) for i in range(n)])


def _decode(data: bytes) -> tuple[np.ndarray, float]:
    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.video[0]
        frames = np.stack([f.to_ndarray(format="rgb24") for f in container.decode(stream)])
        return frames, float(stream.average_rate)


def test_mp4_keeps_every_frame_in_order_at_the_given_fps() -> None:
    frames, rate = _decode(encode_mp4(_frames(9, 48, 64), fps=1.25))
    assert frames.shape == (9, 48, 64, 3)
    assert rate == 1.25
    assert np.allclose(frames.mean(axis=(1, 2, 3)), 20 * np.arange(9), atol=3)


def test_mp4_downscales_to_max_side_with_even_sides() -> None:
    frames, _ = _decode(encode_mp4(_frames(3, 101, 301), fps=4, max_side=150))
    height, width = frames.shape[1:3]
    assert max(height, width) <= 150 and height % 2 == 0 and width % 2 == 0


def test_video_part_is_a_deterministic_mp4_data_url() -> None:
    frames = _frames(5, 32, 32)
    part = video_part(frames, 2.0)
    assert part == video_part(frames, 2.0)  # the bytes are part of the cache key
    head, payload = part["video_url"]["url"].split(",", 1)
    assert part["type"] == "video_url" and head == "data:video/mp4;base64"
    assert len(_decode(base64.b64decode(payload))[0]) == 5
