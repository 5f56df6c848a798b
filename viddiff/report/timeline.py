"""Pure geometry of the shared time axis: stage spans and keyframes in seconds, axis ticks.

Both the HTML report and the PNG figures draw from these numbers, so the two can never disagree
about where a stage starts. Times are presentation seconds from the start of the (trimmed) clip, as
everywhere in viddiff (see ``viddiff.schema``), also for variable-frame-rate clips.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from viddiff.video import VideoFrames

STAGE_COLOURS = (
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
)
"""Tableau-10: distinguishable, print-safe; stage ``k`` always gets colour ``k`` (mod 10)."""
_NICE_STEPS = (0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0)


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ClipClock(_Frozen):
    """Where one clip's frames sit in time: presentation seconds since the clip's first frame.

    A variable-frame-rate clip (phones) shows its frames unevenly, so a frame's time is looked up, never
    counted from a nominal rate; frames between two known ones are placed linearly (exact at a constant rate).
    """

    offset_s: float
    """Where the clip starts inside the file: what a ``<video>`` element must add to clip times."""
    duration_s: float
    """From the clip's first frame to the end of its last one."""
    frame_indices: tuple[int, ...]
    """Source frame indices whose times are known, increasing: the sampled frames, then the clip's (exclusive) end."""
    times_s: tuple[float, ...]

    @classmethod
    def constant_rate(cls, start_frame: int, end_frame: int, fps: float) -> "ClipClock":
        """The clip ``[start_frame, end_frame)`` of a file shown at ``fps``."""
        duration = (end_frame - start_frame) / fps
        return cls(
            offset_s=start_frame / fps, duration_s=duration, frame_indices=(start_frame, end_frame), times_s=(0.0, duration)
        )

    @classmethod
    def of(cls, frames: "VideoFrames") -> "ClipClock":
        """The clock of decoded frames: their presentation times (variable rate) or their source rate."""
        if not frames.variable_frame_rate:
            return cls.constant_rate(frames.start, frames.end, frames.fps_original)
        return cls(
            offset_s=frames.offset_s,
            duration_s=frames.duration_s,
            frame_indices=(*(int(f) for f in frames.frame_indices), frames.end),
            times_s=(*(float(t) for t in frames.times_s), frames.duration_s),
        )

    def seconds(self, frame_index: int) -> float:
        return float(np.interp(frame_index, self.frame_indices, self.times_s))


class StageSpan(_Frozen):
    stage: int
    """Index into the proposal's stages (also picks the colour)."""
    name: str
    start_s: float
    end_s: float


def stage_spans(
    frame_indices: Sequence[int], spans: Sequence[tuple[int, int]], stage_names: Sequence[str], clock: ClipClock
) -> list[StageSpan]:
    """Stage spans (positions ``[start, end)`` in the sampled frames) as seconds on the clip's clock.

    A span ends where the next sampled frame after it starts, or at the clip's end for the last
    frames, so consecutive Viterbi stages tile the clip without gaps.
    """
    out = []
    n = len(frame_indices)
    for k, (start, end) in enumerate(spans):
        if n == 0 or start >= n:
            continue
        end = max(min(end, n), start + 1)
        start_s = clock.seconds(frame_indices[start])
        end_s = clock.seconds(frame_indices[end]) if end < n else clock.duration_s
        name = stage_names[k] if k < len(stage_names) else f"stage {k + 1}"
        out.append(StageSpan(stage=k, name=name, start_s=start_s, end_s=max(end_s, start_s)))
    return out


def tick_step(extent_s: float, max_ticks: int = 12) -> float:
    """A round step (0.1, 0.2, 0.25, 0.5, 1, 2, ... s) giving at most ``max_ticks`` intervals over ``extent_s``."""
    if extent_s <= 0:
        return 1.0
    for step in _NICE_STEPS:
        if extent_s / step <= max_ticks:
            return step
    return 10 ** math.ceil(math.log10(extent_s / max_ticks))


def axis_ticks(extent_s: float, max_ticks: int = 12) -> list[float]:
    """Tick positions from 0 up to ``extent_s`` (inclusive when it falls on a step)."""
    step = tick_step(extent_s, max_ticks)
    count = int(math.floor(extent_s / step + 1e-9))
    return [round(i * step, 6) for i in range(count + 1)]


def stage_colour(stage: int) -> str:
    return STAGE_COLOURS[stage % len(STAGE_COLOURS)]
