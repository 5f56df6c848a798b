"""Keyframe selection for one difference in one video, from stage spans.

The differencer compares like with like: for each difference it sees frames
from the same stage(s) of both videos. A single-moment difference (``"1"``)
gets the middle frame of its first linked stage; a motion difference
(``"gt_1"``) gets a short burst of frames around the middle of its linked
stages, spaced in time so the VLM can see movement.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from viddiff.schema import NumFrames

BurstStep = Literal["distinct", "as_released"]


def select_keyframes(
    spans: list[tuple[int, int]],
    linked_stages: list[int],
    num_frames: NumFrames,
    *,
    n_frames: int,
    fps: float,
    frame_sep_s: float,
    n_total: int,
    step_rule: BurstStep = "distinct",
) -> list[int]:
    """Sorted positions in the sampled frame sequence (``0 … n_total-1``), distinct unless ``step_rule``
    is ``"as_released"``.

    ``spans`` are ``[start, end)`` positions per stage (from Viterbi or an
    ablation); ``fps`` is the rate of the sampled sequence.

    ``"1"``: the middle frame (lower middle for even lengths) of the first
    linked stage. ``"gt_1"``: ``n_frames`` frames centred on the middle of the
    union of the linked spans, ``frame_sep_s`` apart rounded to sampled frames
    but at least one frame apart, so low fps never yields repeated frames
    (``step_rule="as_released"``: rounded as the authors' release does, see
    :func:`burst_step`, so 1 fps repeats one frame). The burst is shifted as a
    whole to fit inside the video, and its spacing shrinks if even that does not
    fit; a video with fewer than ``n_frames`` frames gives all its frames.
    """
    _check_inputs(spans, linked_stages, n_total)
    if num_frames == "1":
        start, end = spans[linked_stages[0]]
        return [(start + end - 1) // 2]
    _check_burst(num_frames, n_frames, fps, frame_sep_s)
    start = min(spans[k][0] for k in linked_stages)
    end = max(spans[k][1] for k in linked_stages)
    centre = (start + end - 1) // 2
    if step_rule == "as_released" and round(frame_sep_s * fps) == 0:
        return [centre] * n_frames  # the release's burst at low fps, whatever the video's length
    if n_total <= n_frames:
        return list(range(n_total))
    if n_frames == 1:
        return [centre]
    step = burst_step(n_frames, fps, frame_sep_s, n_total, step_rule)
    width = (n_frames - 1) * step
    first = min(max(centre - width // 2, 0), n_total - 1 - width)
    return [first + i * step for i in range(n_frames)]


def _check_burst(num_frames: NumFrames, n_frames: int, fps: float, frame_sep_s: float) -> None:
    if num_frames != "gt_1":
        raise ValueError(f"num_frames must be '1' or 'gt_1', got {num_frames!r}")
    if n_frames < 1 or not fps > 0 or not frame_sep_s > 0:
        raise ValueError(f"need n_frames >= 1, fps > 0 and frame_sep_s > 0, got {n_frames}, {fps}, {frame_sep_s}")


def burst_step(
    n_frames: int, fps: float, frame_sep_s: float, n_total: int, step_rule: BurstStep = "distinct"
) -> int:
    """Sampled frames between the frames of a ``gt_1`` burst, small enough that ``n_frames`` frames fit in
    ``n_total`` (needs ``n_total > n_frames > 1``).

    ``"distinct"``: ``frame_sep_s * fps`` rounded half up, at least 1. ``"as_released"``: Python's ``round``
    (half to even) as the release computes it, which is 0 below 1.43 fps at 0.35 s (the burst is then one
    frame repeated) and differs from half-up rounding at exact halves (30 fps: 10 frames, not 11).
    """
    if step_rule == "as_released":
        step = round(frame_sep_s * fps)
    elif step_rule == "distinct":
        step = max(1, math.floor(frame_sep_s * fps + 0.5))
    else:
        raise ValueError(f"step_rule must be 'distinct' or 'as_released', got {step_rule!r}")
    return min(step, (n_total - 1) // (n_frames - 1))


def random_keyframes(
    num_frames: NumFrames,
    *,
    n_frames: int,
    fps: float,
    frame_sep_s: float,
    n_total: int,
    rng: np.random.Generator,
    step_rule: BurstStep = "distinct",
) -> list[int]:
    """The paper's *random* localisation ablation: as many keyframes as :func:`select_keyframes` would pick,
    with the same spacing, at a uniformly random place in the video instead of the localised one.

    ``"1"``: one uniformly random frame. ``"gt_1"``: a burst of ``n_frames`` frames ``burst_step`` apart whose
    first frame is uniform over every start that keeps the burst inside the video (the release draws the
    middle frame uniformly from the same range). Sorted positions in ``0 … n_total-1``, distinct unless
    ``step_rule`` is ``"as_released"`` (the release spaces the burst like its localised one).
    """
    if n_total < 1:
        raise ValueError(f"n_total must be at least 1, got {n_total}")
    if num_frames == "1":
        return [int(rng.integers(n_total))]
    _check_burst(num_frames, n_frames, fps, frame_sep_s)
    if step_rule == "as_released" and round(frame_sep_s * fps) == 0:
        return [int(rng.integers(n_total))] * n_frames
    if n_total <= n_frames:
        return list(range(n_total))
    if n_frames == 1:
        return [int(rng.integers(n_total))]
    step = burst_step(n_frames, fps, frame_sep_s, n_total, step_rule)
    width = (n_frames - 1) * step
    first = int(rng.integers(n_total - width))
    return [first + i * step for i in range(n_frames)]


def _check_inputs(spans: list[tuple[int, int]], linked_stages: list[int], n_total: int) -> None:
    if n_total < 1:
        raise ValueError(f"n_total must be at least 1, got {n_total}")
    for k, (start, end) in enumerate(spans):
        if not 0 <= start < end <= n_total:
            raise ValueError(f"span of stage {k} is {(start, end)}; it must be non-empty and inside [0, {n_total})")
    if not linked_stages:
        raise ValueError("linked_stages is empty: every difference must be linked to at least one stage")
    bad = [k for k in linked_stages if not 0 <= k < len(spans)]
    if bad:
        raise ValueError(f"linked stages {bad} do not exist; there are {len(spans)} stages")
