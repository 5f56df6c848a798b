"""Ablation segmenters (config ``localizer.method``) besides Viterbi.

Every method returns the same thing as ``viterbi.stage_spans``: one
``[start, end)`` span of sampled-frame positions per stage, never empty, so
keyframe selection works on any of them. When there are more stages than
frames, every method falls back to one frame per stage with the remaining
stages sharing the last frame, exactly like Viterbi.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from viddiff.errors import DatasetError
from viddiff.localizer.viterbi import stage_spans
from viddiff.console import count_of


def segment_argmax(scores: np.ndarray) -> list[tuple[int, int]]:
    """Per stage, the window of ``max(1, T // K)`` frames with the highest mean score.

    No temporal model links the stages, so spans may overlap or come out of
    order: that is what this ablation measures. The earliest window wins ties.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or 0 in scores.shape:
        raise ValueError(f"scores must be a non-empty (stages, frames) array, got shape {scores.shape}")
    n_stages, n_frames = scores.shape
    width = max(1, n_frames // n_stages)
    running = np.concatenate((np.zeros((n_stages, 1)), np.cumsum(scores, axis=1)), axis=1)
    window_sums = running[:, width:] - running[:, :-width]
    starts = np.argmax(window_sums, axis=1)
    return [(int(s), int(s) + width) for s in starts]


RELEASED_VIDEO_RECORD_FIELDS = 5
"""What the authors' release takes the length of in its no-Viterbi ablation: the per-video record (``path``,
``fps_original``, ``frames_trim`` from the dataset, ``video`` and ``fps`` added on load), not the frames. Five
fields is inferred from the released loader and dataset card; the exact field set of the Hub copy could not be
checked offline."""


def released_window_length(n_stages: int, growth: float = 1.3) -> int:
    """The release's no-Viterbi window: ``int(growth * 5 / K)``, made odd: 7, 3, 3, 1, 1 frames for K = 1..5."""
    if n_stages < 1:
        raise ValueError(f"need at least one stage, got {n_stages}")
    return _odd(int(growth * RELEASED_VIDEO_RECORD_FIELDS / n_stages))


def segment_best_window(
    first_string_scores: np.ndarray, growth: float = 1.3, length: Optional[int] = None
) -> list[tuple[int, int]]:
    """The paper's *no Viterbi* ablation: per stage, a window around its best-matching frames, no temporal model.

    ``first_string_scores`` is (K, T): for each stage, the normalised similarity of its *first* retrieval
    string to every frame (what the authors' release scores this ablation with). Every stage gets a window
    of ``length`` frames, by default ``int(growth * T / K)`` made odd (so it has a centre frame), centred on
    the frame whose window has the highest mean score (scores padded with their edge values at the ends; the
    earliest wins ties), and moved inside the video; a window longer than the video is the whole video.
    Windows may overlap or be out of order. :func:`released_window_length` gives the release's ``length``.
    """
    scores = np.asarray(first_string_scores, dtype=np.float64)
    if scores.ndim != 2 or 0 in scores.shape:
        raise ValueError(f"scores must be a non-empty (stages, frames) array, got shape {scores.shape}")
    if not growth > 0:
        raise ValueError(f"growth must be positive, got {growth}")
    n_stages, n_frames = scores.shape
    if length is None:
        length = _odd(int(growth * n_frames / n_stages))
    elif length < 1 or length % 2 == 0:
        raise ValueError(f"length must be a positive odd number of frames, got {length}")
    half = length // 2
    padded = np.pad(scores, ((0, 0), (half, half)), mode="edge")
    running = np.concatenate((np.zeros((n_stages, 1)), np.cumsum(padded, axis=1)), axis=1)
    window_sums = running[:, length:] - running[:, :-length]  # (K, T): window centred on each frame
    spans = []
    for centre in np.argmax(window_sums, axis=1):
        centre = min(max(int(centre), half), n_frames - half - 1)
        spans.append((max(centre - half, 0), min(centre + half + 1, n_frames)))
    return spans


def _odd(length: int) -> int:
    """``length`` made odd (an even one grows by one), so a window has a centre frame."""
    return length + 1 - length % 2


def segment_uniform(n_frames: int, n_stages: int) -> list[tuple[int, int]]:
    """Equal consecutive spans (lengths differ by at most one frame)."""
    _check_counts(n_frames, n_stages)
    if n_stages > n_frames:
        return _one_frame_per_stage(n_frames, n_stages)
    cuts = (np.arange(1, n_stages) * n_frames) // n_stages
    return _spans_from_cuts(cuts, n_frames, n_stages)


def segment_random(n_frames: int, n_stages: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """Consecutive spans split at ``K - 1`` distinct random cut points (each stage gets ≥ 1 frame).

    This project's ``random_segments`` ablation: a random but monotone segmentation, with keyframes then
    chosen by the usual rules (the paper's ``random`` draws the keyframes themselves, see
    ``keyframes.random_keyframes``)."""
    _check_counts(n_frames, n_stages)
    if n_stages > n_frames:
        return _one_frame_per_stage(n_frames, n_stages)
    cuts = np.sort(rng.choice(np.arange(1, n_frames), size=n_stages - 1, replace=False))
    return _spans_from_cuts(cuts, n_frames, n_stages)


def segment_from_boundaries(
    frame_indices: np.ndarray, stage_starts: list[int], stage_end: int, n_stages: int
) -> list[tuple[int, int]]:
    """Oracle spans from ground-truth stage boundaries (dataset ``retrieval_frames``).

    ``frame_indices`` are the source frame numbers of the sampled frames
    (increasing); ``stage_starts`` and ``stage_end`` are in the same numbering.
    Stage ``k`` spans the sampled frames in ``[stage_starts[k], next start)``,
    the last one up to ``stage_end``. A stage no sampled frame falls into (it is
    shorter than the sampling stride, or outside the trim) gets the first
    sampled frame at or after its start, or the last frame if there is none.
    """
    if n_stages < 1:
        raise ValueError(f"need at least one stage, got {n_stages}")
    frames = np.asarray(frame_indices)
    if frames.ndim != 1 or frames.size == 0 or np.any(np.diff(frames) <= 0):
        raise ValueError("frame_indices must be a non-empty, strictly increasing 1-D array")
    if len(stage_starts) != n_stages:
        raise DatasetError(
            f"retrieval_frames stages: {len(stage_starts)} stage starts annotated but {n_stages} stages expected; "
            "use a localizer method other than 'oracle' for this sample or fix the annotation"
        )
    bounds = list(stage_starts) + [stage_end]
    if any(b <= a for a, b in zip(bounds, bounds[1:])):
        raise DatasetError(
            f"retrieval_frames stages: starts {list(stage_starts)} with end {stage_end} are not strictly increasing; "
            "fix the annotation"
        )
    positions = np.searchsorted(frames, bounds, side="left").tolist()
    last = frames.size - 1
    spans = []
    for start, end in zip(positions, positions[1:]):
        spans.append((start, end) if end > start else (min(start, last), min(start, last) + 1))
    return spans


def _spans_from_cuts(cuts: np.ndarray, n_frames: int, n_stages: int) -> list[tuple[int, int]]:
    """Consecutive spans from ``K - 1`` strictly increasing cut positions in ``[1, T)``."""
    path = np.searchsorted(cuts, np.arange(n_frames), side="right")
    return stage_spans(path, n_stages)


def _one_frame_per_stage(n_frames: int, n_stages: int) -> list[tuple[int, int]]:
    """The K > T fallback shared with Viterbi: frame t is stage t, the rest share the last frame."""
    return stage_spans(np.arange(n_frames), n_stages)


def _check_counts(n_frames: int, n_stages: int) -> None:
    if n_frames < 1 or n_stages < 1:
        raise ValueError(
            f"need at least one frame and one stage, got {count_of(n_frames, 'frame')} and {count_of(n_stages, 'stage')}"
        )
