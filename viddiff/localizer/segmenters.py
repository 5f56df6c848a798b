"""The localizer's segmenters as one table: ``localizer.method`` name → how one video's stage spans are found.

Adding a localisation ablation is one function taking a :class:`SegmentInput` and returning spans, one
:class:`Segmenter` constant here, and its name in :data:`viddiff.plugins.SEGMENTERS`; the config's choices and the CLIP loading decision
(``needs_clip``) come from the table. Plug-ins outside the package add an entry with
:func:`register_segmenter`, or declare one in the entry-point group ``viddiff.segmenters``
(``NAME = package.module:SEGMENTER``) so ``--set localizer.method=NAME`` finds it (see docs/extending.md).

Every segmenter returns the same thing as ``viterbi.stage_spans``: one ``[start, end)`` span of sampled-frame
positions per stage, never empty. The inputs that cost CLIP forwards (scores, similarities) are callables, so
a segmenter that does not need them never pays for them and one that embeds only some frames
(coarse-to-fine) asks for exactly those.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal, Optional

import numpy as np

from viddiff.errors import SegmenterChoiceError
from viddiff.localizer.coarse_to_fine import coarse_to_fine_segment, first_round
from viddiff.localizer.scores import ScoreFloor, stage_costs
from viddiff.localizer.segment import (
    segment_argmax,
    released_window_length,
    segment_best_window,
    segment_from_boundaries,
    segment_random,
    segment_uniform,
)
from viddiff.localizer.viterbi import Ties, stage_spans, viterbi_segment
from viddiff.plugins import SEGMENTERS

Spans = list[tuple[int, int]]
FirstFrames = Callable[[int, Optional[int], int], Optional[np.ndarray]]
"""``(n_frames, coarse_stride, max_stages) ->`` sorted frame positions, or ``None``; see :attr:`Segmenter.first_frames`."""
ENTRY_POINT_GROUP = SEGMENTERS.group
__all__ = [
    "ENTRY_POINT_GROUP", "FirstFrames", "SegmentInput", "Segmenter", "SegmenterChoiceError", "Spans", "get_segmenter",
    "register_segmenter", "segmenter_names",
]


@dataclass(frozen=True)
class SegmentInput:
    """Everything a segmenter may use for one video of a pair."""

    n_frames: int
    n_stages: int
    frame_indices: np.ndarray
    """Source-video frame index of each sampled frame (for annotations given in source frames)."""
    rng: np.random.Generator
    """Seeded per sample: random ablations are reproducible."""
    stay_logp: float
    advance_logp: float
    eps: float
    coarse_stride: Optional[int]
    """``localizer.coarse_to_fine.coarse_stride`` when coarse-to-fine decoding is on, else ``None``."""
    refine_radius: int
    scores: Callable[[], np.ndarray]
    """(K, T) min–max normalised mean similarity of each stage's retrieval strings to every frame (embeds all frames)."""
    first_string_scores: Callable[[], np.ndarray]
    """(K, T) the same for each stage's first retrieval string only."""
    similarities_at: Callable[[np.ndarray], np.ndarray]
    """(K, len(positions)) raw mean similarities at the given frame positions (embeds only those)."""
    stage_starts: Optional[tuple[list[int], int]] = None
    """Annotated stage starts and end in source frame indices (``oracle``), when the sample has them."""
    score_floor: ScoreFloor = "add"
    """``localizer.score_floor``: how ``eps`` keeps zero scores finite (``scores.stage_costs``)."""
    viterbi_ties: Ties = "earliest"
    """``localizer.viterbi_ties``: whether tied stages start as early or as late as possible."""
    no_viterbi_window: Literal["frames", "as_released"] = "frames"
    """``localizer.no_viterbi_window``: the ``no_viterbi`` window's length from the frame count or as released."""


@dataclass(frozen=True)
class Segmenter:
    segment: Callable[[SegmentInput], Spans]
    needs_clip: bool
    """Whether ``segment`` reads the CLIP inputs (the embedder is loaded only for these)."""
    summary: str
    random_keyframes: bool = False
    """Keyframes drawn at random places (same count and spacing) instead of from the spans."""
    annotated_keyframes: bool = False
    """Keyframes from the benchmark's annotations where a difference has them."""
    needs_stage_annotations: bool = False
    """``segment`` reads ``stage_starts``; without them the localizer falls back to Viterbi (or uniform)."""
    first_frames: Optional[FirstFrames] = None
    """The frame positions whose embeddings ``segment`` asks for first, in one request, whatever the stage texts
    are (given the video's frame count, the coarse-to-fine stride or ``None``, and the most stages a proposal
    may have): the method embeds them while the proposal is still awaited. ``None`` (or a ``None`` answer):
    not known before the texts, so nothing is embedded early."""


def viterbi(inp: SegmentInput) -> Spans:
    """Viterbi over the stage costs: a monotone left-to-right segmentation (the method)."""
    if inp.coarse_stride is not None:
        result = coarse_to_fine_segment(
            inp.n_frames,
            inp.n_stages,
            inp.similarities_at,
            coarse_stride=inp.coarse_stride,
            refine_radius=inp.refine_radius,
            stay_logp=inp.stay_logp,
            advance_logp=inp.advance_logp,
            eps=inp.eps,
            floor=inp.score_floor,
            ties=inp.viterbi_ties,
        )
        return stage_spans(result.path, inp.n_stages)
    costs = stage_costs(inp.scores(), inp.eps, inp.score_floor)
    path, _ = viterbi_segment(costs, inp.stay_logp, inp.advance_logp, inp.viterbi_ties)
    return stage_spans(path, inp.n_stages)


def every_frame(n_frames: int, coarse_stride: Optional[int], max_stages: int) -> np.ndarray:
    """First request of the segmenters that score every frame (``scores``, ``first_string_scores``)."""
    return np.arange(n_frames)


def viterbi_first_frames(n_frames: int, coarse_stride: Optional[int], max_stages: int) -> Optional[np.ndarray]:
    """Every frame at full rate; coarse-to-fine, its first round, unless that round depends on the stage count."""
    if coarse_stride is None:
        return every_frame(n_frames, coarse_stride, max_stages)
    if coarse_stride > 1 and max_stages >= n_frames:
        return None
    return first_round(n_frames, max_stages, coarse_stride)


def no_viterbi(inp: SegmentInput) -> Spans:
    length = None if inp.no_viterbi_window == "frames" else released_window_length(inp.n_stages)
    return segment_best_window(inp.first_string_scores(), length=length)


def argmax(inp: SegmentInput) -> Spans:
    return segment_argmax(inp.scores())


def uniform(inp: SegmentInput) -> Spans:
    return segment_uniform(inp.n_frames, inp.n_stages)


def random_segments(inp: SegmentInput) -> Spans:
    return segment_random(inp.n_frames, inp.n_stages, inp.rng)


def annotated_stages(inp: SegmentInput) -> Spans:
    if inp.stage_starts is None:
        raise ValueError("the oracle segmenter needs the sample's annotated stage starts")
    starts, end = inp.stage_starts
    return segment_from_boundaries(inp.frame_indices, starts, end, inp.n_stages)


VITERBI = Segmenter(
    viterbi, needs_clip=True, first_frames=viterbi_first_frames, summary="the method: Viterbi over CLIP stage scores"
)
NO_VITERBI = Segmenter(
    no_viterbi, needs_clip=True, first_frames=every_frame,
    summary="paper ablation: per stage, a window around its first string's best match",
)
RANDOM = Segmenter(
    uniform, needs_clip=False, random_keyframes=True,
    summary="paper ablation: keyframes at random places, same count and spacing",
)
ORACLE = Segmenter(
    annotated_stages, needs_clip=False, annotated_keyframes=True, needs_stage_annotations=True,
    summary="paper ablation: the benchmark's annotated keyframes (and stage boundaries)",
)
ARGMAX = Segmenter(
    argmax, needs_clip=True, first_frames=every_frame, summary="per stage, the best window of the mean score"
)
UNIFORM = Segmenter(uniform, needs_clip=False, summary="equal consecutive spans")
RANDOM_SEGMENTS = Segmenter(random_segments, needs_clip=False, summary="a random monotone split")
"""The built-in ``localizer.method`` choices; :data:`viddiff.plugins.SEGMENTERS` lists them by name, the method first."""


def register_segmenter(name: str, segmenter: Segmenter) -> None:
    """Add a plug-in segmenter; ``localizer.method=<name>`` then selects it. Built-in names cannot be replaced."""
    SEGMENTERS.register(name, segmenter)


def segmenter_names() -> list[str]:
    """The built-in segmenters in table order (the method first), then registered and installed ones."""
    return SEGMENTERS.names()


def get_segmenter(name: str) -> Segmenter:
    return SEGMENTERS.get(name)
