"""Which way up a video or image is meant to be seen, and how to turn decoded frames upright.

Phones store frames as the sensor delivers them and record how to show them: MP4/MOV and
Matroska carry a display matrix, JPEG/PNG/WebP an EXIF orientation tag. Decoders hand back the
stored frames; showing them upright is the reader's job. An :class:`Orientation` is one of the
eight rotations/mirrorings of the pixel grid, held as a 2x2 integer matrix acting on image
coordinates (x right, y down), so composing and inverting them is plain matrix algebra.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

logger = logging.getLogger(__name__)

_FIXED_ONE = 1 << 16  # the display matrix's a, b, c, d are 16.16 fixed point


@dataclass(frozen=True)
class Orientation:
    """A right-angle rotation and/or mirroring: ``x' = xx*x + xy*y``, ``y' = yx*x + yy*y`` (plus a shift)."""

    xx: int = 1
    xy: int = 0
    yx: int = 0
    yy: int = 1

    def __post_init__(self) -> None:
        diagonal = self.xy == self.yx == 0 and abs(self.xx) == abs(self.yy) == 1
        anti_diagonal = self.xx == self.yy == 0 and abs(self.xy) == abs(self.yx) == 1
        if not (diagonal or anti_diagonal):
            raise ValueError(f"not a right-angle rotation or mirroring: {self}")

    @property
    def is_identity(self) -> bool:
        return self == IDENTITY

    @property
    def swaps_sides(self) -> bool:
        """Whether width and height trade places (a quarter turn, possibly mirrored)."""
        return self.xx == 0

    @property
    def mirrored(self) -> bool:
        return self.xx * self.yy - self.xy * self.yx < 0

    def then(self, other: "Orientation") -> "Orientation":
        """This transform followed by ``other``."""
        return Orientation(
            other.xx * self.xx + other.xy * self.yx,
            other.xx * self.xy + other.xy * self.yy,
            other.yx * self.xx + other.yy * self.yx,
            other.yx * self.xy + other.yy * self.yy,
        )

    def inverse(self) -> "Orientation":
        return Orientation(self.xx, self.yx, self.xy, self.yy)  # orthogonal: the inverse is the transpose

    def apply(self, frame: np.ndarray) -> np.ndarray:
        """``frame`` (H, W, ...) as displayed; a view, no copy."""
        if self.swaps_sides:
            # x' = xy * y and y' = yx * x: rows become columns, then mirror where the sign is negative.
            out = frame.swapaxes(0, 1)
            return out[:: self.yx, :: self.xy]
        return frame[:: self.yy, :: self.xx]

    def display_size(self, width: int, height: int) -> tuple[int, int]:
        return (height, width) if self.swaps_sides else (width, height)

    def describe(self) -> str:
        """Words for logs and notes, e.g. 'rotated 90° counter-clockwise, mirrored'."""
        if self.is_identity:
            return "upright"
        rotation = self.mirror_free()
        turns = next(k for k in range(4) if quarter_turns_ccw(k) == rotation)
        words = {0: [], 1: ["rotated 90° counter-clockwise"], 2: ["rotated 180°"], 3: ["rotated 90° clockwise"]}[turns]
        return ", ".join(words + (["mirrored left-right"] if self.mirrored else []))

    def mirror_free(self) -> "Orientation":
        """The rotation left after undoing a left-right mirror applied last (``self = rotation.then(MIRROR)``)."""
        return self.then(MIRROR) if self.mirrored else self


IDENTITY = Orientation()
MIRROR = Orientation(-1, 0, 0, 1)
"""Left-right mirror (x flips)."""


def quarter_turns_ccw(turns: int) -> Orientation:
    """Rotation by ``turns`` x 90° counter-clockwise as seen on screen."""
    result = IDENTITY
    for _ in range(turns % 4):
        result = result.then(Orientation(0, 1, -1, 0))  # one visual counter-clockwise quarter turn
    return result


def from_display_matrix(matrix: Sequence[int]) -> Orientation:
    """The transform a container's display matrix (FFmpeg's 9 int32 values) asks the viewer to apply.

    FFmpeg maps a decoded pixel ``(x, y)`` to ``(x y 1) · M``, so ``x' = a·x + c·y`` and
    ``y' = b·x + d·y`` with ``a, b, c, d = M[0], M[1], M[3], M[4]``. Angles that are not multiples of
    90° (never written by phones) are rounded to the nearest quarter turn, with a warning.
    """
    a, b, c, d = (matrix[i] / _FIXED_ONE for i in (0, 1, 3, 4))
    candidates = [quarter_turns_ccw(k).then(m) for k in range(4) for m in (IDENTITY, MIRROR)]
    # the right-angle transform nearest to the matrix's normalised linear part
    scale_x, scale_y = math.hypot(a, b) or 1.0, math.hypot(c, d) or 1.0
    target = (a / scale_x, c / scale_y, b / scale_x, d / scale_y)
    best = min(candidates, key=lambda o: sum((u - v) ** 2 for u, v in zip((o.xx, o.xy, o.yx, o.yy), target)))
    error = sum((u - v) ** 2 for u, v in zip((best.xx, best.xy, best.yx, best.yy), target))
    if error > 1e-3:
        logger.warning(
            "display matrix %s is not a right-angle rotation; showing frames %s", list(matrix), best.describe()
        )
    return best


def decord_rotation(matrix: Sequence[int]) -> Orientation:
    """What decord 0.6 applies for this display matrix when its FFmpeg sees it (MP4/MOV only).

    decord reads the angle as FFmpeg's ``-av_display_rotation_get`` and rotates by it, ignoring
    any mirroring; it never looks at Matroska/WebM rotation, which its FFmpeg 4.1 does not export.
    """
    a, b, c, d = (matrix[i] for i in (0, 1, 3, 4))
    # av_display_rotation_get(): the counter-clockwise angle, from the matrix's first column
    angle_ccw = -math.degrees(math.atan2(b / (math.hypot(b, d) or 1.0), a / (math.hypot(a, c) or 1.0)))
    return quarter_turns_ccw(round(angle_ccw / 90))


# EXIF tag 0x0112: 1 = as stored; 2..8 the seven other orientations (TIFF 6.0 / EXIF 2.3 numbering).
_EXIF = {
    1: IDENTITY,
    2: MIRROR,
    3: quarter_turns_ccw(2),
    4: quarter_turns_ccw(2).then(MIRROR),
    5: quarter_turns_ccw(3).then(MIRROR),  # transpose
    6: quarter_turns_ccw(3),
    7: quarter_turns_ccw(1).then(MIRROR),  # transverse
    8: quarter_turns_ccw(1),
}
EXIF_ORIENTATION_TAG = 0x0112


def from_exif(tag: int | None) -> Orientation:
    """The transform an EXIF orientation value asks for (missing or invalid values mean 'as stored')."""
    return _EXIF.get(tag, IDENTITY) if isinstance(tag, int) else IDENTITY
