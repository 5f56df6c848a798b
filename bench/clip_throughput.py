"""CLIP frame-embedding throughput: batch sizes, and a second pass served by the cache.

Runs offline with random weights (``pretrained: null``), so only speed is
meaningful. Every number is a ratio against a baseline measured in this run:
batch size B vs batch size 1, and the cached second pass vs the first pass.

    python bench/clip_throughput.py [--model ViT-S-32-alt] [--frames 64] [--device cpu] [--repeats 3]
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path

import numpy as np

from viddiff.backends.clip import ClipEmbedder
from viddiff.cache import Cache
from viddiff.config import ClipConfig


def _frames(n: int, height: int, width: int) -> np.ndarray:
    return np.random.default_rng(0).integers(0, 256, size=(n, height, width, 3), dtype=np.uint8)


def _timed_pass(embedder: ClipEmbedder, frames: np.ndarray) -> tuple[float, int]:
    """Seconds for one ``embed_images`` call and the frames it ran through the model."""
    before = embedder.stats.image_forward
    start = time.perf_counter()
    embedder.embed_images(frames)
    return time.perf_counter() - start, embedder.stats.image_forward - before


def _best_fps(embedder: ClipEmbedder, frames: np.ndarray, repeats: int) -> float:
    """Best of ``repeats`` uncached passes: the least disturbed by other load on the machine."""
    return max(forwarded / seconds for seconds, forwarded in (_timed_pass(embedder, frames) for _ in range(repeats)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="ViT-S-32-alt")
    parser.add_argument("--frames", type=int, default=64)
    parser.add_argument("--height", type=int, default=360)
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 4, 16, 32])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)

    frames = _frames(args.frames, args.height, args.width)
    warmup = _frames(1, args.height, args.width) ^ 1
    print(f"model {args.model} (random weights), {args.frames} frames {args.height}x{args.width}, device {args.device}")

    print(f"{'batch':>6} {'frames/s':>10} {'vs batch 1':>11}")
    baseline_fps = None
    for batch_size in args.batch_sizes:
        cfg = ClipConfig(model=args.model, pretrained=None, device=args.device, batch_size=batch_size)
        embedder = ClipEmbedder(cfg)
        embedder.embed_images(warmup)  # model load and first-call overhead stay out of the timing
        fps = _best_fps(embedder, frames, args.repeats)
        baseline_fps = baseline_fps or fps
        print(f"{batch_size:>6} {fps:>10.1f} {fps / baseline_fps:>10.2f}x")

    with tempfile.TemporaryDirectory() as tmp, Cache(Path(tmp) / "bench.sqlite") as cache:
        cfg = ClipConfig(model=args.model, pretrained=None, device=args.device, batch_size=max(args.batch_sizes))
        embedder = ClipEmbedder(cfg, cache)
        embedder.embed_images(warmup)
        first_s, first_forward = _timed_pass(embedder, frames)
        second_s, second_forward = _timed_pass(ClipEmbedder(cfg, cache), frames)
    print(
        f"cache: first pass {first_s:.3f} s ({first_forward} forwards), "
        f"second pass with a new embedder {second_s:.3f} s ({second_forward} forwards), "
        f"{first_s / second_s:.1f}x faster"
    )


if __name__ == "__main__":
    main()
