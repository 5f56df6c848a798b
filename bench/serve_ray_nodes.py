"""``viddiff serve --ray`` on one node against two nodes that share no files (issue 39), in the same run.

One node: a local Ray cluster of this machine (``--cpus`` CPUs), ``--actors`` actors. Two nodes: a head and a
second node joined with ``ray start --address`` in a mount namespace of its own, with an empty tmpfs over the
server's data dir and cache (``viddiff.testing.ray_cluster``), the same CPUs split between them, the same
number of actors (Ray spreads them: one CPU each). On two nodes every video goes through Ray's object store
and every cache look-up through the cache of record on the head, wherever the actor runs.

Each way serves, over real HTTP, ``--compares`` closed-mode comparisons of two tiny synthetic clips (96x64,
3 s) with two statements, submitted ``--concurrency`` at a time, against the local fake model server
(``--latency`` s per call), each with its own statements so that no answer is cached. Printed: comparisons
per minute, time from POST to ``done`` p50 and p95, and the two-node way's over the one-node way's. On one
machine both ways share the same cores: the difference is what Ray's transfers and round trips cost, not
what a second machine would add.

    python bench/serve_ray_nodes.py --concurrency 16 --compares 32
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from viddiff.config import Config
from viddiff.data.synth_clips import Clip, render
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.ray_cluster import driven_cluster, unavailable_reason
from viddiff.testing.responders import ScriptedModel
from viddiff.testing.service import ServerThread, create_key
from viddiff.video.write import write_video


def serve(data_dir: Path, model: FakeOpenAIServer, ray_sets: list[str], clips: dict[str, bytes], args) -> dict:
    """Serve ``args.compares`` comparisons ``args.concurrency`` at a time; throughput and latencies."""
    os.environ["VIDDIFF_BENCH_MODEL_KEY"] = "dummy"
    config = Config().with_overrides([
        *offline_overrides(model.base_url, str(data_dir / "cache.sqlite")),
        "endpoints.default.api_key_env=VIDDIFF_BENCH_MODEL_KEY", "serve.requests_per_minute=100000",
        "serve.max_queued_per_key=100000", "serve.max_queued_total=100000", "serve.workers=8", *ray_sets,
    ])
    with ServerThread(data_dir, config) as server:
        key = create_key(data_dir, "bench")

        def one(i: int) -> float:
            with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=600) as client:
                start = time.perf_counter()
                answer = client.post("/v1/comparisons", data={
                    "action": "a square crossing", "differences": [f"the square moves faster {i}", f"the square is wider {i}"],
                }, files={"video_a": ("a.mp4", clips["a"]), "video_b": ("b.mp4", clips["b"])})
                assert answer.status_code == 202, answer.text
                job = answer.json()["id"]
                while client.get(f"/v1/comparisons/{job}").json()["status"] not in ("done", "failed", "cancelled"):
                    time.sleep(0.05)
                assert client.get(f"/v1/comparisons/{job}").json()["status"] == "done"
                return time.perf_counter() - start

        one(-1)  # the actors' first comparison warms them up
        start = time.perf_counter()
        with ThreadPoolExecutor(args.concurrency) as pool:
            latencies = sorted(pool.map(one, range(args.compares)))
        wall = time.perf_counter() - start
    return {"per_min": args.compares / wall * 60, "p50": statistics.median(latencies),
            "p95": latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--compares", type=int, default=32)
    parser.add_argument("--actors", type=int, default=2)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    if (reason := unavailable_reason()) is not None:
        sys.exit(f"a two-node cluster cannot be started here: {reason}")
    import ray

    with tempfile.TemporaryDirectory(prefix="vd-raynodes-") as tmp, FakeOpenAIServer(ScriptedModel(), latency_s=args.latency) as model:
        root = Path(tmp)
        clips = {}
        for name, colour, direction in (("a", "red", "left to right"), ("b", "blue", "right to left")):
            path = write_video(root / f"{name}.mp4", render(Clip(colour, direction, n_frames=24)), 8.0, codec="libx264")
            clips[name] = path.read_bytes()
        actors = [f"ray.actors={args.actors}", f"ray.num_cpus={args.cpus / args.actors:g}"]
        results = {}
        ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
        try:
            (root / "one").mkdir()
            results["one node"] = serve(root / "one", model, ["ray.address=local", *actors], clips, args)
        finally:
            ray.shutdown()
        (root / "two").mkdir()
        half = max(1, args.cpus // 2)
        with driven_cluster(hidden=[root], head_cpus=half, node_cpus=half) as cluster:
            results["two nodes"] = serve(root / "two", model, [f"ray.address={cluster.address}", *actors], clips, args)
    print(f"viddiff serve --ray, {args.compares} comparisons at concurrency {args.concurrency}, {args.actors} actors, "
          f"{args.cpus} CPUs, {args.latency:g} s per model call")
    for way, r in results.items():
        print(f"{way:9s}: {r['per_min']:.1f} comparisons/min, POST to done p50 {r['p50']:.2f} s, p95 {r['p95']:.2f} s")
    one, two = results["one node"], results["two nodes"]
    print(f"two nodes / one node: {two['per_min'] / one['per_min']:.2f}x the throughput, "
          f"{two['p50'] - one['p50']:+.2f} s at p50")


if __name__ == "__main__":
    main()
