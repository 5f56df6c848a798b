"""Frames tiled into one image: the input the VidPair-Halluc release sends GPT-4o and Gemini.

A video's ``n`` frames go row by row into a ``g x g`` grid, ``g = ceil(sqrt(n))``, with white bands between the
cells and white cells where frames run out; a grid whose longer side exceeds the limit is then shrunk to it
(bilinear, sides truncated to whole pixels). Pure: frames in, a PIL image out.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np
from PIL import Image

WHITE = 255


def frame_grid(frames: np.ndarray, band_px: int = 50, max_side: Optional[int] = 1920) -> Image.Image:
    """``frames`` (N, H, W, 3) uint8 as one RGB grid image (see the module docstring)."""
    if frames.ndim != 4 or frames.shape[0] < 1 or frames.shape[3] != 3:
        raise ValueError(f"frame_grid needs frames of shape (N>=1, H, W, 3), got {frames.shape}")
    n, height, width = frames.shape[:3]
    side = math.ceil(math.sqrt(n))
    canvas = np.full((side * height + (side - 1) * band_px, side * width + (side - 1) * band_px, 3), WHITE, np.uint8)
    for i, frame in enumerate(frames):
        row, col = divmod(i, side)
        top, left = row * (height + band_px), col * (width + band_px)
        canvas[top : top + height, left : left + width] = frame
    image = Image.fromarray(canvas)
    if max_side is not None and max(image.size) > max_side:
        scale = max_side / max(image.size)
        image = image.resize((int(image.width * scale), int(image.height * scale)), Image.Resampling.BILINEAR)
    return image
