"""Comparisons per minute of one kept ``VidDiff`` serving concurrent ``acompare`` calls, micro-batched CLIP
against the serialised path (``localizer.clip.micro_batch=false``) measured in the same run.

What an app backend does: one ``VidDiff`` with its models loaded once, many users' comparisons at once. Each
comparison is two generated 10-s clips (``bench/stages.py``'s synthetic squats, 960x720 H.264 at 30 fps,
read at the default 4 fps) in closed mode with two statements, against the local fake model server
answering every call after ``--latency`` seconds. The cache is off, so every comparison decodes, embeds and
asks anew. CLIP has random weights of the preset's (or ``--clip``'s) architecture: the cost depends on the
architecture only. For each concurrency, each way runs ``--rounds`` × concurrency comparisons (at most
``--max-compares``), ``--repeats`` times, the two ways alternating; printed: the median comparisons per
minute (and each repeat's), time to result p50/p95 over all repeats, the mean CLIP batch, and
micro-batched / serialised throughput.

Decoded frames dominate memory (two 960x720 clips at 4 fps: about 170 MB per comparison in flight); on a
small machine run one concurrency per process, with ``MALLOC_MMAP_THRESHOLD_=1048576`` so that freed
frames go back to the system instead of staying in the threads' malloc arenas.

CPU (the fast preset):  python bench/serve_throughput.py
GPU (the paper's CLIP): python bench/serve_throughput.py --config configs/paper.yaml --device cuda \\
                            --clip ViT-bigG-14 --precision fp16
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stages import CONFIGS, STATEMENTS, write_clip  # noqa: E402

from viddiff.api import VidDiff  # noqa: E402
from viddiff.config import Config, load_config  # noqa: E402
from viddiff.data.synth_actions import ACTIONS  # noqa: E402
from viddiff.data.synthetic import sample_pair  # noqa: E402
from viddiff.testing.fake_openai import FakeOpenAIServer  # noqa: E402
from viddiff.testing.responders import ScriptedModel  # noqa: E402

WAYS = {"serialised": ["localizer.clip.micro_batch=false"], "micro-batched": ["localizer.clip.micro_batch=true"]}


def way_config(args: argparse.Namespace, base_url: str, way: str) -> Config:
    sets = [
        f"endpoints.default.base_url={base_url}",
        "endpoints.max_concurrency=512",  # the model server is not what is measured
        "cache.enabled=false",
        "localizer.clip.pretrained=null",
        f"localizer.clip.device={args.device}",
        *WAYS[way],
        *args.sets,
    ]
    if args.clip:
        sets.append(f"localizer.clip.model={args.clip}")
    if args.precision:
        sets.append(f"localizer.clip.precision={args.precision}")
    return load_config(args.config, sets)


async def serve(vd: VidDiff, videos: tuple[Path, Path], concurrency: int, n: int, threads: int) -> dict:
    """``n`` comparisons, at most ``concurrency`` at once; seconds to each result and the whole wall time."""
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(threads))
    gate = asyncio.Semaphore(concurrency)
    before = (vd.embedder.image_batcher.batches, vd.embedder.image_batcher.rows) if _batcher(vd) else None

    async def one() -> float:
        async with gate:
            start = time.perf_counter()
            await vd.acompare(*videos, "barbell back squat", differences=STATEMENTS)
            return time.perf_counter() - start

    with PeakMemory() as memory:
        start = time.perf_counter()
        latencies = await asyncio.gather(*(one() for _ in range(n)))
        wall = time.perf_counter() - start
    await vd.client.aclose()
    mean_batch = None
    if before is not None:
        batcher = vd.embedder.image_batcher
        mean_batch = (batcher.rows - before[1]) / max(1, batcher.batches - before[0])
    return {"wall": wall, "latencies": sorted(latencies), "n": n, "mean_batch": mean_batch, "peak_mib": memory.peak_mib}


class PeakMemory:
    """The process's largest resident size while the block runs, sampled every 0.2 s (Linux)."""

    def __init__(self) -> None:
        self.peak_mib = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> "PeakMemory":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        page = os.sysconf("SC_PAGE_SIZE")
        while True:
            with open("/proc/self/statm") as fh:
                self.peak_mib = max(self.peak_mib, int(fh.read().split()[1]) * page / 2**20)
            if self._stop.wait(0.2):
                return


def _batcher(vd: VidDiff) -> bool:
    return getattr(vd.embedder, "image_batcher", None) is not None


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=CONFIGS / "cpu-fast.yaml")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--clip", help="CLIP architecture instead of the config's (random weights either way)")
    parser.add_argument("--precision", choices=["fp32", "fp16", "bf16", "int8"])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16, 64])
    parser.add_argument("--rounds", type=float, default=2.0, help="comparisons per way = rounds x concurrency")
    parser.add_argument("--max-compares", type=int, default=64, help="at most this many comparisons per way and level")
    parser.add_argument("--repeats", type=int, default=1, help="measurements per way and level, alternating (medians)")
    parser.add_argument("--latency", type=float, default=1.0, help="seconds before the model server answers")
    parser.add_argument("--threads", type=int, default=None,
                        help="worker threads of the event loop (default: Python's, min(32, cores + 4))")
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    os.environ.setdefault("OPENAI_API_KEY", "dummy")
    import torch

    threads = args.threads or min(32, (os.cpu_count() or 1) + 4)
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(ScriptedModel(), latency_s=args.latency) as server:
        root = Path(tmp)
        params = sample_pair(ACTIONS[0], np.random.default_rng(0))
        videos = (root / "a.mp4", root / "b.mp4")
        for i, (path, p) in enumerate(zip(videos, params)):
            write_clip(path, p, seed=i)
        served = {way: VidDiff(way_config(args, server.base_url, way)) for way in WAYS}
        # One model in memory for both ways (the same random weights either way): loading ViT-bigG-14 twice
        # would cost a GPU minute and 5 GB for nothing.
        served["micro-batched"].embedder._loaded = served["serialised"].embedder._model()
        clip = served["micro-batched"].config.localizer.clip
        print(
            f"{args.config.name}: CLIP {clip.model} {served['micro-batched'].embedder.precision} (random weights) on "
            f"{args.device}, batch {clip.batch_size}, wait {clip.batch_wait_ms:g} ms; two 10-s clips 960x720, 4 fps, "
            f"closed, {len(STATEMENTS)} statements; model calls answered after {args.latency:g} s; no cache; "
            f"{os.cpu_count()} cores, torch {torch.__version__}, {threads} loop threads; "
            f"load average {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        for vd in served.values():  # load the model and warm up outside the timings
            asyncio.run(serve(vd, videos, 1, 1, threads))
        print(f"{'concurrency':>11} {'way':<14} {'compares':>8} {'per min':>8} {'p50 s':>7} {'p95 s':>7} "
              f"{'batch':>6} {'peak MiB':>9} {'vs serialised':>14}", flush=True)
        for concurrency in args.concurrency:
            n = min(args.max_compares, max(concurrency, round(args.rounds * concurrency)))
            runs: dict[str, list[dict]] = {way: [] for way in WAYS}
            for _ in range(args.repeats):  # the ways alternate, so that other load on the machine hits both
                for way, vd in served.items():
                    runs[way].append(asyncio.run(serve(vd, videos, concurrency, n, threads)))
            rates = {way: statistics.median(60 * r["n"] / r["wall"] for r in got) for way, got in runs.items()}
            for way, got in runs.items():
                latencies = sorted(t for r in got for t in r["latencies"])
                batches = [r["mean_batch"] for r in got if r["mean_batch"] is not None]
                batch = f"{statistics.mean(batches):.1f}" if batches else "-"
                spread = " ".join(f"{60 * r['n'] / r['wall']:.1f}" for r in got)
                print(
                    f"{concurrency:>11} {way:<14} {n:>8} {rates[way]:>8.1f} {percentile(latencies, 50):>7.2f} "
                    f"{percentile(latencies, 95):>7.2f} {batch:>6} {max(r['peak_mib'] for r in got):>9.0f} "
                    f"{rates[way] / rates['serialised']:>13.2f}x"
                    f"   (per repeat: {spread})",
                    flush=True,
                )
        for vd in served.values():
            asyncio.run(vd.aclose())
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
