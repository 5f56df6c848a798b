"""CLIP text embeddings with and without the padding run through the text tower (``viddiff.backends.clip_text``).

A proposal's stages bring about 15 retrieval strings (5 stages x 3 strings, 10–20 tokens each). Each model
(random weights of the real architecture: the cost depends on the architecture only) embeds them through
``model.encode_text`` (every string padded to 77 tokens, as open_clip and the release do) and through the cut
batch, interleaved; printed are the median seconds, their ratio, and the largest difference between the two
normalised embeddings.

Usage: python bench/clip_text.py [--models ViT-B-32 ViT-L-14-quickgelu] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import open_clip
import torch
import torch.nn.functional as F

from viddiff.backends.clip_text import encode_text, needed_length

STAGES = ["standing at the top", "descending with bent knees", "at the bottom of the squat", "rising up", "standing again"]
STRINGS = [f"A photo of a person {stage}{extra}" for stage in STAGES for extra in ("", " in a gym", ", seen from the side")]


def timed(fn, tokens: torch.Tensor) -> tuple[float, torch.Tensor]:
    start = time.perf_counter()
    with torch.inference_mode():
        out = fn(tokens)
    return time.perf_counter() - start, F.normalize(out.float(), dim=-1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["ViT-B-32", "ViT-L-14-quickgelu"])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"{len(STRINGS)} strings, CPU, {torch.get_num_threads()} threads, medians of {args.repeats}")
    print(f"{'model':<20} {'tokens run':>10} {'padded':>9} {'cut':>9} {'cut/padded':>11} {'max |diff|':>11}")
    for name in args.models:
        model = open_clip.create_model(name, pretrained=None).eval()
        tokens = open_clip.get_tokenizer(name)(STRINGS)
        timed(model.encode_text, tokens)  # warm-up
        padded, cut, diff = [], [], 0.0
        for _ in range(args.repeats):
            seconds, full = timed(model.encode_text, tokens)
            padded.append(seconds)
            seconds, short = timed(lambda t: encode_text(model, t), tokens)
            cut.append(seconds)
            diff = max(diff, float((full - short).abs().max()))
        p, c = statistics.median(padded), statistics.median(cut)
        print(f"{name:<20} {needed_length(model, tokens):>4} of {tokens.shape[1]:<3} {p:>8.3f}s {c:>8.3f}s {c / p:>10.2f}x {diff:>11.1e}")


if __name__ == "__main__":
    main()
