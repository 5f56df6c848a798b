"""Time per frame of CLIP's resize and crop done as open_clip's transforms do them (a resize of the whole frame,
then a crop) against viddiff's fused form (one resize of the region the crop keeps), on the same frames;
with the largest pixel difference, the share of pixels that differ, and the lowest cosine similarity of the
two ways' embeddings (random-weight CLIP of ``--config``'s architecture, fp32).

Without arguments a 10-s 960x720 clip is generated as ``bench/stages.py`` writes them; pass real videos to
measure those (24 frames of each, every 7th).

    python bench/clip_shrink.py [VIDEO ...] [--config configs/cpu-fast.yaml]
"""

from __future__ import annotations

import argparse
import functools
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stages import CONFIGS, write_pair  # noqa: E402

from viddiff.backends.clip import ClipEmbedder  # noqa: E402
from viddiff.backends.clip_frames import _apply, _geometric_steps, clip_frame_shrink, eval_transform  # noqa: E402
from viddiff.config import load_config  # noqa: E402


def frames_of(path: Path, count: int = 24, step: int = 7) -> list[np.ndarray]:
    import av

    kept = []
    with av.open(str(path)) as container:
        for index, frame in enumerate(container.decode(container.streams.video[0])):
            if index % step == 0:
                kept.append(frame.to_ndarray(format="rgb24"))
            if len(kept) == count:
                break
    return kept


def per_frame_ms(shrink, frames: list[np.ndarray], repeat: int = 3) -> tuple[float, np.ndarray]:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        out = np.stack([shrink(f) for f in frames])
        best = min(best, time.perf_counter() - start)
    return 1000 * best / len(frames), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("videos", type=Path, nargs="*")
    parser.add_argument("--config", type=Path, default=CONFIGS / "cpu-fast.yaml")
    args = parser.parse_args()
    cfg = load_config(args.config, ["localizer.clip.pretrained=null", "localizer.clip.device=cpu",
                                    "localizer.clip.precision=fp32", "cache.enabled=false"]).localizer.clip
    fused = clip_frame_shrink(cfg)
    steps = functools.partial(_apply, tuple(_geometric_steps(eval_transform(cfg).transforms)))
    embedder = ClipEmbedder(cfg)
    print(f"CLIP {cfg.model}: {type(fused).__name__} against {eval_transform(cfg).transforms[:2]}")
    print(f"{'video':<32} {'frame':>10} {'transforms':>11} {'fused':>9} {'ratio':>6} {'max diff':>9} "
          f"{'pixels differing':>17} {'cosine min':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        videos = list(args.videos)
        if not videos:
            videos = [write_pair(Path(tmp))[0]]
        for path in videos:
            frames = frames_of(path)
            old_ms, old = per_frame_ms(steps, frames)
            new_ms, new = per_frame_ms(fused, frames)
            difference = np.abs(old.astype(int) - new.astype(int))
            a, b = embedder.embed_images(old), embedder.embed_images(new)
            cosine = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
            height, width = frames[0].shape[:2]
            print(f"{path.name[:32]:<32} {f'{width}x{height}':>10} {old_ms:>8.2f} ms {new_ms:>6.2f} ms "
                  f"{new_ms / old_ms:>5.2f}x {difference.max():>9} {(difference > 0).mean():>16.5%} {cosine.min():>11.8f}")


if __name__ == "__main__":
    main()
