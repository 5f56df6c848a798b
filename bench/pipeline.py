"""End-to-end cost of `viddiff run` on the synthetic benchmark against a slow fake model server.

Every model call takes ``--latency`` seconds (default 0.3, like a hosted API),
so wall time is dominated by how well calls overlap. Prints, measured in one
run on this machine:

- wall time at concurrency 1 vs the default (ratio = speed-up from overlap);
- model calls and images sent per sample;
- a second identical run (everything cached) vs the first;
- CLIP frame forwards: first run vs the number of distinct sampled frames, and
  the swap-videos / same-video sanity runs on the same cache (should be 0);
- ``viddiff audit`` (original, swapped, identical videos on one cache) vs the same
  three variants as separate runs on fresh caches: model calls per sample and
  CLIP frame embeddings, for VidDiff and the LMM baseline (counted, not timed:
  these use a server without latency).

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

from viddiff.backends.clip import IMAGE_NAMESPACE
from viddiff.cache import Cache
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


def requests_during(server: FakeOpenAIServer, command: list[str]) -> int:
    """Model calls the server received while ``viddiff <command>`` ran (which must succeed)."""
    before = len(server.requests)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(["-q", *command])
    if code != 0:
        raise SystemExit(f"viddiff exited with {code}: {command}")
    return len(server.requests) - before


def clip_embeddings(cache_file: Path) -> int:
    """Frames CLIP embedded into a cache (each forward pass stores one entry; a cached frame stores none)."""
    if not cache_file.exists():
        return 0
    with Cache(cache_file) as cache:
        return cache.stats().get(IMAGE_NAMESPACE, {}).get("entries", 0)


def audit_vs_separate(dataset: Path, root: Path, mode: str, n_samples: int) -> None:
    """One ``viddiff audit`` (one cache) vs its three variants run separately, each on a fresh cache."""
    methods = {
        "VidDiff": ("run", [], []),
        "LMM baseline": ("baseline", ["--model", "fake-vlm"], ["--method", "baseline"]),
    }
    variants = {"original": [], "swapped": ["--set", "run.swap_videos=true"], "same": ["--set", "run.same_video=true"]}
    print(f"\nviddiff audit vs three separate runs ({mode}; each separate run on a fresh cache)")
    print(f"{'method':<14} {'audit calls/sample':>19} {'separate calls/sample':>22} {'ratio':>7} "
          f"{'audit CLIP frames':>18} {'separate CLIP frames':>21}")
    with FakeOpenAIServer(ScriptedModel()) as server:

        def common(out: str, cache: Path) -> list[str]:
            sets = [a for item in offline_overrides(server.base_url, str(cache)) for a in ("--set", item)]
            return ["--dataset", str(dataset), "--mode", mode, "--output", str(root / out), *sets]

        for name, (command, model, method) in methods.items():
            audit_cache = root / f"audit-{command}.sqlite"
            audit_calls = requests_during(server, ["audit", *method, *model, *common(f"audit-{command}", audit_cache)])
            separate_calls, separate_frames = 0, 0
            for variant, flags in variants.items():
                cache = root / f"separate-{command}-{variant}.sqlite"
                out = f"separate-{command}-{variant}"
                separate_calls += requests_during(server, [command, *model, *flags, *common(out, cache)])
                separate_frames += clip_embeddings(cache)
            print(f"{name:<14} {audit_calls / n_samples:>19.1f} {separate_calls / n_samples:>22.1f} "
                  f"{separate_calls / audit_calls:>6.2f}x {clip_embeddings(audit_cache):>18} {separate_frames:>21}")


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
        audit_vs_separate(root / "data", root, args.mode, n_samples)


if __name__ == "__main__":
    main_bench()
