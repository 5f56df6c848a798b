"""End-to-end cost of `viddiff run` on the synthetic benchmark against a slow fake model server.

Every model call takes ``--latency`` seconds (default 0.3, like a hosted API),
so wall time is dominated by how well calls overlap. Prints, measured in one
run on this machine:

- wall time at concurrency 1 vs the default (ratio = speed-up from overlap);
- model calls and images sent per sample;
- a second identical run (everything cached) vs the first;
- CLIP frame forwards: first run vs the number of distinct sampled frames, and
  the swap-videos / same-video sanity runs on the same cache (should be 0).

Usage: python bench/pipeline.py [--pairs 6] [--latency 0.3] [--mode closed]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import tempfile
import time
from pathlib import Path

from viddiff.cli import main
from viddiff.config import DataConfig
from viddiff.data.synthetic import write_synthetic_benchmark
from viddiff.data.viddiffbench import load_dataset
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel
from viddiff.video import read_video_ref


def run(dataset: Path, out: Path, sets: list[str], mode: str, *extra: str) -> tuple[float, dict]:
    args = ["-q", "run", "--dataset", str(dataset), "--mode", mode, "--output", str(out), *extra]
    for item in sets:
        args += ["--set", item]
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(args)
    elapsed = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"run failed with exit code {code}: {args}")
    return elapsed, json.loads((out / "usage.json").read_text())


def distinct_sampled_frames(dataset_dir: Path) -> int:
    data = DataConfig(dataset=str(dataset_dir))
    seen, total = set(), 0
    for sample in load_dataset(data):
        for ref in sample.videos:
            if ref.path not in seen:
                seen.add(ref.path)
                total += len(read_video_ref(ref, data.fps_for(sample.domain), max_side=data.max_side).frame_indices)
    return total


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--mode", choices=["closed", "open"], default="closed")
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "dummy")

    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(ScriptedModel(), latency_s=args.latency) as server:
        root = Path(tmp)
        write_synthetic_benchmark(root / "data", pairs=args.pairs, seed=0)
        n_samples = len(load_dataset(DataConfig(dataset=str(root / "data"))))

        def sets(cache: str, *more: str) -> list[str]:
            return [*offline_overrides(server.base_url, str(root / cache)), *more]

        rows = []
        before = len(server.requests)
        t_serial, _ = run(root / "data", root / "serial", sets("serial.sqlite", "endpoints.max_concurrency=1",
                                                              "run.max_samples_in_flight=1"), args.mode)
        serial_calls = len(server.requests) - before
        before = len(server.requests)
        t_default, usage = run(root / "data", root / "default", sets("shared.sqlite"), args.mode)
        default_calls = len(server.requests) - before
        t_cached, cached_usage = run(root / "data", root / "cached", sets("shared.sqlite"), args.mode)
        _, swap_usage = run(root / "data", root / "swap", sets("shared.sqlite"), args.mode, "--swap-videos")
        _, same_usage = run(root / "data", root / "same", sets("shared.sqlite"), args.mode, "--same-video")
        cached_calls = sum(u["calls"] for u in cached_usage["by_stage"].values())

        images = sum(u["images"] for u in usage["by_stage"].values())
        rows.append(("concurrency 1 (1 sample in flight)", t_serial, 1.0))
        rows.append(("default concurrency", t_default, t_serial / t_default))
        rows.append(("second run, all cached", t_cached, t_serial / t_cached))
        print(f"synthetic benchmark: {n_samples} samples, mode {args.mode}, {args.latency * 1000:.0f} ms per model call\n")
        print(f"{'run':<36} {'wall s':>8} {'speed-up vs serial':>20}")
        for name, t, ratio in rows:
            print(f"{name:<36} {t:>8.2f} {ratio:>19.1f}x")
        print(f"\ncached run vs default run: {t_default / t_cached:.1f}x faster, {cached_calls} model calls")
        print(f"model calls per sample: {default_calls / n_samples:.1f} (serial run: {serial_calls / n_samples:.1f})")
        print(f"images sent per sample: {images / n_samples:.1f}")
        distinct = distinct_sampled_frames(root / "data")
        clip = usage["clip"]
        print(f"\nCLIP image forwards, first run: {clip['image_forward']} "
              f"(distinct sampled frames in the dataset: {distinct})")
        for name, u in (("cached rerun", cached_usage), ("--swap-videos", swap_usage), ("--same-video", same_usage)):
            print(f"CLIP image forwards, {name}: {u['clip']['image_forward'] if u['clip'] else 0}")


if __name__ == "__main__":
    main_bench()
