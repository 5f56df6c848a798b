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
pure algorithms (scores, segmenters, keyframe selection). The frames a
segmenter asks for first do not depend on the stage texts
(``Segmenter.first_frames``), so :meth:`Localizer.embed_first` can embed them
while the proposal is still awaited; :meth:`Localizer.localize` then serves
that request from them, making exactly the embedding requests it would
otherwise make, in the same order for each video.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Optional, Protocol

import numpy as np
from pydantic import BaseModel, Field

from viddiff.config import LocalizerConfig
from viddiff.localizer.keyframes import random_keyframes, select_keyframes
from viddiff.localizer.oracle import annotated_keyframes, nearest_positions
from viddiff.localizer.scores import first_string_scores, stage_scores, stage_similarities
from viddiff.localizer.segmenters import SegmentInput, Segmenter, Spans, get_segmenter
from viddiff.schema import (
    Difference, Keyframes, Proposal, RetrievalFrames, Segmentation, Stage, StageBoundaries, VideoKeyframes,
)
from viddiff.video import VideoFrames


class Embedder(Protocol):
    def embed_images(self, frames: np.ndarray) -> np.ndarray: ...

    def embed_texts(self, texts: list[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class FrameEmbeddings:
    """One video's embeddings of the frames its segmenter asks for first, computed before the stage texts."""

    positions: np.ndarray
    """Sorted positions among the video's sampled frames."""
    embeddings: np.ndarray
    """(len(positions), D), as ``embed_images`` returned them."""


FirstEmbeddings = tuple[Optional[FrameEmbeddings], Optional[FrameEmbeddings]]
"""Per video (A, B): the embeddings :meth:`Localizer.embed_first` computed, if any."""


@dataclass(frozen=True)
class Segmented:
    """Both videos split into the stages: what :meth:`Localizer.pick_keyframes` needs besides the links."""

    stages: list[Stage]
    differences: list[Difference]
    """What it was made for (the effective method depends on the differences' scopes)."""
    spans: tuple[Spans, Spans]
    segmenter: Segmenter
    """The segmenter that ran (the configured one, or its fallback)."""
    rng: np.random.Generator
    """The sample's generator as the segmenter left it; random keyframes continue from it."""
    notes: list[str]

    def plans(self, proposal: Proposal) -> bool:
        """Whether this segmentation was made for ``proposal``'s stages and differences."""
        return self.stages == proposal.stages and self.differences == proposal.differences


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
        first: Optional[FirstEmbeddings] = None,
    ) -> Localization:
        """:meth:`segment` then :meth:`pick_keyframes`. ``first``: what :meth:`embed_first` computed for these
        videos; the segmenter's matching requests use it."""
        segmented = self.segment(
            proposal.stages, proposal.differences, video_a, video_b,
            retrieval=retrieval, seed=seed, sample_key=sample_key, first=first,
        )
        return self.pick_keyframes(proposal, segmented, video_a, video_b, retrieval=retrieval)

    def segment(
        self,
        stages: list[Stage],
        differences: list[Difference],
        video_a: VideoFrames,
        video_b: VideoFrames,
        *,
        retrieval: Optional[RetrievalFrames] = None,
        seed: int = 0,
        sample_key: str = "",
        first: Optional[FirstEmbeddings] = None,
    ) -> Segmented:
        """Both videos' stage spans: all of localisation that needs the stages but not the links, so it can
        run while the proposer is still linking differences to stages."""
        notes: list[str] = []
        first = first or (None, None)
        method = self._effective_method(differences, len(stages), retrieval, notes)
        segmenter = get_segmenter(method)
        if segmenter.needs_clip and self.embedder is None:
            raise ValueError(f"localizer.method={method} needs a CLIP embedder")
        text_embs = self._embed_stage_texts(stages) if segmenter.needs_clip else None
        rng = np.random.default_rng([seed, zlib.crc32(sample_key.encode())])
        spans_ab: list[Spans] = []
        for i, video in enumerate((video_a, video_b)):
            truth = retrieval.stages[i] if retrieval is not None and retrieval.stages is not None else None
            spans = segmenter.segment(self._segment_input(video, len(stages), text_embs, rng, truth, first[i]))
            spans_ab.append([(int(s), int(e)) for s, e in spans])
        return Segmented(
            stages=list(stages), differences=list(differences), spans=(spans_ab[0], spans_ab[1]),
            segmenter=segmenter, rng=rng, notes=notes,
        )

    def pick_keyframes(
        self,
        proposal: Proposal,
        segmented: Segmented,
        video_a: VideoFrames,
        video_b: VideoFrames,
        *,
        retrieval: Optional[RetrievalFrames] = None,
    ) -> Localization:
        """Keyframes of every difference from its linked stages' spans (``segmented`` must be of this proposal)."""
        if not segmented.plans(proposal):
            raise ValueError("the segmentation was made for other stages or differences than the proposal's")
        notes = list(segmented.notes)
        configured = get_segmenter(self.cfg.method)
        keyframes = []
        n_annotated = 0
        for diff in proposal.differences:
            annotated = annotated_keyframes(retrieval, diff.key) if configured.annotated_keyframes else None
            n_annotated += annotated is not None and diff.scope == "local"
            picked = []
            for video, spans in zip((video_a, video_b), segmented.spans):
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
                elif segmented.segmenter.random_keyframes:
                    positions = random_keyframes(
                        diff.num_frames,
                        n_frames=self.cfg.n_frames_multi,
                        fps=video.fps,
                        frame_sep_s=self.cfg.frame_sep_s,
                        n_total=len(video.frame_indices),
                        rng=segmented.rng,
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
            for video, spans in zip((video_a, video_b), segmented.spans)
        )
        return Localization(segmentations=segmentations, keyframes=keyframes, notes=notes)

    def _effective_method(
        self, differences: list[Difference], n_stages: int, retrieval: Optional[RetrievalFrames], notes: list[str]
    ) -> str:
        """The configured method, or what replaces it: a uniform split when every difference is global (their
        keyframes ignore the segmentation, so CLIP is skipped), Viterbi (or uniform without CLIP) when a
        method needing stage annotations gets a sample without usable ones."""
        method = self.cfg.method
        if all(d.scope == "global" for d in differences):
            return "uniform"
        if not get_segmenter(method).needs_stage_annotations:
            return method
        problem = None
        if retrieval is None or retrieval.stages is None:
            problem = "the sample has no ground-truth stage annotations"
        elif any(len(truth.starts) != n_stages for truth in retrieval.stages):
            problem = f"{n_stages} proposed stages vs {len(retrieval.stages[0].starts)} annotated"
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
        first: Optional[FrameEmbeddings],
    ) -> SegmentInput:
        """The segmenter's view of one video; CLIP inputs are computed on demand (and the frames embedded once)."""
        embedded: dict[str, np.ndarray] = {}

        def embed_at(positions: np.ndarray) -> np.ndarray:
            if first is not None and np.array_equal(positions, first.positions):
                return first.embeddings
            return self.embedder.embed_images(_frames_at(video, positions))

        def frame_embeddings() -> np.ndarray:
            if "all" not in embedded:
                embedded["all"] = embed_at(np.arange(len(video.frame_indices)))
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
            similarities_at=lambda positions: stage_similarities(embed_at(positions), text_embs),
            stage_starts=(truth.starts, truth.end) if truth is not None else None,
            score_floor=self.cfg.score_floor,
            viterbi_ties=self.cfg.viterbi_ties,
            no_viterbi_window=self.cfg.no_viterbi_window,
        )

    def first_frames(self, n_frames: int, max_stages: int) -> Optional[np.ndarray]:
        """Positions of a video's frames that the configured segmenter embeds first whatever the stage texts
        (``None``: none, or not known before the proposal)."""
        first_frames = get_segmenter(self.cfg.method).first_frames
        if first_frames is None:
            return None
        c2f = self.cfg.coarse_to_fine
        return first_frames(n_frames, c2f.coarse_stride if c2f.enabled else None, max_stages)

    def embed_first(self, video: VideoFrames, max_stages: int) -> Optional[FrameEmbeddings]:
        """Embed what the segmenter will ask for first (the same request it would make), before the proposal.

        The caller must know that the sample has a local difference (else no segmenter runs) and that the
        proposal will have at most ``max_stages`` stages.
        """
        positions = self.first_frames(len(video.frame_indices), max_stages)
        if positions is None or self.embedder is None:
            return None
        return FrameEmbeddings(positions, self.embedder.embed_images(_frames_at(video, positions)))

    def _embed_stage_texts(self, stages: list[Stage]) -> list[np.ndarray]:
        """One text-embedding call for all stages' strings, split back per stage."""
        texts = [t for stage in stages for t in stage.retrieval_strings]
        embs = self.embedder.embed_texts(texts)
        out, start = [], 0
        for stage in stages:
            out.append(embs[start : start + len(stage.retrieval_strings)])
            start += len(stage.retrieval_strings)
        return out


def needs_clip(method: str, differences: list[Difference]) -> bool:
    """Whether localising ``differences`` with ``method`` embeds anything (only local differences use stages)."""
    has_local = any(d.scope == "local" for d in differences)
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


def _frames_at(video: VideoFrames, positions: np.ndarray) -> np.ndarray:
    """The sampled frames at ``positions``; all of them without a copy."""
    if positions.size == len(video.frames) and np.array_equal(positions, np.arange(len(video.frames))):
        return video.frames
    return video.frames[positions]


def _video_keyframes(video: VideoFrames, positions: list[int]) -> VideoKeyframes:
    times = video.times_s
    return VideoKeyframes(
        frame_indices=[int(video.frame_indices[p]) for p in positions],
        times_s=[round(float(times[p]), 4) for p in positions],
    )

