"""Stick-figure geometry and drawing for the synthetic benchmark.

Poses are lists of shapes in *base pixel* coordinates (y down); ``render``
draws them supersampled and box-filters down, so thin limbs stay smooth
without an anti-aliasing dependency.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence, Union

import numpy as np

Point = tuple[float, float]
Color = tuple[int, int, int]

BACKGROUND: Color = (232, 232, 222)
FLOOR: Color = (90, 90, 90)


@dataclass(frozen=True)
class Limb:
    """A straight body segment (or prop bar) drawn as a thick line with round ends."""

    start: Point
    end: Point
    color: Color
    width: float = 3.0


@dataclass(frozen=True)
class Disc:
    """A filled circle: heads, barbell plates, balls."""

    center: Point
    radius: float
    color: Color


Shape = Union[Limb, Disc]


def polar(origin: Point, length: float, angle_deg: float) -> Point:
    """Point ``length`` away from ``origin``; angle measured from straight up, clockwise (towards +x)."""
    a = math.radians(angle_deg)
    return origin[0] + length * math.sin(a), origin[1] - length * math.cos(a)


def lerp(p: Point, q: Point, t: float) -> Point:
    return p[0] + (q[0] - p[0]) * t, p[1] + (q[1] - p[1]) * t


def ease(u: float) -> float:
    """Smooth 0->1 ramp (zero velocity at both ends), so key poses blend like real motion."""
    u = min(1.0, max(0.0, u))
    return 0.5 - 0.5 * math.cos(math.pi * u)


def two_link(root: Point, target: Point, upper: float, lower: float, toward: Point) -> Point:
    """Middle joint (elbow/knee) of a two-segment chain from ``root`` reaching towards ``target``.

    Of the two possible bends, the one whose joint lies further in direction
    ``toward`` (from ``root``) is used, e.g. ``(0, 1)`` for an elbow hanging
    down. The upper segment always keeps its length; a target out of reach
    gives a straight (or fully folded) chain pointing at it.
    """
    dx, dy = target[0] - root[0], target[1] - root[1]
    dist = math.hypot(dx, dy)
    if dist < 1e-9:
        norm = math.hypot(*toward) or 1.0
        return root[0] + toward[0] / norm * upper, root[1] + toward[1] / norm * upper
    reach = min(max(dist, abs(upper - lower)), upper + lower)
    along = (upper**2 - lower**2 + reach**2) / (2 * reach)
    across = math.sqrt(max(upper**2 - along**2, 0.0))
    ux, uy = dx / dist, dy / dist
    nx, ny = -uy, ux
    sign = 1.0 if nx * toward[0] + ny * toward[1] >= 0 else -1.0
    return root[0] + ux * along + sign * nx * across, root[1] + uy * along + sign * ny * across


def render(
    shapes: Sequence[Shape], width: int, height: int, floor_y: Optional[float] = None, supersample: int = 2
) -> np.ndarray:
    """Draw ``shapes`` in order on a plain background; returns (height, width, 3) uint8 RGB."""
    from PIL import Image, ImageDraw

    s = supersample
    image = Image.new("RGB", (width * s, height * s), BACKGROUND)
    draw = ImageDraw.Draw(image)
    if floor_y is not None:
        draw.line([(0, floor_y * s), (width * s, floor_y * s)], fill=FLOOR, width=max(1, s))
    for shape in shapes:
        if isinstance(shape, Limb):
            w = shape.width * s
            points = [(shape.start[0] * s, shape.start[1] * s), (shape.end[0] * s, shape.end[1] * s)]
            draw.line(points, fill=shape.color, width=max(1, round(w)))
            for x, y in points:
                draw.ellipse([x - w / 2, y - w / 2, x + w / 2, y + w / 2], fill=shape.color)
        else:
            x, y, r = shape.center[0] * s, shape.center[1] * s, shape.radius * s
            draw.ellipse([x - r, y - r, x + r, y + r], fill=shape.color)
    if s > 1:
        image = image.reduce(s)
    return np.asarray(image, dtype=np.uint8)
