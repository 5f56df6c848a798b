"""At what rate the pose of a clip is estimated: dense enough that a statistic's sampling error is small against
its margin, and independent of the rate the method reads its own frames at.

BlazePose's tracking mode does not give the same keypoints for the same frame when its neighbours differ: on a
real clip, the knee read every 4th frame (15 fps) dipped 12° lower than the same frames read every 3rd or 2nd
frame, where those frames were low-confidence gaps. A short clip is therefore read at its native rate (every
frame), so two copies of one movement (a re-encode, a slowed copy) give the estimator the very same sequence;
a long one at ``pose.fps`` or faster, as many frames as ``pose.native_up_to_frames`` allows (docs/pose.md,
"Sampling"). Pure arithmetic.
"""

from __future__ import annotations

from typing import Optional


def pose_rate(n_frames: int, fps_original: float, min_fps: Optional[float], native_up_to_frames: int) -> Optional[float]:
    """The target fps to read a clip of ``n_frames`` frames at ``fps_original`` for its pose (``None``: every frame).

    Every frame when ``min_fps`` is ``None`` or the clip has at most ``native_up_to_frames`` frames; else the rate
    that gives ``native_up_to_frames`` frames over the clip, never below ``min_fps`` nor above the native rate."""
    if min_fps is None or n_frames <= native_up_to_frames or fps_original <= 0:
        return None
    duration_s = n_frames / fps_original
    rate = max(min_fps, native_up_to_frames / duration_s)
    return None if rate >= fps_original else rate


__all__ = ["pose_rate"]
