"""The size the pose is estimated at: frames larger than ``pose.max_side`` are scaled down as they are decoded.

BlazePose never looks at a full 1080x1920 frame: its detector sees the frame letterboxed into 224x224 and its
landmark model a 256x256 crop around the person. Keeping 150 full-size frames of a 10-s clip cost more CPU than
estimating them (900 MB to convert, write and hash, docs/pose.md "Cost"); a 960-pixel frame still gives the
landmark model a person taller than its input wherever the person fills a third of the picture. Keypoints are
scaled back to the frame as read (:func:`viddiff.pose.track.estimate_track`), so their pixels do not depend on it.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from viddiff.video.read import Shrink, scaled_size


def pose_shrink(max_side: Optional[int]) -> Optional[Shrink]:
    """A ``shrink`` for :func:`viddiff.video.read_video` that scales a frame whose longer side exceeds
    ``max_side`` down to it (area averaging, so fine detail is averaged, not aliased); ``None``: full size."""
    if max_side is None:
        return None
    resize = _area_resize()

    def shrink(frame: np.ndarray) -> np.ndarray:
        size = scaled_size(frame.shape[1], frame.shape[0], max_side)
        return frame if size == (frame.shape[1], frame.shape[0]) else resize(frame, size)

    return shrink


def _area_resize():
    """OpenCV's area resize (under a millisecond for a 1080p frame; the pose extras install OpenCV), else
    Pillow's box filter (about 9 ms) for an estimator plug-in installed without OpenCV."""
    try:
        import cv2
    except ImportError:
        from PIL import Image

        return lambda frame, size: np.asarray(Image.fromarray(np.ascontiguousarray(frame)).resize(size, Image.Resampling.BOX))
    return lambda frame, size: cv2.resize(np.ascontiguousarray(frame), size, interpolation=cv2.INTER_AREA)


__all__ = ["pose_shrink"]
