"""CLIP image embeddings on CPU: int8 (dynamic quantisation of the image tower) vs fp32, same frames.

Random weights of real architectures (``pretrained: null``): speed depends on the
architecture only; the cosine similarity between int8 and fp32 embeddings shows
the quantisation error for these weights (trained weights have larger outlier
activations and may lose more — measure on your checkpoint with ``--checkpoint``).
Each timing is the best of ``--repeats`` uncached passes over the same frames.

    python bench/clip_precision.py [--models ViT-B-32 ViT-L-14] [--frames 16] [--batch-size 8] [--repeats 3]
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path
from typing import Optional

import numpy as np
import torch

from viddiff.backends.clip import ClipEmbedder
from viddiff.config import ClipConfig


def synthetic_frames(n: int) -> np.ndarray:
    """Frames of the synthetic benchmark's stick-figure videos (what the offline pipeline embeds)."""
    from viddiff.data.synthetic import write_synthetic_benchmark
    from viddiff.data.viddiffbench import load_dataset
    from viddiff.config import DataConfig
    from viddiff.video import read_video_ref

    with tempfile.TemporaryDirectory() as tmp:
        data = DataConfig(dataset=str(write_synthetic_benchmark(Path(tmp), pairs=2, seed=0)))
        frames = [f for sample in load_dataset(data) for ref in sample.videos for f in read_video_ref(ref, None).frames]
    picks = np.linspace(0, len(frames) - 1, n).round().astype(int)
    return np.stack([frames[i] for i in picks])


def best_seconds_per_frame(embedder: ClipEmbedder, frames: np.ndarray, repeats: int) -> tuple[float, np.ndarray]:
    embedder.embed_images(frames[:1] ^ 1)  # load the model and warm up outside the timing
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = embedder.embed_images(frames)
        best = min(best, time.perf_counter() - start)
    return best / len(frames), out


def measure(model: str, frames: np.ndarray, batch_size: int, repeats: int, checkpoint: Optional[str]) -> str:
    results = {}
    for precision in ("fp32", "int8"):
        cfg = ClipConfig(
            model=model, pretrained=None, checkpoint=checkpoint, device="cpu", batch_size=batch_size, precision=precision
        )
        results[precision] = best_seconds_per_frame(ClipEmbedder(cfg), frames, repeats)
    (fp32_s, fp32), (int8_s, int8) = results["fp32"], results["int8"]
    cosine = np.sum(fp32 * int8, axis=1)
    return (
        f"{model:<14} {torch.get_num_threads():>7} {fp32_s:>9.3f} {int8_s:>9.3f} {fp32_s / int8_s:>7.2f}x "
        f"{cosine.min():>10.4f} {cosine.mean():>8.4f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["ViT-B-32", "ViT-L-14"])
    parser.add_argument("--frames", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--checkpoint", help="weights file for a single --models entry (default: random weights)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    frames = synthetic_frames(args.frames)
    print(f"{args.frames} frames {frames.shape[2]}x{frames.shape[1]}, batch {args.batch_size}, best of {args.repeats}")
    print(f"{'model':<14} {'threads':>7} {'fp32 s/f':>9} {'int8 s/f':>9} {'speed':>8} {'cos min':>10} {'cos mean':>8}")
    for model in args.models:
        print(measure(model, frames, args.batch_size, args.repeats, args.checkpoint), flush=True)


if __name__ == "__main__":
    main()
