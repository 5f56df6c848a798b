"""Localisation accuracy of each segmenter with oracle similarities.

Scores are the ground-truth stage indicators (K × T one-hot of each frame's true
stage) plus Gaussian noise of increasing std, min–max normalised per stage as
``stage_scores`` does. For every (video, stage) the ``"1"`` keyframe rule picks
the middle of the stage span a method found (the paper's ``random`` ablation
draws the keyframe uniformly instead); we report the fraction of those
keyframes inside the correct ground-truth stage. Here each stage has one score
row, so ``no_viterbi`` (the paper's, which uses the first retrieval string)
sees the same scores as the others. Stage layouts are generated
(random stage lengths), seeded, so the bench is self-contained.

Usage: python bench/localization.py [--videos N] [--seed S]
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from viddiff.localizer.keyframes import random_keyframes, select_keyframes
from viddiff.localizer.scores import normalise_scores, stage_costs
from viddiff.localizer.segment import segment_argmax, segment_best_window, segment_random, segment_uniform
from viddiff.localizer.viterbi import stage_spans, viterbi_segment

NOISE_STDS = (0.0, 0.1, 0.25, 0.5, 1.0)
METHODS = ("viterbi", "no_viterbi", "random", "argmax", "uniform", "random_segments")
N_STAGES = 5
EPS = 1e-6
LOG_HALF = math.log(0.5)


def random_layout(rng: np.random.Generator) -> np.ndarray:
    """True stage of each frame: 5 stages, 20–200 frames, stage lengths from a Dirichlet, each ≥ 2 frames."""
    n_frames = int(rng.integers(20, 201))
    spare = n_frames - 2 * N_STAGES
    lengths = 2 + np.floor(rng.dirichlet(np.ones(N_STAGES)) * spare).astype(int)
    lengths[-1] += n_frames - lengths.sum()
    return np.repeat(np.arange(N_STAGES), lengths)


def find_spans(method: str, scores: np.ndarray, rng: np.random.Generator) -> list[tuple[int, int]]:
    n_frames = scores.shape[1]
    if method == "viterbi":
        path, _ = viterbi_segment(stage_costs(scores, EPS), LOG_HALF, LOG_HALF)
        return stage_spans(path, N_STAGES)
    if method == "no_viterbi":
        return segment_best_window(scores)
    if method == "argmax":
        return segment_argmax(scores)
    if method in ("uniform", "random"):  # random: the keyframe is drawn, the spans are unused
        return segment_uniform(n_frames, N_STAGES)
    return segment_random(n_frames, N_STAGES, rng)


def keyframe(method: str, spans: list[tuple[int, int]], stage: int, n_total: int, rng: np.random.Generator) -> int:
    if method == "random":
        [frame] = random_keyframes("1", n_frames=1, fps=1.0, frame_sep_s=1.0, n_total=n_total, rng=rng)
        return frame
    [frame] = select_keyframes(spans, [stage], "1", n_frames=1, fps=1.0, frame_sep_s=1.0, n_total=n_total)
    return frame


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--videos", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    layouts = [random_layout(rng) for _ in range(args.videos)]
    print(f"{args.videos} videos x {N_STAGES} stages; keyframe inside the true stage (rule '1')")
    print(f"{'noise std':>9} " + " ".join(f"{m:>15}" for m in METHODS))
    for std in NOISE_STDS:
        hits = dict.fromkeys(METHODS, 0)
        for truth in layouts:
            onehot = (np.arange(N_STAGES)[:, None] == truth[None, :]).astype(float)
            scores = normalise_scores(onehot + rng.normal(0.0, std, onehot.shape))
            for method in METHODS:
                spans = find_spans(method, scores, rng)
                for k in range(N_STAGES):
                    hits[method] += int(truth[keyframe(method, spans, k, truth.size, rng)] == k)
        total = len(layouts) * N_STAGES
        print(f"{std:>9.2f} " + " ".join(f"{hits[m] / total:>15.1%}" for m in METHODS))


if __name__ == "__main__":
    main()
