"""Throughput of ChatClient vs. its concurrency limit, against the fake server.

Each request takes ``--latency`` seconds on the server (300 ms by default, a
typical small VLM answer), so the speed-up over concurrency 1 shows how well
the client overlaps requests. All requests are distinct and the cache is off,
so every one is a real HTTP round trip. Ratios are measured in the same run.

    python bench/llm_concurrency.py                 # 200 requests at 1, 4, 16, 64
    python bench/llm_concurrency.py --requests 40   # quick run
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import time

from viddiff.backends.llm import ChatClient, user_message
from viddiff.config import EndpointConfig, EndpointsConfig, ModelCallConfig
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer

KEY_ENV = "VIDDIFF_BENCH_API_KEY"


def _echo(req: ChatRequest) -> str:
    return req.texts[-1]


async def _run_batch(client: ChatClient, call: ModelCallConfig, n: int, tag: str) -> None:
    try:
        answers = await asyncio.gather(
            *(client.complete_text(call, [user_message(f"{tag}-{i}")]) for i in range(n))
        )
    finally:
        await client.aclose()
    if answers != [f"{tag}-{i}" for i in range(n)]:
        raise RuntimeError("answers out of order or wrong")


def measure(server: FakeOpenAIServer, concurrency: int, n: int) -> tuple[float, int]:
    """Wall seconds for ``n`` requests at ``concurrency``, and the peak in flight the server saw."""
    endpoints = EndpointsConfig(
        default=EndpointConfig(base_url=server.base_url, api_key_env=KEY_ENV),
        max_concurrency=concurrency,
        max_retries=0,
        timeout_s=30,
    )
    client = ChatClient(endpoints, cache=None)
    server.reset_log()
    start = time.perf_counter()
    asyncio.run(_run_batch(client, ModelCallConfig(model="fake-model"), n, f"c{concurrency}"))
    wall = time.perf_counter() - start
    if len(server.requests) != n:
        raise RuntimeError(f"expected {n} HTTP requests, server saw {len(server.requests)}")
    return wall, server.max_in_flight


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200, help="requests per concurrency level")
    parser.add_argument("--latency", type=float, default=0.3, help="server latency per request, seconds")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16, 64])
    args = parser.parse_args()
    os.environ.setdefault(KEY_ENV, "bench-dummy-key")

    with FakeOpenAIServer(_echo, latency_s=args.latency) as server:
        rows = [(c, *measure(server, c, args.requests)) for c in args.concurrency]

    base_wall = rows[0][1]
    print(f"{args.requests} distinct requests, {args.latency * 1000:.0f} ms server latency, cache off")
    print("ideal = speed-up if only server latency counted (requests go in rounds of `concurrency`)")
    print(f"{'concurrency':>11}  {'wall s':>8}  {'req/s':>7}  {'speed-up':>8}  {'ideal':>7}  {'peak in flight':>14}")
    for c, wall, peak in rows:
        ideal = math.ceil(args.requests / rows[0][0]) / math.ceil(args.requests / c)
        print(f"{c:>11}  {wall:>8.2f}  {args.requests / wall:>7.1f}  {base_wall / wall:>7.2f}x  {ideal:>6.1f}x  {peak:>14}")


if __name__ == "__main__":
    main()
