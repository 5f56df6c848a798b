"""The oracle localizer's input: the benchmark's own keyframe annotations.

VidDiffBench rows annotate, per difference key and per video, the frames (indices in the source video)
where the difference shows. The paper's oracle ablation hands exactly those frames to the differencer.
The annotations are keyed by the benchmark's difference keys, so they only mean something in closed
mode, where the differences judged are the benchmark's own; in open mode the proposer's keys are
unrelated numbers that would pick the wrong annotations, so they are withheld there.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from viddiff.schema import Mode, RetrievalFrames


def annotations_for_mode(retrieval: Optional[RetrievalFrames], mode: Mode) -> Optional[RetrievalFrames]:
    """The annotations the localizer may use in ``mode``: keyframes only in closed mode (stage boundaries,
    which are not tied to difference keys, in every mode)."""
    if retrieval is None or mode == "closed" or not retrieval.keyframes:
        return retrieval
    return retrieval.model_copy(update={"keyframes": {}})


def annotated_keyframes(retrieval: Optional[RetrievalFrames], key: str) -> Optional[tuple[list[int], list[int]]]:
    """Annotated frames of difference ``key`` in A and in B, or ``None`` unless both videos have some."""
    if retrieval is None:
        return None
    frames = retrieval.keyframes.get(key)
    if frames is None or not frames[0] or not frames[1]:
        return None
    return frames


def nearest_positions(frame_indices: np.ndarray, wanted: list[int]) -> list[int]:
    """Positions of the sampled frames nearest to the annotated source frames (distinct, sorted; the
    earlier frame on a tie)."""
    indices = np.asarray(frame_indices)
    if indices.ndim != 1 or indices.size == 0:
        raise ValueError("frame_indices must be a non-empty 1-D array")
    return sorted({int(np.abs(indices - f).argmin()) for f in wanted})
