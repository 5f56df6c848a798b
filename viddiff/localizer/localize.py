"""Stage 2 of VidDiff: align the two videos by sub-action stage and pick keyframes.

Local differences (the default) get keyframes from their linked stages.
Global differences (``Difference.scope == "global"``: camera, style,
background, playback...) hold over the whole video, so their keyframes are
spread evenly over it and their stage links are not looked at.

Methods (``localizer.method``): ``viterbi`` is the method. The paper's
ablations: ``no_viterbi`` (per stage, a window around the best match of its
first retrieval string), ``random`` (keyframes at random places, same count
and spacing), ``oracle`` (the benchmark's annotated keyframes; differences
without annotations use the annotated stage boundaries, else Viterbi). This
project's: ``argmax`` (best window of the mean score), ``uniform`` (equal
split), ``random_segments`` (random monotone split).

This module is the I/O-facing glue: it embeds frames and retrieval strings
with CLIP and hands plain arrays to the pure algorithms (scores, Viterbi,
ablation segmenters, keyframe selection).
"""

from __future__ import annotations

import zlib
from typing import Optional, Protocol

import numpy as np
from pydantic import BaseModel, Field

from viddiff.config import LocalizerConfig
from viddiff.localizer.coarse_to_fine import coarse_to_fine_segment
from viddiff.localizer.keyframes import random_keyframes, select_keyframes
from viddiff.localizer.oracle import annotated_keyframes, nearest_positions
from viddiff.localizer.scores import first_string_scores, stage_costs, stage_scores, stage_similarities
from viddiff.localizer.segment import (
    segment_argmax,
    segment_best_window,
    segment_from_boundaries,
    segment_random,
    segment_uniform,
)
from viddiff.localizer.viterbi import stage_spans, viterbi_segment
from viddiff.schema import Keyframes, Proposal, RetrievalFrames, Segmentation, VideoKeyframes
from viddiff.video import VideoFrames

Spans = list[tuple[int, int]]
CLIP_METHODS = ("viterbi", "no_viterbi", "argmax")


class Embedder(Protocol):
    def embed_images(self, frames: np.ndarray) -> np.ndarray: ...

    def embed_texts(self, texts: list[str]) -> np.ndarray: ...


class Localization(BaseModel):
    segmentations: tuple[Segmentation, Segmentation]
    keyframes: list[Keyframes]
    notes: list[str] = Field(default_factory=list)


class Localizer:
    """Runs one configured localisation method; CLIP is only touched by the methods that need it.

    ``embedder`` may be left out for a CLIP method when every difference to localise is global
    (:func:`needs_clip`), so a describe-mode sample with only global differences never loads CLIP.
    """

    def __init__(self, cfg: LocalizerConfig, embedder: Optional[Embedder] = None):
        self.cfg = cfg
        self.embedder = embedder

    def localize(
        self,
        proposal: Proposal,
        video_a: VideoFrames,
        video_b: VideoFrames,
        *,
        retrieval: Optional[RetrievalFrames] = None,
        seed: int = 0,
        sample_key: str = "",
    ) -> Localization:
        notes: list[str] = []
        method = self.cfg.method
        if all(d.scope == "global" for d in proposal.differences):
            # Global keyframes ignore the segmentation, so skip CLIP: the uniform split is recorded instead.
            method = "uniform"
        elif method == "oracle":
            problem = None
            if retrieval is None or retrieval.stages is None:
                problem = "the sample has no ground-truth stage annotations"
            elif any(len(truth.starts) != len(proposal.stages) for truth in retrieval.stages):
                problem = f"{len(proposal.stages)} proposed stages vs {len(retrieval.stages[0].starts)} annotated"
            if problem:
                method = "viterbi" if self.embedder is not None else "uniform"
                notes.append(
                    f"oracle: no usable stage annotation ({problem}); stages segmented by {method}, which places "
                    "the keyframes of differences without keyframe annotations"
                )
        if method in CLIP_METHODS and self.embedder is None:
            raise ValueError(f"localizer.method={method} needs a CLIP embedder")
        text_embs = self._embed_stage_texts(proposal) if method in CLIP_METHODS else None
        rng = np.random.default_rng([seed, zlib.crc32(sample_key.encode())])
        spans_ab: list[Spans] = []
        for i, video in enumerate((video_a, video_b)):
            n_frames, n_stages = len(video.frame_indices), len(proposal.stages)
            if method == "viterbi" and self.cfg.coarse_to_fine.enabled:
                spans = coarse_to_fine_spans(self.embedder, video.frames, text_embs, self.cfg)
            elif method in CLIP_METHODS:
                frame_emb = self.embedder.embed_images(video.frames)
                scores = stage_scores(frame_emb, text_embs)
                if method == "viterbi":
                    path, _ = viterbi_segment(
                        stage_costs(scores, self.cfg.eps), np.log(self.cfg.stay_prob), np.log(self.cfg.advance_prob)
                    )
                    spans = stage_spans(path, n_stages)
                elif method == "no_viterbi":
                    spans = segment_best_window(first_string_scores(frame_emb, text_embs))
                else:
                    spans = segment_argmax(scores)
            elif method in ("uniform", "random"):  # random: the keyframes are drawn below, not from the spans
                spans = segment_uniform(n_frames, n_stages)
            elif method == "random_segments":
                spans = segment_random(n_frames, n_stages, rng)
            else:
                truth = retrieval.stages[i]
                spans = segment_from_boundaries(video.frame_indices, truth.starts, truth.end, n_stages)
            spans_ab.append([(int(s), int(e)) for s, e in spans])

        keyframes = []
        n_annotated = 0
        for diff in proposal.differences:
            annotated = annotated_keyframes(retrieval, diff.key) if self.cfg.method == "oracle" else None
            n_annotated += annotated is not None and diff.scope == "local"
            picked = []
            for video, spans in zip((video_a, video_b), spans_ab):
                if diff.scope == "global":
                    positions = spread_keyframes(len(video.frame_indices), self.cfg.n_frames_multi)
                    picked.append(_video_keyframes(video, positions))
                    continue
                positions = select_keyframes(
                    spans,
                    proposal.links[diff.key],
                    diff.num_frames,
                    n_frames=self.cfg.n_frames_multi,
                    fps=video.fps,
                    frame_sep_s=self.cfg.frame_sep_s,
                    n_total=len(video.frame_indices),
                )
                if annotated is not None:
                    positions = nearest_positions(video.frame_indices, annotated[len(picked)])
                elif method == "random":
                    positions = random_keyframes(
                        diff.num_frames,
                        n_frames=self.cfg.n_frames_multi,
                        fps=video.fps,
                        frame_sep_s=self.cfg.frame_sep_s,
                        n_total=len(video.frame_indices),
                        rng=rng,
                    )
                picked.append(_video_keyframes(video, positions))
            keyframes.append(Keyframes(key=diff.key, a=picked[0], b=picked[1]))
        if self.cfg.method == "oracle":
            n_local = sum(d.scope == "local" for d in proposal.differences)
            notes.append(f"oracle: {n_annotated} of {n_local} differences localised by their annotated keyframes")
        segmentations = tuple(
            Segmentation(frame_indices=[int(f) for f in video.frame_indices], spans=spans)
            for video, spans in zip((video_a, video_b), spans_ab)
        )
        return Localization(segmentations=segmentations, keyframes=keyframes, notes=notes)

    def _embed_stage_texts(self, proposal: Proposal) -> list[np.ndarray]:
        """One text-embedding call for all stages' strings, split back per stage."""
        texts = [t for stage in proposal.stages for t in stage.retrieval_strings]
        embs = self.embedder.embed_texts(texts)
        out, start = [], 0
        for stage in proposal.stages:
            out.append(embs[start : start + len(stage.retrieval_strings)])
            start += len(stage.retrieval_strings)
        return out


def needs_clip(method: str, proposal: Proposal) -> bool:
    """Whether localising ``proposal`` with ``method`` embeds anything (only local differences use stages)."""
    has_local = any(d.scope == "local" for d in proposal.differences)
    return has_local and (method in CLIP_METHODS or method == "oracle")


def spread_keyframes(n_total: int, n_frames: int) -> list[int]:
    """``n_frames`` positions spread evenly over a whole video of ``n_total`` sampled frames.

    For global differences (camera, style, background, playback...), which hold throughout the video
    rather than in one stage: the frame at (or just before) the centre of each of ``n_frames`` equal
    parts, so the VLM sees the beginning, middle and end alike. Distinct and sorted; a video with at
    most ``n_frames`` frames gives all of them.
    """
    if n_total < 1 or n_frames < 1:
        raise ValueError(f"need n_total >= 1 and n_frames >= 1, got {n_total} and {n_frames}")
    if n_total <= n_frames:
        return list(range(n_total))
    return [((2 * i + 1) * n_total) // (2 * n_frames) for i in range(n_frames)]


def _video_keyframes(video: VideoFrames, positions: list[int]) -> VideoKeyframes:
    times = video.times_s
    return VideoKeyframes(
        frame_indices=[int(video.frame_indices[p]) for p in positions],
        times_s=[round(float(times[p]), 4) for p in positions],
    )


def coarse_to_fine_spans(
    embedder: Embedder, frames: np.ndarray, text_embs: list[np.ndarray], cfg: LocalizerConfig
) -> Spans:
    """Viterbi stage spans of one video, embedding only the frames coarse-to-fine decoding asks for."""

    def similarity_at(positions: np.ndarray) -> np.ndarray:
        return stage_similarities(embedder.embed_images(frames[positions]), text_embs)

    c2f = cfg.coarse_to_fine
    result = coarse_to_fine_segment(
        len(frames),
        len(text_embs),
        similarity_at,
        coarse_stride=c2f.coarse_stride,
        refine_radius=c2f.refine_radius,
        stay_logp=np.log(cfg.stay_prob),
        advance_logp=np.log(cfg.advance_prob),
        eps=cfg.eps,
    )
    return stage_spans(result.path, len(text_embs))
