"""The job store under the two loads of issue 37: concurrent POSTs against the queue limits, and a write lock
held by another process, on a real ``viddiff serve`` process of this checkout and (``--baseline-src``) of
another one, measured in the same run.

1. ``--posts`` concurrent POSTs from one key (two tiny clips each) to a server with one worker kept busy,
   ``serve.max_queued_per_key=3`` and ``serve.max_queued_total=5``: how many were accepted (202), and the
   queue length ``/healthz`` reports after (issue 37: 20 POSTs, all 20 accepted, ``queued: 23``).
2. ``serve.sqlite`` write-locked (``BEGIN IMMEDIATE``) by another process for ``--hold`` seconds, while one
   client polls ``/healthz`` every 20 ms and another uploads a video: the slowest and median ``/healthz``,
   and what the upload got (issue 37: ``/healthz`` waited 18.3 s with the lock held 20 s).

``--baseline-src PATH``: a checkout of the code before (``git archive COMMIT | tar -x -C PATH``).

    python bench/serve_store.py --baseline-src /tmp/before
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from viddiff.data.synth_clips import Clip, render
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel
from viddiff.testing.service import free_port
from viddiff.video.write import write_video

REPO = Path(__file__).resolve().parents[1]
KEY_ENV = "VIDDIFF_BENCH_MODEL_KEY"
LIMITS = ["serve.workers=1", "serve.max_queued_per_key=3", "serve.max_queued_total=5"]
HOLD_LOCK = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("ROLLBACK")
"""


class Server:
    """``viddiff serve`` of the checkout at ``src`` in a process of its own, on a fresh data dir."""

    def __init__(self, src: Path, model: FakeOpenAIServer, workdir: Path):
        self.data_dir = Path(tempfile.mkdtemp(dir=workdir))
        self.env = {**os.environ, "PYTHONPATH": str(src), KEY_ENV: "dummy"}
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        made = subprocess.run(self._cli("serve", "keys", "create", "bench", "--data-dir", str(self.data_dir)),
                              env=self.env, cwd=src, capture_output=True, text=True, check=True)
        self.key = made.stdout.strip()
        args = self._cli("-q", "serve", "--data-dir", str(self.data_dir), "--port", str(self.port))
        for item in [*offline_overrides(model.base_url, str(self.data_dir / "cache.sqlite")),
                     f"endpoints.default.api_key_env={KEY_ENV}", *LIMITS]:
            args += ["--set", item]
        self.process = subprocess.Popen(args, env=self.env, cwd=src, stdout=subprocess.DEVNULL,  # cwd: -m imports from it
                                        stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 180
        while not self._answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the server of {src} did not start")
            time.sleep(0.2)

    @staticmethod
    def _cli(*args: str) -> list[str]:
        return [sys.executable, "-m", "viddiff.cli", *args]

    def _answers(self) -> bool:
        try:
            return httpx.get(self.url + "/healthz", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.key}"}, timeout=120)

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def concurrent_posts(server: Server, clips: dict[str, bytes], n: int, model: FakeOpenAIServer) -> tuple[int, int]:
    """(accepted, queued after) for ``n`` concurrent POSTs while the one worker is busy."""
    files = {"video_a": ("a.mp4", clips["a"]), "video_b": ("b.mp4", clips["b"])}
    model.latency_s = 5.0
    try:
        with server.client() as client:
            first = client.post("/v1/comparisons", files=files, data={"action": "squat", "differences": ["busy"]})
            job = first.json()["id"]
            while client.get(f"/v1/comparisons/{job}").json()["status"] != "running":
                time.sleep(0.05)
            barrier = threading.Barrier(n)

            def post(i: int) -> int:
                with server.client() as own:
                    barrier.wait()
                    return own.post("/v1/comparisons", files=files,
                                    data={"action": "squat", "differences": [f"deeper {i}"]}).status_code

            with ThreadPoolExecutor(n) as pool:
                codes = list(pool.map(post, range(n)))
            queued = httpx.get(server.url + "/healthz").json()["queued"]
    finally:
        model.latency_s = 0.0
    return codes.count(202), queued


def lock_held(server: Server, clip: bytes, hold_s: float) -> tuple[float, float, int, float]:
    """(slowest /healthz s, median s, the upload's status, the upload's seconds) with the store locked."""
    latencies: list[float] = []
    stop = threading.Event()

    def poll() -> None:
        with httpx.Client(base_url=server.url, timeout=120) as probe:
            while not stop.is_set():
                start = time.perf_counter()
                probe.get("/healthz")
                latencies.append(time.perf_counter() - start)
                time.sleep(0.02)

    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(server.data_dir / "serve.sqlite"), str(hold_s)],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "locked"
    poller = threading.Thread(target=poll)
    poller.start()
    with server.client() as client:
        start = time.perf_counter()
        status = client.post("/v1/videos", files={"video": ("a.mp4", clip)}).status_code
        upload_s = time.perf_counter() - start
    holder.wait()
    stop.set()
    poller.join()
    return max(latencies), statistics.median(latencies), status, upload_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline-src", type=Path, metavar="PATH")
    parser.add_argument("--posts", type=int, default=20)
    parser.add_argument("--hold", type=float, default=8.0, help="seconds the write lock is held")
    args = parser.parse_args()
    sources = {"this": REPO, **({"baseline": args.baseline_src.resolve()} if args.baseline_src else {})}
    with tempfile.TemporaryDirectory() as workdir, FakeOpenAIServer(ScriptedModel()) as model:
        clips = {name: write_video(Path(workdir) / f"{name}.mp4", render(Clip(colour, direction, n_frames=24)),
                                   8.0).read_bytes()
                 for name, colour, direction in (("a", "red", "left to right"), ("b", "blue", "right to left"))}
        print(f"{'code':<10}{'POSTs':>7}{'accepted':>10}{'queued':>8}   {'lock held':>10}{'/healthz max':>14}"
              f"{'median':>9}{'upload':>8}{'took':>8}")
        for name, src in sources.items():
            server = Server(src, model, Path(workdir))
            try:
                accepted, queued = concurrent_posts(server, clips, args.posts, model)
            finally:
                server.close()
            server = Server(src, model, Path(workdir))  # a fresh one: an empty queue
            try:
                slowest, median, status, upload_s = lock_held(server, clips["a"], args.hold)
            finally:
                server.close()
            print(f"{name:<10}{args.posts:>7}{accepted:>10}{queued:>8}   {args.hold:>9.0f}s{slowest * 1000:>12.1f}ms"
                  f"{median * 1000:>7.1f}ms{status:>8}{upload_s:>7.1f}s", flush=True)


if __name__ == "__main__":
    main()
