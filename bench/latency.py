"""Time to the first verdict and to the whole result of one comparison, as an app serving one user sees it.

Two generated 10-s clips (those of ``bench/stages.py``: a synthetic squat, 960x720 H.264 at 30 fps, read at
the default 4 fps) are compared in closed mode with two statements through ``VidDiff.astream`` (what
``viddiff compare --json-lines`` prints), against the local fake model server answering every call after a
fixed latency. Each CPU preset runs with random weights of its real CLIP architecture (the cost depends on
the architecture only), loaded once before the timings as an app server would, and a fresh cache for every
comparison (every frame embedded, every call made). Three ways, interleaved, ``--repeats`` times each:

- sequential: ``run.overlap_stages=false`` and the paper's separate proposer calls, the steps one after
  another (decode, the proposer's three calls, CLIP, Viterbi, the differencer's calls);
- overlap: the default; decoding and the frames' embeddings run while the proposer's calls are in flight,
  and the videos are segmented while the differences are linked to the stages;
- overlap + one call: also ``proposer.calls=one`` (what ``configs/cpu-fast.yaml`` runs).

Printed: medians of the seconds to the proposal, the first verdict and the result, their ratios to the
sequential medians measured in the same run, and the seconds CLIP worked after the proposal had arrived.

Usage: python bench/latency.py [--presets cpu-fast cpu-balanced] [--latencies 0.5 1 2] [--repeats 3]
       [--set data.frame_size=differencer ...]  (applied to every way)
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from stages import CONFIGS, PRESET_FILES, STATEMENTS, write_clip

from viddiff.api import VidDiff
from viddiff.backends.clip import ClipEmbedder
from viddiff.cache import open_cache
from viddiff.config import Config, load_config
from viddiff.data.synth_actions import ACTIONS
from viddiff.data.synthetic import sample_pair
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.recording import RecordingEmbedder
from viddiff.testing.responders import ScriptedModel

WAYS = {
    "sequential": ["run.overlap_stages=false", "proposer.calls=separate"],
    "overlap": ["run.overlap_stages=true", "proposer.calls=separate"],
    "overlap + one call": ["run.overlap_stages=true", "proposer.calls=one"],
}
"""Each way sets both switches, whatever the preset says (``cpu-fast`` itself makes one call)."""


def preset_config(preset: str, base_url: str, cache: Path, sets: list[str]) -> Config:
    return load_config(
        CONFIGS / PRESET_FILES[preset],
        [
            f"endpoints.default.base_url={base_url}",
            "localizer.clip.pretrained=null",
            "localizer.clip.device=cpu",
            f"cache.path={cache}",
            *sets,
        ],
    )


async def one_comparison(cfg: Config, embedder: ClipEmbedder, videos: tuple[Path, Path]) -> dict[str, float]:
    """Seconds from the call to the proposal, the first verdict and the result (fresh cache), and the seconds
    CLIP worked after the proposal had arrived (what no order of the steps can hide behind the proposer)."""
    cache = open_cache(cfg.cache)
    embedder.cache = cache  # the loaded model, a fresh embedding cache
    recorder = RecordingEmbedder(embedder)
    vd = VidDiff(cfg, cache=cache, embedder=recorder)
    marks: dict[str, float] = {}
    try:
        start = time.perf_counter()
        async for event in vd.astream(*videos, "barbell back squat", differences=STATEMENTS):
            marks.setdefault(event.type, time.perf_counter())
    finally:
        await vd.aclose()
        cache.close()
    proposed = marks["proposal"]
    clip_after = sum(max(0.0, r.finished - max(r.started, proposed)) for r in recorder.requests)
    return {
        "proposal": proposed - start,
        "first verdict": marks["verdict"] - start,
        "result": marks["result"] - start,
        "CLIP after": clip_after,
    }


def measure(
    preset: str, latency: float, repeats: int, videos: tuple[Path, Path], root: Path, extra: list[str]
) -> dict[str, list[dict]]:
    with FakeOpenAIServer(ScriptedModel(), latency_s=latency) as server:
        clip = preset_config(preset, server.base_url, root / "unused.sqlite", []).localizer.clip
        embedder = ClipEmbedder(clip)
        embedder.embed_images(np.zeros((1, 8, 8, 3), np.uint8))  # load the model outside the timings
        runs: dict[str, list[dict]] = {way: [] for way in WAYS}
        for i in range(repeats + 1):  # the first round warms up (imports, thread pools) and is not counted
            for way, sets in WAYS.items():
                cache = root / f"{preset}-{latency}-{way}-{i}.sqlite"
                cfg = preset_config(preset, server.base_url, cache, [*extra, *sets])
                times = asyncio.run(one_comparison(cfg, embedder, videos))
                if i:
                    runs[way].append(times)
    return runs


def median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", nargs="+", choices=["cpu-fast", "cpu-balanced"], default=["cpu-fast", "cpu-balanced"])
    parser.add_argument("--latencies", nargs="+", type=float, default=[0.5, 1.0, 2.0])
    parser.add_argument("--repeats", type=int, default=3, help="timed comparisons per way (after one warm-up round)")
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                        help="a config override for every way (e.g. data.frame_size=differencer)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    os.environ.setdefault("OPENAI_API_KEY", "dummy")
    import torch

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        params = sample_pair(ACTIONS[0], np.random.default_rng(0))
        videos = (root / "a.mp4", root / "b.mp4")
        for i, (path, p) in enumerate(zip(videos, params)):
            write_clip(path, p, seed=i)
        print(
            f"two 10-s clips 960x720 at 30 fps, read at 4 fps; closed mode, {len(STATEMENTS)} statements; CPU, "
            f"{torch.get_num_threads()} threads, random CLIP weights; medians of {args.repeats} per way; "
            f"overrides {args.sets or 'none'}; "
            f"load average {os.getloadavg()[0]:.1f}"
        )
        print(f"{'preset':<13} {'latency':>7}  {'way':<19} {'proposal':>9} {'first verdict':>14} {'result':>8} "
              f"{'first/seq':>10} {'result/seq':>11} {'CLIP after proposal':>20}")
        for preset in args.presets:
            for latency in args.latencies:
                runs = measure(preset, latency, args.repeats, videos, root, args.sets)
                seq_first, seq_result = median(runs["sequential"], "first verdict"), median(runs["sequential"], "result")
                for way in WAYS:
                    first, result = median(runs[way], "first verdict"), median(runs[way], "result")
                    print(
                        f"{preset:<13} {latency:>6.1f}s  {way:<19} {median(runs[way], 'proposal'):>8.2f}s "
                        f"{first:>13.2f}s {result:>7.2f}s {first / seq_first:>9.2f}x {result / seq_result:>10.2f}x "
                        f"{median(runs[way], 'CLIP after'):>19.2f}s",
                        flush=True,
                    )
        print(f"load average {os.getloadavg()[0]:.1f} at the end (other work on the machine slows the CPU steps)")


if __name__ == "__main__":
    main()
