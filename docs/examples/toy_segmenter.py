"""A localisation ablation in one function and one table entry: Viterbi on every other frame.

It embeds only half of the sampled frames (``similarities_at`` embeds exactly the positions asked for),
decodes the stage sequence on them, and stretches the spans back over all frames: half the CLIP cost of
``viterbi``, at half its time resolution. Inside viddiff its name would go into
``viddiff.plugins.SEGMENTERS``; from outside, importing this module registers it (Python), or
an installed package declares it (``viterbi_half = "toy_segmenter:VITERBI_HALF"`` in the entry-point group
``viddiff.segmenters``), after which ``--set localizer.method=viterbi_half`` selects it and ``viddiff
ablate`` includes it.
"""

from __future__ import annotations

import numpy as np

from viddiff.localizer.scores import normalise_scores, stage_costs
from viddiff.localizer.segmenters import SegmentInput, Segmenter, Spans, register_segmenter
from viddiff.localizer.viterbi import stage_spans, viterbi_segment


def every_other_frame(n_frames: int, coarse_stride: int | None, max_stages: int) -> np.ndarray:
    """The frames it embeds, whatever the stage texts: embedded while the proposal is still awaited."""
    return np.arange(0, n_frames, 2)


def viterbi_half(inp: SegmentInput) -> Spans:
    kept = every_other_frame(inp.n_frames, inp.coarse_stride, inp.n_stages)
    costs = stage_costs(normalise_scores(inp.similarities_at(kept)), inp.eps)
    path, _ = viterbi_segment(costs, inp.stay_logp, inp.advance_logp)
    # A kept frame's stage also holds the dropped frame after it; every stage keeps at least one frame.
    full_path = np.repeat(path, 2)[: inp.n_frames]
    return stage_spans(full_path, inp.n_stages)


VITERBI_HALF = Segmenter(
    viterbi_half, needs_clip=True, first_frames=every_other_frame,
    summary="Viterbi on every other frame (half the CLIP cost)",
)
register_segmenter("viterbi_half", VITERBI_HALF)
