"""Stage 2 of VidDiff: align the two videos by sub-action stage and pick keyframes.

Local differences (the default) get keyframes from their linked stages.
Global differences (``Difference.scope == "global"``: camera, style,
background, playback...) hold over the whole video, so their keyframes are
spread evenly over it and their stage links are not looked at.

How the stages are found is ``localizer.method``, a name in the segmenter table
(``viddiff.localizer.segmenters``): ``viterbi`` is the method, the others are
the paper's and this project's ablations.

This module is the I/O-facing glue: it embeds frames and retrieval strings
with CLIP (only as far as the segmenter asks) and hands plain arrays to the
pure algorithms (scores, segmenters, keyframe selection).
"""

from __future__ import annotations

import zlib
from typing import Optional, Protocol

import numpy as np
from pydantic import BaseModel, Field

from viddiff.config import LocalizerConfig
from viddiff.localizer.keyframes import random_keyframes, select_keyframes
from viddiff.localizer.oracle import annotated_keyframes, nearest_positions
from viddiff.localizer.scores import first_string_scores, stage_scores, stage_similarities
from viddiff.localizer.segmenters import SegmentInput, Spans, get_segmenter
from viddiff.schema import Keyframes, Proposal, RetrievalFrames, Segmentation, StageBoundaries, VideoKeyframes
from viddiff.video import VideoFrames


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
        method = self._effective_method(proposal, retrieval, notes)
        segmenter = get_segmenter(method)
        if segmenter.needs_clip and self.embedder is None:
            raise ValueError(f"localizer.method={method} needs a CLIP embedder")
        text_embs = self._embed_stage_texts(proposal) if segmenter.needs_clip else None
        rng = np.random.default_rng([seed, zlib.crc32(sample_key.encode())])
        spans_ab: list[Spans] = []
        for i, video in enumerate((video_a, video_b)):
            truth = retrieval.stages[i] if retrieval is not None and retrieval.stages is not None else None
            spans = segmenter.segment(self._segment_input(video, len(proposal.stages), text_embs, rng, truth))
            spans_ab.append([(int(s), int(e)) for s, e in spans])

        configured = get_segmenter(self.cfg.method)
        keyframes = []
        n_annotated = 0
        for diff in proposal.differences:
            annotated = annotated_keyframes(retrieval, diff.key) if configured.annotated_keyframes else None
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
                    step_rule=self.cfg.burst_step,
                )
                if annotated is not None:
                    positions = nearest_positions(video.frame_indices, annotated[len(picked)])
                elif segmenter.random_keyframes:
                    positions = random_keyframes(
                        diff.num_frames,
                        n_frames=self.cfg.n_frames_multi,
                        fps=video.fps,
                        frame_sep_s=self.cfg.frame_sep_s,
                        n_total=len(video.frame_indices),
                        rng=rng,
                        step_rule=self.cfg.burst_step,
                    )
                picked.append(_video_keyframes(video, positions))
            keyframes.append(Keyframes(key=diff.key, a=picked[0], b=picked[1]))
        if configured.annotated_keyframes:
            n_local = sum(d.scope == "local" for d in proposal.differences)
            notes.append(
                f"{self.cfg.method}: {n_annotated} of {n_local} differences localised by their annotated keyframes"
            )
        segmentations = tuple(
            Segmentation(frame_indices=[int(f) for f in video.frame_indices], spans=spans)
            for video, spans in zip((video_a, video_b), spans_ab)
        )
        return Localization(segmentations=segmentations, keyframes=keyframes, notes=notes)

    def _effective_method(self, proposal: Proposal, retrieval: Optional[RetrievalFrames], notes: list[str]) -> str:
        """The configured method, or what replaces it: a uniform split when every difference is global (their
        keyframes ignore the segmentation, so CLIP is skipped), Viterbi (or uniform without CLIP) when a
        method needing stage annotations gets a sample without usable ones."""
        method = self.cfg.method
        if all(d.scope == "global" for d in proposal.differences):
            return "uniform"
        if not get_segmenter(method).needs_stage_annotations:
            return method
        problem = None
        if retrieval is None or retrieval.stages is None:
            problem = "the sample has no ground-truth stage annotations"
        elif any(len(truth.starts) != len(proposal.stages) for truth in retrieval.stages):
            problem = f"{len(proposal.stages)} proposed stages vs {len(retrieval.stages[0].starts)} annotated"
        if problem is None:
            return method
        fallback = "viterbi" if self.embedder is not None else "uniform"
        notes.append(
            f"{method}: no usable stage annotation ({problem}); stages segmented by {fallback}, which places "
            "the keyframes of differences without keyframe annotations"
        )
        return fallback

    def _segment_input(
        self,
        video: VideoFrames,
        n_stages: int,
        text_embs: Optional[list[np.ndarray]],
        rng: np.random.Generator,
        truth: Optional[StageBoundaries],
    ) -> SegmentInput:
        """The segmenter's view of one video; CLIP inputs are computed on demand (and the frames embedded once)."""
        embedded: dict[str, np.ndarray] = {}

        def frame_embeddings() -> np.ndarray:
            if "all" not in embedded:
                embedded["all"] = self.embedder.embed_images(video.frames)
            return embedded["all"]

        c2f = self.cfg.coarse_to_fine
        return SegmentInput(
            n_frames=len(video.frame_indices),
            n_stages=n_stages,
            frame_indices=np.asarray(video.frame_indices),
            rng=rng,
            stay_logp=float(np.log(self.cfg.stay_prob)),
            advance_logp=float(np.log(self.cfg.advance_prob)),
            eps=self.cfg.eps,
            coarse_stride=c2f.coarse_stride if c2f.enabled else None,
            refine_radius=c2f.refine_radius,
            scores=lambda: stage_scores(frame_embeddings(), text_embs),
            first_string_scores=lambda: first_string_scores(frame_embeddings(), text_embs),
            similarities_at=lambda positions: stage_similarities(
                self.embedder.embed_images(video.frames[positions]), text_embs
            ),
            stage_starts=(truth.starts, truth.end) if truth is not None else None,
            score_floor=self.cfg.score_floor,
            viterbi_ties=self.cfg.viterbi_ties,
            no_viterbi_window=self.cfg.no_viterbi_window,
        )

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
    segmenter = get_segmenter(method)
    return has_local and (segmenter.needs_clip or segmenter.needs_stage_annotations)


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

