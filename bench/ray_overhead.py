"""Benchmark: where ``viddiff run --executor ray`` spends the time a local run does not, on this machine.

One synthetic benchmark (``viddiff data synth``), the scripted stand-in model server and the tiny random-weight
CLIP, run twice on fresh caches: locally, then on Ray actors (``ray.actors`` of them, ``ray.num_cpus`` each).
The Ray side is split into its fixed costs, each timed on its own in the same run:

- ``cluster start``: ``ray.init`` of a one-machine cluster (GCS, raylet, worker pool);
- ``actors ready``: the actors created and each holding a method instance: a new Python process per actor
  importing torch, open_clip and viddiff (the driver has already paid that once, a local run pays it once);
- the rest of the Ray run: the samples, with each actor's own CLIP load, results and usage sent back pickled.

    python bench/ray_overhead.py                    # 4 pairs, 2 actors
    python bench/ray_overhead.py --pairs 8 --actors 1

The ratio Ray/local is printed, with the predictions compared (they must be equal).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]


def timed_run(dataset: Path, out: Path, sets: list[str], *extra: str) -> float:
    from viddiff.cli import main

    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["-q", "run", "--dataset", str(dataset), "--mode", "closed", "--output", str(out), *sets, *extra])
    if code != 0:
        raise SystemExit(f"viddiff run {' '.join(extra)} failed with exit code {code}")
    return time.perf_counter() - started


def actors_ready(cfg, actors: int, num_cpus: float) -> float:
    """Seconds until ``actors`` bare actors each hold a method instance (what RayMethod creates first)."""
    import ray

    from viddiff.methods import get_method
    from viddiff.runs.ray_method import SampleActor

    started = time.perf_counter()
    actor_class = ray.remote(SampleActor).options(num_cpus=num_cpus)
    created = [actor_class.remote(cfg, get_method("viddiff"), {}) for _ in range(actors)]
    ray.get([a.forget.remote(-1) for a in created])
    elapsed = time.perf_counter() - started
    for actor in created:
        ray.kill(actor)
    return elapsed


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=4, help="synthetic pairs in the benchmark")
    parser.add_argument("--actors", type=int, default=2, help="ray.actors")
    parser.add_argument("--num-cpus", type=float, default=1.0, help="ray.num_cpus (CPUs reserved per actor)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("OPENAI_API_KEY", "dummy")
    os.environ.setdefault("RAY_memory_monitor_refresh_ms", "0")  # a shared machine's memory is not ours to judge
    import ray

    from viddiff.backends.cpu import available_cores
    from viddiff.config import Config
    from viddiff.data.synthetic import write_synthetic_benchmark
    from viddiff.testing import offline_overrides
    from viddiff.testing.fake_openai import FakeOpenAIServer
    from viddiff.testing.responders import ScriptedModel

    with tempfile.TemporaryDirectory(prefix="viddiff-bench-ray-") as tmp, FakeOpenAIServer(ScriptedModel()) as server:
        work = Path(tmp)
        dataset = work / "synth"
        write_synthetic_benchmark(dataset, pairs=args.pairs, seed=5)
        sets = [f"--set={s}" for s in offline_overrides(server.base_url, str(work / "local.sqlite"))]
        local_s = timed_run(dataset, work / "local", sets)

        started = time.perf_counter()
        ray.init(num_cpus=available_cores(), include_dashboard=False, log_to_driver=False, _temp_dir=str(work / "ray"))
        init_s = time.perf_counter() - started
        try:
            cfg = Config().with_overrides(offline_overrides(server.base_url, str(work / "probe.sqlite")))
            ready_s = actors_ready(cfg, args.actors, args.num_cpus)
            ray_sets = [f"--set={s}" for s in offline_overrides(server.base_url, str(work / "ray.sqlite"))]
            ray_s = timed_run(dataset, work / "ray-run", ray_sets, "--executor", "ray",
                              "--set", f"ray.actors={args.actors}", "--set", f"ray.num_cpus={args.num_cpus}")
        finally:
            ray.shutdown()
        same = json.loads((work / "local" / "predictions.json").read_text()) == json.loads(
            (work / "ray-run" / "predictions.json").read_text()
        )
    total = init_s + ray_s
    print(f"{args.pairs} synthetic pairs on {available_cores()} core(s), {args.actors} actor(s) x {args.num_cpus:g} CPU:")
    print(f"  local run            {local_s:6.1f} s")
    print(f"  Ray: cluster start   {init_s:6.1f} s")
    print(f"  Ray: run             {ray_s:6.1f} s  (of which actors ready, timed apart: {ready_s:.1f} s)")
    print(f"  Ray total / local: {total / local_s:.2f}x ({total - local_s:+.1f} s); same predictions: {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
