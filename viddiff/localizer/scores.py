"""Per-stage frame scores from CLIP embeddings, and their Viterbi costs.

A stage is described by several retrieval strings; its score for a frame is the
mean text–frame similarity over those strings. Raw CLIP similarities live in a
narrow, model-dependent band, so each stage's scores are min–max normalised
over time: what matters is *when* in the video a stage looks most likely, not
the absolute similarity.
"""

from __future__ import annotations

from typing import Literal, Sequence

import numpy as np

ScoreFloor = Literal["add", "replace_zeros"]

CONSTANT_RANGE = 1e-12
"""A stage whose scores vary less than this over time (rounding noise of cosine
similarities) carries no timing information and is scored 0.5 everywhere."""


def stage_scores(frame_emb: np.ndarray, stage_text_embs: Sequence[np.ndarray]) -> np.ndarray:
    """(K, T) normalised scores of T frames for K stages.

    ``frame_emb`` is (T, D) and ``stage_text_embs[k]`` is (S_k, D), both
    L2-normalised so dot products are cosine similarities.
    """
    return normalise_scores(stage_similarities(frame_emb, stage_text_embs))


def stage_similarities(frame_emb: np.ndarray, stage_text_embs: Sequence[np.ndarray]) -> np.ndarray:
    """(K, T) raw scores before normalisation: per stage, the mean cosine similarity over its strings."""
    frames = np.asarray(frame_emb, dtype=np.float64)
    if frames.ndim != 2 or 0 in frames.shape:
        raise ValueError(f"frame_emb must be a non-empty (frames, dim) array, got shape {frames.shape}")
    if len(stage_text_embs) == 0:
        raise ValueError("stage_text_embs is empty: at least one stage is needed")
    raw = np.empty((len(stage_text_embs), frames.shape[0]))
    for k, text in enumerate(stage_text_embs):
        text = np.asarray(text, dtype=np.float64)
        if text.ndim != 2 or text.shape[0] == 0 or text.shape[1] != frames.shape[1]:
            raise ValueError(
                f"stage_text_embs[{k}] must be a (strings, {frames.shape[1]}) array with at least one string, "
                f"got shape {text.shape}"
            )
        raw[k] = (text @ frames.T).mean(axis=0)
    return raw


def first_string_scores(frame_emb: np.ndarray, stage_text_embs: Sequence[np.ndarray]) -> np.ndarray:
    """(K, T) normalised scores from each stage's *first* retrieval string only.

    The input of the paper's *no Viterbi* ablation, which the authors' release scores with the first
    string of each stage rather than the mean over all of them.
    """
    return stage_scores(frame_emb, [np.asarray(text)[:1] for text in stage_text_embs])


def normalise_scores(raw: np.ndarray) -> np.ndarray:
    """Min–max normalise each row of a (K, T) array to [0, 1]; constant rows become 0.5."""
    raw = np.asarray(raw, dtype=np.float64)
    if raw.ndim != 2 or 0 in raw.shape:
        raise ValueError(f"scores must be a non-empty (stages, frames) array, got shape {raw.shape}")
    if not np.all(np.isfinite(raw)):
        raise ValueError("scores contain NaN or infinite values; check the embeddings")
    low = raw.min(axis=1, keepdims=True)
    span = raw.max(axis=1, keepdims=True) - low
    flat = span <= CONSTANT_RANGE
    scaled = (raw - low) / np.where(flat, 1.0, span)
    return np.where(flat, 0.5, np.clip(scaled, 0.0, 1.0))


def stage_costs(scores: np.ndarray, eps: float, floor: ScoreFloor = "add") -> np.ndarray:
    """Viterbi emission costs of normalised ``scores``; ``eps`` keeps a zero score finite.

    ``floor="add"``: ``-log(scores + eps)``. ``"replace_zeros"`` (the authors' release): ``-log(scores)``
    with zero scores replaced by ``eps``; a stage constant over time (0.5 from :func:`normalise_scores`) is
    scored 0 there, so it costs ``-log(eps)`` on every frame. The two differ by ``log(1 + eps / s)`` for a
    score ``s > 0``: about 0.001 at ``s = 0.01``, ``log 2`` at ``s = eps``.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if not eps > 0:
        raise ValueError(f"eps must be positive, got {eps}")
    if not np.all(np.isfinite(scores)) or np.any(scores < 0):
        raise ValueError("scores must be finite and non-negative (normalise them first)")
    if floor == "add":
        return -np.log(scores + eps)
    if floor != "replace_zeros":
        raise ValueError(f"floor must be 'add' or 'replace_zeros', got {floor!r}")
    constant = np.ptp(scores, axis=-1, keepdims=True) <= CONSTANT_RANGE
    floored = np.where(constant | (scores == 0), eps, scores)
    return -np.log(floored)
