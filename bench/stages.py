"""Where the time of one `viddiff compare` goes on a CPU, per localizer preset.

Two generated 10-s clips (a synthetic squat, 960x720 H.264 at 30 fps, read at
the default 4 fps: 40 frames each) are compared in closed mode with two
statements, through the Python API that ``viddiff compare`` calls, against the
local fake model server answering every call after a fixed latency. CLIP uses
random weights of each preset's real architecture (cost depends on the
architecture only), on the CPU, with a fresh cache, one stage after another
(``run.overlap_stages=false``, the paper's separate proposer calls; ``bench/latency.py``
measures the overlapped order). Stages:

- decode: reading both clips at the inference fps;
- model calls: the proposer's and the differencer's requests (wall time);
- CLIP: image and text embedding inside the localizer (model load excluded, shown apart);
- Viterbi: the rest of the localizer (scores, decoding, keyframes).

The last column is the whole comparison divided by its largest stage.

Usage: python bench/stages.py [--presets paper cpu-balanced cpu-fast] [--latency 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

from viddiff.api import VidDiff, build_sample
from viddiff.backends.clip import ClipEmbedder
from viddiff.config import load_config
from viddiff.data.synth_actions import ACTIONS
from viddiff.data.synthetic import render_performance, sample_pair
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel
from viddiff.video.write import write_video

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
PRESET_FILES = {"paper": "paper.yaml", "cpu-balanced": "cpu-balanced.yaml", "cpu-fast": "cpu-fast.yaml"}
CLIP_SECONDS, FPS, SIZE = 10.0, 30.0, (960, 720)
STATEMENTS = ["the squat is deeper", "the descent is slower"]


class TimedEmbedder(ClipEmbedder):
    """The real embedder, with the seconds spent inside it added up."""

    seconds = 0.0

    def embed_images(self, frames):
        start = time.perf_counter()
        try:
            return super().embed_images(frames)
        finally:
            self.seconds += time.perf_counter() - start

    def embed_texts(self, texts):
        start = time.perf_counter()
        try:
            return super().embed_texts(texts)
        finally:
            self.seconds += time.perf_counter() - start


def write_clip(path: Path, params: dict, seed: int) -> None:
    """10 s of repeated squats at 30 fps: the 12-fps rendering, resampled by time, upscaled to 960x720."""
    spec = ACTIONS[0]
    rep = [np.asarray(Image.fromarray(f).resize(SIZE, Image.BICUBIC)) for f in render_performance(spec, params)]
    pause = [rep[0]] * int(np.random.default_rng(seed).integers(3, 9))
    cycle = rep + pause
    times = np.arange(int(CLIP_SECONDS * FPS)) / FPS
    write_video(path, (cycle[int(t * spec.fps) % len(cycle)] for t in times), FPS, options={"crf": "20"})


def write_pair(root: Path) -> tuple[Path, Path]:
    """The two clips every CPU bench compares (``a.mp4``, ``b.mp4`` under ``root``): one sampled pair of squats."""
    videos = (root / "a.mp4", root / "b.mp4")
    for i, (path, params) in enumerate(zip(videos, sample_pair(ACTIONS[0], np.random.default_rng(0)))):
        write_clip(path, params, seed=i)
    return videos


def measure(preset: str, videos: tuple[Path, Path], base_url: str, cache: Path) -> dict[str, float]:
    cfg = load_config(
        CONFIGS / PRESET_FILES[preset],
        [
            f"endpoints.default.base_url={base_url}",
            "localizer.clip.pretrained=null",
            "localizer.clip.device=cpu",
            f"cache.path={cache}",
            "run.overlap_stages=false",  # one stage after another, so each can be timed
            "proposer.calls=separate",  # the paper's three proposer calls (bench/latency.py compares the others)
        ],
    )
    embedder = TimedEmbedder(cfg.localizer.clip)
    start = time.perf_counter()
    embedder.embed_images(np.zeros((1, 8, 8, 3), np.uint8))  # build the model outside the comparison
    load_s = time.perf_counter() - start
    embedder.seconds = 0.0
    forwards_before = embedder.stats.image_forward
    sample, mode = build_sample(*videos, "barbell back squat", differences=STATEMENTS)

    async def compare() -> dict[str, float]:
        vd = VidDiff(cfg, embedder=embedder)
        marks: dict[str, float] = {}
        try:
            t0 = time.perf_counter()
            frames = await vd.load_videos(sample)
            marks["decode"] = time.perf_counter()
            await vd.aprocess(sample, mode, videos=frames, on_stage=lambda stage: marks.__setitem__(stage, time.perf_counter()))
        finally:
            await vd.aclose()
        return {
            "decode": marks["decode"] - t0,
            "proposer": marks["proposer"] - marks["decode"],
            "localizer": marks["localizer"] - marks["proposer"],
            "differencer": marks["differencer"] - marks["localizer"],
            "whole": marks["differencer"] - t0,
        }

    times = asyncio.run(compare())
    return {
        "decode": times["decode"],
        "model calls": times["proposer"] + times["differencer"],
        "CLIP": embedder.seconds,
        "Viterbi": times["localizer"] - embedder.seconds,
        "whole": times["whole"],
        "load": load_s,
        "forwards": embedder.stats.image_forward - forwards_before,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", nargs="+", choices=list(PRESET_FILES), default=list(PRESET_FILES))
    parser.add_argument("--latency", type=float, default=1.0, help="seconds the fake server takes per model call")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    os.environ.setdefault("OPENAI_API_KEY", "dummy")
    import torch

    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(ScriptedModel(), latency_s=args.latency) as server:
        root = Path(tmp)
        videos = write_pair(root)
        print(f"two {CLIP_SECONDS:.0f}-s clips {SIZE[0]}x{SIZE[1]} at {FPS:.0f} fps, read at 4 fps; "
              f"{args.latency:.1f} s per model call; CPU, {torch.get_num_threads()} threads, random CLIP weights")
        stages = ("decode", "model calls", "CLIP", "Viterbi")
        print(f"{'preset':<13} {'model':<19} " + " ".join(f"{s:>11}" for s in stages)
              + f" {'whole':>8} {'whole/largest':>14} {'forwards':>9} {'load s':>7}")
        for preset in args.presets:
            row = measure(preset, videos, server.base_url, root / f"{preset}.sqlite")
            model = load_config(CONFIGS / PRESET_FILES[preset]).localizer.clip.model
            largest = max(row[s] for s in stages)
            print(f"{preset:<13} {model:<19} " + " ".join(f"{row[s]:>10.2f}s" for s in stages)
                  + f" {row['whole']:>7.1f}s {row['whole'] / largest:>13.2f}x {row['forwards']:>9} {row['load']:>7.0f}",
                  flush=True)


if __name__ == "__main__":
    main()
