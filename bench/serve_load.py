"""``viddiff serve`` under load: many clients, many comparisons, against the scripted model at a fixed latency.

A real server (``viddiff serve`` in its own process, so its peak memory is its own) with ``--workers``
workers; ``--clients`` client threads, each with its own key, submit ``--jobs`` closed-mode comparisons in all
(two tiny synthetic clips, one statement unique to each job, so no job is another's cache hit; the model-call
cache is off) and follow each one's event stream. Every model call is answered after ``--latency`` seconds.
Then the same comparisons, ``--sequential`` of them, run one after another through ``VidDiff.acompare`` in
this process: the baseline, measured in the same run.

Printed: jobs completed (and that none was lost or duplicated: the server holds exactly one job per
submission, each done, each result holding its own statement), p50/p95 seconds from the POST to the first
verdict and to the result, the server's peak memory (VmHWM), and comparisons per minute served vs
sequential, with their ratio. Bounded by ``--max-seconds``: jobs unfinished by then are counted as lost.

Usage: python bench/serve_load.py [--clients 50] [--jobs 200] [--workers 16] [--latency 1.0]
       [--sequential 8] [--max-seconds 900]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from viddiff.api import VidDiff
from viddiff.config import Config
from viddiff.data.synth_clips import Clip, render
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel
from viddiff.testing.service import create_key, free_port
from viddiff.video.write import write_video

ACTION = "a square crossing the frame"
MODEL_KEY_ENV = "VIDDIFF_BENCH_MODEL_KEY"


def statement(i: int) -> str:
    return f"the square moves faster in take {i}"


def overrides(model_url: str, data_dir: Path, workers: int, jobs: int) -> list[str]:
    sets = offline_overrides(model_url, str(data_dir / "cache.sqlite"))
    return [
        *sets, "cache.enabled=false", f"endpoints.default.api_key_env={MODEL_KEY_ENV}",
        f"serve.workers={workers}", f"serve.max_queued_total={jobs}", f"serve.max_queued_per_key={jobs}",
        "serve.requests_per_minute=100000", "serve.max_statements=4",
    ]


def start_server(data_dir: Path, sets: list[str]) -> tuple[subprocess.Popen, str]:
    port = free_port()
    args = [sys.executable, "-m", "viddiff.cli", "-q", "serve", "--data-dir", str(data_dir), "--port", str(port)]
    for item in sets:
        args += ["--set", item]
    server = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited: {server.stderr.read()}")
        try:
            if httpx.get(url + "/readyz", timeout=2).status_code == 200:  # the models loaded, not only the port
                return server, url
        except httpx.TransportError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit("the server did not start in 180 s")


def peak_memory_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Load:
    """The client side: a shared counter of jobs to submit, and what each job's stream showed."""

    def __init__(self, url: str, keys: list[str], clips: tuple[Path, Path], jobs: int, deadline: float):
        self.url, self.keys, self.clips, self.jobs, self.deadline = url, keys, clips, jobs, deadline
        self.next = 0
        self.lock = threading.Lock()
        self.records: dict[int, dict] = {}
        self.errors: list[str] = []

    def take(self) -> int | None:
        with self.lock:
            if self.next >= self.jobs or time.monotonic() > self.deadline:
                return None
            self.next += 1
            return self.next - 1

    def client(self, key: str) -> None:
        with httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
            while (i := self.take()) is not None:
                try:
                    self.one(http, i)
                except Exception as exc:  # noqa: BLE001 - counted and printed, the load goes on
                    self.errors.append(f"job {i}: {type(exc).__name__}: {exc}")

    def one(self, http: httpx.Client, i: int) -> None:
        files = {"video_a": ("a.mp4", self.clips[0].read_bytes()), "video_b": ("b.mp4", self.clips[1].read_bytes())}
        start = time.monotonic()
        created = http.post("/v1/comparisons", data={"action": ACTION, "differences": [statement(i)]}, files=files,
                            headers={"Idempotency-Key": f"bench-{i}"})
        created.raise_for_status()
        record = {"id": created.json()["id"], "first_verdict": None, "result": None, "results": 0}
        self.records[i] = record
        timeout = max(1.0, self.deadline - time.monotonic())
        with http.stream("GET", f"/v1/comparisons/{record['id']}/events", timeout=timeout) as stream:
            for line in stream.iter_lines():
                if line == "event: verdict" and record["first_verdict"] is None:
                    record["first_verdict"] = time.monotonic() - start
                elif line == "event: result":
                    record["result"] = time.monotonic() - start
                    record["results"] += 1


def check_store(url: str, keys: list[str], load: Load) -> tuple[int, int, int]:
    """``(done, lost, duplicated)`` from the server's own records."""
    seen: dict[str, dict] = {}
    for key in keys:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
            page: str | None = "/v1/comparisons?limit=200"
            while page:  # the list pages summaries: each comparison's result is behind its own link
                listed = http.get(page).json()
                for summary in listed["comparisons"]:
                    seen[summary["id"]] = http.get(summary["links"]["self"]).json()
                page = listed["next"]
    done = lost = 0
    for i in range(load.jobs):
        record = load.records.get(i)
        job = seen.get(record["id"]) if record else None
        ok = (
            job is not None and job["status"] == "done" and record["results"] == 1
            and [d["description"] for d in job["result"]["differences"]] == [statement(i)]
        )
        done += ok
        lost += not ok
    duplicated = len(seen) - len({r["id"] for r in load.records.values()})
    return done, lost, duplicated


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def sequential(config: Config, clips: tuple[Path, Path], count: int) -> float:
    """Seconds for ``count`` of the same comparisons one after another on one ``VidDiff`` (models loaded first)."""
    vd = VidDiff(config)
    try:
        _ = vd.embedder
        start = time.monotonic()
        for i in range(count):
            await vd.acompare(clips[0], clips[1], ACTION, differences=[statement(i)])
        return time.monotonic() - start
    finally:
        await vd.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per model call")
    parser.add_argument("--sequential", type=int, default=8, help="comparisons of the sequential baseline")
    parser.add_argument("--max-seconds", type=float, default=900)
    args = parser.parse_args()
    os.environ[MODEL_KEY_ENV] = "bench-model-key"
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(ScriptedModel(), latency_s=args.latency) as model:
        data_dir = Path(tmp) / "data"
        clips = tuple(
            write_video(Path(tmp) / f"{name}.mp4", render(Clip(colour, direction, n_frames=24)), 8.0)
            for name, colour, direction in (("a", "red", "left to right"), ("b", "blue", "right to left"))
        )
        sets = overrides(model.base_url, data_dir, args.workers, args.jobs)
        keys = [create_key(data_dir, f"client-{c}") for c in range(args.clients)]
        server, url = start_server(data_dir, sets)
        try:
            load = Load(url, keys, clips, args.jobs, time.monotonic() + args.max_seconds)
            start = time.monotonic()
            threads = [threading.Thread(target=load.client, args=(key,)) for key in keys]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            served_s = time.monotonic() - start
            done, lost, duplicated = check_store(url, keys, load)
            peak = peak_memory_mib(server.pid)
        finally:
            server.terminate()
            server.wait(60)
        first = [r["first_verdict"] for r in load.records.values() if r["first_verdict"] is not None]
        result = [r["result"] for r in load.records.values() if r["result"] is not None]
        config = Config().with_overrides(overrides(model.base_url, Path(tmp) / "sequential", 1, 1))
        sequential_s = asyncio.run(sequential(config, clips, args.sequential))
    served_rate = 60 * done / served_s
    sequential_rate = 60 * args.sequential / sequential_s
    print(f"viddiff serve: {args.clients} clients, {args.jobs} jobs, {args.workers} workers, "
          f"model calls answered after {args.latency:g} s, model-call cache off")
    print(f"jobs completed: {done}/{args.jobs}; lost: {lost}; duplicated: {duplicated}; client errors: {len(load.errors)}")
    for error in load.errors[:5]:
        print(f"  {error}")
    print(f"to the first verdict: p50 {percentile(first, 0.5):.1f} s, p95 {percentile(first, 0.95):.1f} s")
    print(f"to the result:        p50 {percentile(result, 0.5):.1f} s, p95 {percentile(result, 0.95):.1f} s")
    print(f"server peak memory (VmHWM): {peak:.0f} MiB")
    print(f"served: {done} comparisons in {served_s:.1f} s = {served_rate:.1f} per minute")
    print(f"sequential (VidDiff.acompare, {args.sequential} of the same comparisons): {sequential_s:.1f} s = "
          f"{sequential_rate:.1f} per minute")
    print(f"served / sequential: {served_rate / sequential_rate:.1f}x")


if __name__ == "__main__":
    main()
