"""Single-video synthetic clips whose content is known: a white square crossing a plain coloured background.

The captioning benchmarks' synthetic fixtures (IF-VidCap, VidCapBench) ask questions whose answers follow
from how a clip was drawn: the background colour and which way the square moves. ``scene_of`` reads both
back from frames, which is what the scripted stand-in model (``viddiff.testing.responders``) does with the
frames a captioning request carries.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Optional, Sequence

import numpy as np

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (200, 40, 40),
    "green": (40, 170, 60),
    "blue": (40, 70, 200),
    "yellow": (220, 200, 40),
}
Direction = Literal["left to right", "right to left"]
DIRECTIONS: tuple[Direction, ...] = ("left to right", "right to left")
WIDTH, HEIGHT, SQUARE = 96, 64, 16
FPS = 4.0


@dataclass(frozen=True)
class Clip:
    colour: str
    direction: Direction
    n_frames: int = 12


def render(clip: Clip) -> np.ndarray:
    """``(n, HEIGHT, WIDTH, 3)`` uint8 frames: the square's left edge moves evenly across the frame."""
    frames = np.empty((clip.n_frames, HEIGHT, WIDTH, 3), np.uint8)
    frames[:] = COLOURS[clip.colour]
    top = (HEIGHT - SQUARE) // 2
    for i in range(clip.n_frames):
        t = i / max(1, clip.n_frames - 1)
        left = round((t if clip.direction == "left to right" else 1 - t) * (WIDTH - SQUARE))
        frames[i, top : top + SQUARE, left : left + SQUARE] = 255
    return frames


def write_clip(path: Path, clip: Clip) -> Path:
    from viddiff.video.write import write_video

    return write_video(path, render(clip), FPS, options={"crf": "18"})


def colour_of(frame: np.ndarray) -> str:
    """The palette colour nearest to the frame's median pixel (the background)."""
    median = np.median(frame.reshape(-1, frame.shape[-1])[:, :3], axis=0)
    return min(COLOURS, key=lambda name: float(np.sum((median - np.asarray(COLOURS[name])) ** 2)))


def square_x(frame: np.ndarray) -> Optional[float]:
    """Horizontal centre of the near-white pixels, or ``None`` when there are none."""
    white = np.all(frame[..., :3] > 215, axis=-1)
    xs = np.nonzero(white)[1]
    return float(xs.mean()) if xs.size else None


def scene_of(frames: Sequence[np.ndarray]) -> tuple[str, Optional[Direction]]:
    """(background colour, direction of the square) as seen in ``frames`` (direction ``None`` if it cannot tell)."""
    colour = colour_of(frames[0])
    xs = [x for x in (square_x(f) for f in frames) if x is not None]
    if len(xs) < 2 or abs(xs[-1] - xs[0]) < 1:
        return colour, None
    return colour, "left to right" if xs[-1] > xs[0] else "right to left"
