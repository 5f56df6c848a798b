"""Comparisons per minute of one kept ``VidDiff`` serving concurrent ``acompare`` calls, micro-batched CLIP
against the serialised path (``localizer.clip.micro_batch=false``) measured in the same run, and optionally
against another checkout's code (``--baseline-src``: the code before a change, e.g. before issue 33's work).

What an app backend does: one ``VidDiff`` with its models loaded once, many users' comparisons at once. Each
comparison is two generated 10-s clips (``bench/stages.py``'s synthetic squats, 960x720 H.264 at 30 fps,
read at the default 4 fps) in closed mode with two statements, against the local fake model server
answering every call after ``--latency`` seconds. The cache is off, so every comparison decodes, embeds and
asks anew. CLIP has random weights of the preset's (or ``--clip``'s) architecture: the cost depends on the
architecture only. For each concurrency, each way runs ``--rounds`` × concurrency comparisons (at most
``--max-compares``), ``--repeats`` times, the ways alternating; printed: the median comparisons per
minute (and each repeat's), time to result p50/p95 over all repeats, the process's CPU seconds per
comparison, the mean CLIP batch, and each way's throughput over the serialised path's (and the baseline's).

``--baseline-src PATH`` runs the same comparisons with the ``viddiff`` of another checkout (``git worktree add
/tmp/before COMMIT``) in a child process of its own, with only the settings that checkout knows (no
``micro_batch``); the two ways of this checkout run in this process, sharing the model.

Decoded frames are kept at CLIP's size (about 12 MB per comparison in flight). Leave glibc's malloc as it
is: ``MALLOC_MMAP_THRESHOLD_=1048576`` makes every full-size frame decoded a fresh mapping of zeroed pages
(measured: 8x the system CPU time, 0.7x the comparisons per minute at concurrency 16).

CPU (the fast preset):  python bench/serve_throughput.py --concurrency 1 16 --repeats 2 \\
                            --baseline-src /tmp/before
GPU (the paper's CLIP): python bench/serve_throughput.py --config configs/paper.yaml --device cuda \\
                            --clip ViT-bigG-14 --precision fp16
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import gc
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stages import CONFIGS, STATEMENTS, write_pair  # noqa: E402

from viddiff.api import VidDiff  # noqa: E402
from viddiff.config import Config, load_config  # noqa: E402
from viddiff.testing.fake_openai import FakeOpenAIServer  # noqa: E402
from viddiff.testing.responders import ScriptedModel  # noqa: E402

WAYS = {"serialised": ["localizer.clip.micro_batch=false"], "micro-batched": ["localizer.clip.micro_batch=true"]}
REPO = Path(__file__).resolve().parents[1]
BASELINE = "baseline"
"""The way run with ``--baseline-src``'s code (in a child process)."""


def way_config(args: argparse.Namespace, base_url: str, way: str) -> Config:
    sets = [
        f"endpoints.default.base_url={base_url}",
        "endpoints.max_concurrency=512",  # the model server is not what is measured
        "cache.enabled=false",
        "localizer.clip.pretrained=null",
        f"localizer.clip.device={args.device}",
        *WAYS.get(way, []),
        *args.sets,
    ]
    if args.clip:
        sets.append(f"localizer.clip.model={args.clip}")
    if args.precision:
        sets.append(f"localizer.clip.precision={args.precision}")
    return load_config(args.config, sets)


async def serve(vd: VidDiff, videos: tuple[Path, Path], concurrency: int, n: int, threads: int) -> dict:
    """``n`` comparisons, at most ``concurrency`` at once; seconds to each result, the whole wall time, CPU time."""
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(threads))
    gate = asyncio.Semaphore(concurrency)
    before = (vd.embedder.image_batcher.batches, vd.embedder.image_batcher.rows) if _batcher(vd) else None

    async def one() -> float:
        async with gate:
            start = time.perf_counter()
            await vd.acompare(*videos, "barbell back squat", differences=STATEMENTS)
            return time.perf_counter() - start

    release_freed_memory()
    with PeakMemory() as memory:
        cpu_start, start = time.process_time(), time.perf_counter()
        latencies = await asyncio.gather(*(one() for _ in range(n)))
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    await vd.client.aclose()
    mean_batch = None
    if before is not None:
        batcher = vd.embedder.image_batcher
        mean_batch = (batcher.rows - before[1]) / max(1, batcher.batches - before[0])
    return {"wall": wall, "cpu": cpu, "latencies": sorted(latencies), "n": n, "mean_batch": mean_batch,
            "peak_mib": memory.peak_mib}


def release_freed_memory() -> None:
    """Hand back to the system what earlier runs freed (glibc keeps it in its per-thread arenas), so that a run's
    peak resident size is its own and not the largest of the runs before it in this process."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


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


class BaselineChild:
    """The ``--baseline-src`` checkout's ``VidDiff`` in a child process: loaded once, then one measurement per
    request (JSON lines over stdin/stdout), so that its model load stays out of the timings as ours does."""

    def __init__(self, args: argparse.Namespace, videos: tuple[Path, Path], threads: int):
        command = [sys.executable, __file__, "--child", *sys.argv[1:]]
        env = {**os.environ, "PYTHONPATH": str(args.baseline_src.resolve())}
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self._ask({"videos": [str(v) for v in videos], "threads": threads})  # loads and warms up

    def measure(self, concurrency: int, n: int) -> dict:
        return self._ask({"concurrency": concurrency, "n": n})

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)

    def _ask(self, request: dict) -> dict:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"the --baseline-src child exited ({self.process.wait()}); its stderr is above")
        return json.loads(line)


def child(args: argparse.Namespace) -> None:
    """The other end of :class:`BaselineChild`: this checkout's code is whatever ``PYTHONPATH`` names."""
    import viddiff

    print(f"baseline: {Path(viddiff.__file__).parent}", file=sys.stderr, flush=True)
    if args.config.is_relative_to(REPO):  # the preset as that checkout has it (it may not know newer keys)
        args.config = args.baseline_src.resolve() / args.config.relative_to(REPO)
    with FakeOpenAIServer(ScriptedModel(), latency_s=args.latency) as server:
        vd = VidDiff(way_config(args, server.base_url, BASELINE))
        videos: tuple[Path, Path] = (Path(), Path())
        threads = 0
        for line in sys.stdin:
            request = json.loads(line)
            if "videos" in request:
                videos, threads = (Path(request["videos"][0]), Path(request["videos"][1])), request["threads"]
                result = asyncio.run(serve(vd, videos, 1, 1, threads))
            else:
                result = asyncio.run(serve(vd, videos, request["concurrency"], request["n"], threads))
            print(json.dumps(result), flush=True)
        asyncio.run(vd.aclose())


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
    parser.add_argument("--baseline-src", type=Path, metavar="PATH",
                        help="also measure this checkout's code (e.g. a git worktree of an older commit)")
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    os.environ.setdefault("OPENAI_API_KEY", "dummy")
    args.config = args.config.absolute()
    if args.child:
        child(args)
        return
    import torch

    threads = args.threads or min(32, (os.cpu_count() or 1) + 4)
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(ScriptedModel(), latency_s=args.latency) as server:
        videos = write_pair(Path(tmp))
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
        baseline = BaselineChild(args, videos, threads) if args.baseline_src else None
        ways = ([BASELINE] if baseline else []) + list(WAYS)
        print(f"{'concurrency':>11} {'way':<14} {'compares':>8} {'per min':>8} {'p50 s':>7} {'p95 s':>7} "
              f"{'CPU s':>6} {'batch':>6} {'peak MiB':>9} {'vs serialised':>14}"
              f"{'  vs baseline' if baseline else ''}", flush=True)
        try:
            for concurrency in args.concurrency:
                n = min(args.max_compares, max(concurrency, round(args.rounds * concurrency)))
                runs: dict[str, list[dict]] = {way: [] for way in ways}
                for _ in range(args.repeats):  # the ways alternate, so that other load on the machine hits all
                    if baseline is not None:
                        runs[BASELINE].append(baseline.measure(concurrency, n))
                    for way, vd in served.items():
                        runs[way].append(asyncio.run(serve(vd, videos, concurrency, n, threads)))
                print_level(concurrency, n, runs, baseline is not None)
        finally:
            if baseline is not None:
                baseline.close()
        for vd in served.values():
            asyncio.run(vd.aclose())
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


def print_level(concurrency: int, n: int, runs: dict[str, list[dict]], with_baseline: bool) -> None:
    rates = {way: statistics.median(60 * r["n"] / r["wall"] for r in got) for way, got in runs.items()}
    for way, got in runs.items():
        latencies = sorted(t for r in got for t in r["latencies"])
        batches = [r["mean_batch"] for r in got if r["mean_batch"] is not None]
        batch = f"{statistics.mean(batches):.1f}" if batches else "-"
        cpu = statistics.median(r["cpu"] / r["n"] for r in got)
        spread = " ".join(f"{60 * r['n'] / r['wall']:.1f}" for r in got)
        versus_baseline = f" {rates[way] / rates[BASELINE]:>12.2f}x" if with_baseline else ""
        print(
            f"{concurrency:>11} {way:<14} {n:>8} {rates[way]:>8.1f} {percentile(latencies, 50):>7.2f} "
            f"{percentile(latencies, 95):>7.2f} {cpu:>6.2f} {batch:>6} {max(r['peak_mib'] for r in got):>9.0f} "
            f"{rates[way] / rates['serialised']:>13.2f}x{versus_baseline}"
            f"   (per repeat: {spread})",
            flush=True,
        )


if __name__ == "__main__":
    main()
