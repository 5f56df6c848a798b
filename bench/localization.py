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

Coarse-to-fine decoding (``localizer.coarse_to_fine``) is compared with
full-rate Viterbi on the same inputs: the share of keyframes identical / within
one sampled frame, and the CLIP forwards it spends (full-rate embeds every
frame). Inputs: the oracle similarities above, and real CLIP features — a
random-weight open_clip model (real architecture, meaningless but temporally
coherent scores) on the synthetic benchmark's videos, read at every source frame
and at the per-domain inference fps.

Usage: python bench/localization.py [--videos N] [--seed S] [--stride S --radius R] [--clip-model M | --no-clip]
"""

from __future__ import annotations

import argparse
import logging
import math
import tempfile
from pathlib import Path
from typing import Iterator

import numpy as np

from viddiff.config import CoarseToFineConfig, DataConfig
from viddiff.localizer.coarse_to_fine import coarse_to_fine_segment
from viddiff.localizer.keyframes import random_keyframes, select_keyframes
from viddiff.localizer.scores import normalise_scores, stage_costs, stage_similarities
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


def stage_keyframes(path: np.ndarray, n_stages: int) -> np.ndarray:
    """The ``"1"`` keyframe (middle of the span) of every stage along a decoded path."""
    spans = stage_spans(path, n_stages)
    return np.array(
        [select_keyframes(spans, [k], "1", n_frames=1, fps=1.0, frame_sep_s=1.0, n_total=path.size)[0]
         for k in range(n_stages)]
    )


class Agreement:
    """Coarse-to-fine vs full-rate keyframes on the same inputs, accumulated over videos."""

    def __init__(self, stride: int, radius: int):
        self.stride, self.radius = stride, radius
        self.keyframes = self.identical = self.within_one = 0
        self.frames = self.forwards = 0
        self.true_full = self.true_c2f = 0
        self.jitter: list[float] = []

    def add(self, raw: np.ndarray, truth: np.ndarray | None = None) -> None:
        n_stages, n_frames = raw.shape
        full_path, _ = viterbi_segment(stage_costs(normalise_scores(raw), EPS), LOG_HALF, LOG_HALF)
        c2f = coarse_to_fine_segment(
            n_frames, n_stages, lambda positions: raw[:, positions], coarse_stride=self.stride,
            refine_radius=self.radius, stay_logp=LOG_HALF, advance_logp=LOG_HALF, eps=EPS,
        )
        full_kf, c2f_kf = stage_keyframes(full_path, n_stages), stage_keyframes(c2f.path, n_stages)
        self.keyframes += n_stages
        self.identical += int(np.sum(full_kf == c2f_kf))
        self.within_one += int(np.sum(np.abs(full_kf - c2f_kf) <= 1))
        self.frames += n_frames
        self.forwards += c2f.embedded.size
        self.jitter.append(jitter(raw))
        if truth is not None:
            self.true_full += int(np.sum(truth[full_kf] == np.arange(n_stages)))
            self.true_c2f += int(np.sum(truth[c2f_kf] == np.arange(n_stages)))

    def row(self, label: str) -> str:
        return (
            f"{label:>14} {self.identical / self.keyframes:>9.1%} {self.within_one / self.keyframes:>9.1%} "
            f"{self.forwards:>7}/{self.frames:<7} {self.frames / self.forwards:>6.2f}x {np.median(self.jitter):>7.2f}"
        )


AGREEMENT_HEADER = f"{'input':>14} {'identical':>9} {'within 1':>9} {'forwards/frames':>15} {'saved':>7} {'jitter':>7}"


def jitter(raw: np.ndarray) -> float:
    """1 − lag-1 autocorrelation of the scores, averaged over stages: 0 for scores that change slowly
    over time, 1 for independent per-frame noise. Coarse-to-fine interpolates between embedded frames,
    so it follows slow changes and misses frame-to-frame noise."""
    centred = raw - raw.mean(axis=1, keepdims=True)
    var = (centred**2).mean(axis=1)
    lag1 = (centred[:, 1:] * centred[:, :-1]).mean(axis=1)
    return float(np.mean(1.0 - lag1 / np.where(var > 0, var, 1.0)))


def oracle_agreement(layouts: list[np.ndarray], rng: np.random.Generator, stride: int, radius: int) -> None:
    print(f"\ncoarse-to-fine (stride {stride}, radius {radius}) vs full-rate Viterbi, oracle similarity + noise")
    print(f"{AGREEMENT_HEADER} {'in true stage: full':>20} {'c2f':>6}")
    for std in NOISE_STDS:
        agreement = Agreement(stride, radius)
        for truth in layouts:
            onehot = (np.arange(N_STAGES)[:, None] == truth[None, :]).astype(float)
            agreement.add(onehot + rng.normal(0.0, std, onehot.shape), truth)
        total = agreement.keyframes
        print(f"{agreement.row(f'noise {std:.2f}')} {agreement.true_full / total:>20.1%} {agreement.true_c2f / total:>6.1%}")


def synthetic_similarities(model: str, pairs: int) -> Iterator[tuple[str, np.ndarray]]:
    """(fps label, raw K × T similarities) per synthetic video, from a random-weight CLIP model."""
    from viddiff.backends.clip import ClipEmbedder
    from viddiff.config import ClipConfig
    from viddiff.data.synth_actions import ACTIONS
    from viddiff.data.synthetic import write_synthetic_benchmark
    from viddiff.data.viddiffbench import load_dataset
    from viddiff.video import read_video_ref

    logging.getLogger("viddiff.backends.clip").setLevel(logging.ERROR)
    embedder = ClipEmbedder(ClipConfig(model=model, pretrained=None, device="cpu"))
    stages_of = {spec.action: spec.stages for spec in ACTIONS}
    with tempfile.TemporaryDirectory() as tmp:
        data = DataConfig(dataset=str(write_synthetic_benchmark(Path(tmp), pairs=pairs, seed=0)))
        for sample in load_dataset(data):
            stages = stages_of[sample.action]
            text_embs = [
                embedder.embed_texts([f"A photo of a person at the {name} stage of a {sample.action_name}",
                                      f"A photo of the {name} of a {sample.action_name}",
                                      f"A person during the {name}"])
                for name in stages
            ]
            for ref in sample.videos:
                video = read_video_ref(ref, None)  # every source frame; embeddings are cached per frame
                raw_all = stage_similarities(embedder.embed_images(video.frames), text_embs)
                yield "source fps", raw_all
                positions = np.arange(0, video.frames.shape[0], round(video.fps_original / data.fps_for(sample.domain)))
                yield "domain fps", raw_all[:, positions]


def clip_agreement(model: str, pairs: int, stride: int, radius: int) -> None:
    print(f"\ncoarse-to-fine (stride {stride}, radius {radius}) vs full-rate Viterbi, "
          f"{model} random-weight CLIP features on {pairs} synthetic pairs")
    print(AGREEMENT_HEADER)
    rows: dict[str, Agreement] = {}
    for label, raw in synthetic_similarities(model, pairs):
        rows.setdefault(label, Agreement(stride, radius)).add(raw)
    for label, agreement in rows.items():
        print(agreement.row(label))


def main() -> None:
    defaults = CoarseToFineConfig()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--videos", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stride", type=int, default=defaults.coarse_stride, help="coarse_to_fine.coarse_stride")
    parser.add_argument("--radius", type=int, default=defaults.refine_radius, help="coarse_to_fine.refine_radius")
    parser.add_argument("--clip-model", default="ViT-B-32", help="open_clip architecture (random weights)")
    parser.add_argument("--pairs", type=int, default=12, help="synthetic pairs for the CLIP-feature comparison")
    parser.add_argument("--no-clip", action="store_true", help="skip the CLIP-feature comparison")
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
    oracle_agreement(layouts, rng, args.stride, args.radius)
    if not args.no_clip:
        clip_agreement(args.clip_model, args.pairs, args.stride, args.radius)


if __name__ == "__main__":
    main()
