"""The skeleton drawn onto a frame: overlays (``viddiff pose --overlay``) and the report's keyframes."""

from __future__ import annotations

from typing import Optional, Sequence, Union

import numpy as np

from viddiff.pose.skeleton import BONES, JOINTS

LEFT, RIGHT, CENTRE = (255, 140, 0), (30, 144, 255), (240, 240, 240)
"""The person's left side orange, right side blue (anatomical sides, as the estimators label them)."""


def _colour(name: str) -> tuple[int, int, int]:
    return LEFT if name.startswith("left_") else RIGHT if name.startswith("right_") else CENTRE


def draw_skeleton(
    frame: np.ndarray,
    keypoints: Sequence[Optional[Sequence[float]]],
    *,
    min_confidence: float = 0.0,
    scale: Union[float, tuple[float, float]] = 1.0,
) -> np.ndarray:
    """A copy of ``frame`` (H, W, 3 uint8 RGB) with bones and joints drawn.

    ``keypoints``: per joint of :data:`JOINTS`, ``(x, y, confidence)`` or ``None``; joints below
    ``min_confidence`` are left out. ``scale`` maps keypoint units onto this frame's pixels: 1 for pixels of
    this frame, ``(width, height)`` for fractions of it (as evidence stores them).
    """
    from PIL import Image, ImageDraw

    image = Image.fromarray(np.ascontiguousarray(frame))
    draw = ImageDraw.Draw(image)
    size = max(2, round(max(image.size) / 200))
    sx, sy = (scale, scale) if isinstance(scale, (int, float)) else scale
    points: dict[str, tuple[float, float]] = {}
    for name, point in zip(JOINTS, keypoints):
        if point is None or not np.isfinite(point[0]) or not np.isfinite(point[1]):
            continue
        if len(point) > 2 and point[2] < min_confidence:
            continue
        points[name] = (float(point[0]) * sx, float(point[1]) * sy)
    for a, b in BONES:
        if a in points and b in points:
            colour = _colour(a) if _colour(a) == _colour(b) else CENTRE
            draw.line([points[a], points[b]], fill=colour, width=size)
    for name, (x, y) in points.items():
        draw.ellipse([x - size * 1.5, y - size * 1.5, x + size * 1.5, y + size * 1.5], fill=_colour(name), outline=(0, 0, 0))
    return np.asarray(image)


def drawable(keypoints: Sequence[Optional[Sequence[float]]]) -> bool:
    """Whether :func:`draw_skeleton` would draw at least one bone of these keypoints (a caption may say so)."""
    found = {name for name, point in zip(JOINTS, keypoints)
             if point is not None and np.isfinite(point[0]) and np.isfinite(point[1])}
    return any(a in found and b in found for a, b in BONES)


def track_keypoints(xy: np.ndarray, confidence: np.ndarray) -> list[Optional[tuple[float, float, float]]]:
    """One frame's ``(J, 2)`` positions and ``(J,)`` confidences as :func:`draw_skeleton` takes them."""
    return [
        (float(x), float(y), float(c)) if np.isfinite(x) and np.isfinite(y) else None
        for (x, y), c in zip(xy, confidence)
    ]


__all__ = ["CENTRE", "LEFT", "RIGHT", "draw_skeleton", "drawable", "track_keypoints"]
