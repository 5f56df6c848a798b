"""What one comparison's cache traffic costs through the cache of record on Ray (issue 39), against today's
local SQLite look-ups, measured in the same run.

First one comparison (``bench/stages.py``'s synthetic squat pair, the ``cpu-fast`` preset, two statements,
the local fake model server, tiny random CLIP) records every cache call it makes: its look-ups and stores of
model answers and CLIP embeddings, cold (an empty cache) and warm (the same comparison again). Then, inside a
Ray actor as a serving actor would, the two traces are replayed ``--repeats`` times against (1) a local
:class:`viddiff.cache.Cache` file the actor opens itself (today's one-machine set-up) and (2) a
:class:`viddiff.runs.ray_cache.RemoteCache` in front of the cache actor pinned to the driver's node. Printed:
calls per comparison, milliseconds per comparison each way (median of the repeats), the added milliseconds
and the ratio; and the time to send the pair's videos through the object store to the actor. On one machine the Ray path's cost is its round trips through the raylet and the cache actor;
across machines add the network's round-trip time per call.

    python bench/ray_cache_lookup.py --repeats 20
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stages import CONFIGS, PRESET_FILES, STATEMENTS, write_pair  # noqa: E402

from viddiff.api import VidDiff  # noqa: E402
from viddiff.cache import Cache  # noqa: E402
from viddiff.config import load_config  # noqa: E402
from viddiff.testing import TINY_CLIP_CONFIG, TINY_CLIP_MODEL  # noqa: E402
from viddiff.testing.fake_openai import FakeOpenAIServer  # noqa: E402
from viddiff.testing.responders import ScriptedModel  # noqa: E402

Trace = list[tuple[str, str, object]]
"""(call, namespace, keys or items) in the order the comparison made them."""


class RecordingCache(Cache):
    """A local cache that notes every call the models make."""

    def __init__(self, path: Path):
        super().__init__(path)
        self.trace: Trace = []

    def get_many(self, namespace, keys):
        self.trace.append(("get_many", namespace, list(keys)))
        return super().get_many(namespace, keys)

    def put_many(self, namespace, items):
        self.trace.append(("put_many", namespace, dict(items)))
        super().put_many(namespace, items)

    def get(self, namespace, key):
        self.trace.append(("get_many", namespace, [key]))
        return super().get(namespace, key)

    def put(self, namespace, key, value):
        self.trace.append(("put_many", namespace, {key: value}))
        super().put(namespace, key, value)


def record(folder: Path, videos: tuple[Path, Path]) -> tuple[Trace, Trace]:
    """The cache calls of one comparison, cold then warm."""
    with FakeOpenAIServer(ScriptedModel()) as model:
        cfg = load_config(CONFIGS / PRESET_FILES["cpu-fast"], [
            f"endpoints.default.base_url={model.base_url}", f"localizer.clip.model={TINY_CLIP_MODEL}",
            f"localizer.clip.arch_config={TINY_CLIP_CONFIG}", "localizer.clip.pretrained=null",
            "localizer.clip.device=cpu",
        ])
        traces = []
        cache = RecordingCache(folder / "record.sqlite")
        for _ in range(2):
            cache.trace = []
            vd = VidDiff(cfg, cache=cache)
            vd.compare(*videos, "barbell back squat", differences=STATEMENTS)
            traces.append(cache.trace)
        cache.close()
    return traces[0], traces[1]


class Replayer:
    """A Ray actor's body: replays a trace against a cache and times it."""

    def __init__(self, local_path: str, cache_actor, remote_path: str):
        from viddiff.runs.ray_cache import RemoteCache

        self.caches = {"local SQLite": Cache(local_path), "through Ray": RemoteCache(cache_actor, remote_path)}

    def receive(self, video_a: bytes, video_b: bytes) -> int:
        """What a comparison's actor does with its videos first: write them to a folder of its own."""
        with tempfile.TemporaryDirectory() as folder:
            Path(folder, "a.mp4").write_bytes(video_a)
            Path(folder, "b.mp4").write_bytes(video_b)
        return len(video_a) + len(video_b)

    def replay(self, way: str, trace: Trace) -> float:
        cache = self.caches[way]
        start = time.perf_counter()
        for call, namespace, argument in trace:
            getattr(cache, call)(namespace, argument)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "dummy")  # the fake model server takes any key
    import ray

    from viddiff.config import CacheConfig
    from viddiff.runs.ray_cache import start_cache_of_record

    with tempfile.TemporaryDirectory(prefix="vd-cachebench-") as tmp:
        folder = Path(tmp)
        videos = write_pair(folder)
        cold, warm = record(folder, videos)
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            remote_path = folder / "of-record.sqlite"
            cache_actor = start_cache_of_record(ray, CacheConfig(path=str(remote_path)))
            replayer = ray.remote(Replayer).options(num_cpus=0).remote(str(folder / "local.sqlite"), cache_actor,
                                                                         str(remote_path))
            results = {}
            for name, trace in (("cold", cold), ("warm", warm)):
                for way in ("local SQLite", "through Ray"):
                    ray.get(replayer.replay.remote(way, trace))  # once to fill (cold) and to warm up
                    times = [ray.get(replayer.replay.remote(way, trace)) for _ in range(args.repeats)]
                    results[name, way] = statistics.median(times) * 1000
            data = [path.read_bytes() for path in videos]
            sent = []
            for _ in range(args.repeats):  # what the head does per job: read, put, and the actor's receipt
                start = time.perf_counter()
                refs = [ray.put(path.read_bytes()) for path in videos]
                ray.get(replayer.receive.remote(*refs))
                sent.append(time.perf_counter() - start)
            video_ms = statistics.median(sent) * 1000
        finally:
            ray.shutdown()
    print("cache traffic of one comparison (cpu-fast preset, 2 statements), replayed inside a Ray actor")
    for name, trace in (("cold", cold), ("warm", warm)):
        gets = sum(len(a) for c, _, a in trace if c == "get_many")
        puts = sum(len(a) for c, _, a in trace if c == "put_many")
        local, remote = results[name, "local SQLite"], results[name, "through Ray"]
        print(f"{name:5s}: {len(trace)} calls ({gets} keys looked up, {puts} stored); "
              f"local SQLite {local:.2f} ms, through Ray {remote:.2f} ms per comparison: "
              f"+{remote - local:.2f} ms ({remote / local:.1f}x)")
    print(f"videos: the pair ({sum(map(len, data)) / 1e6:.1f} MB) through the object store to the actor: "
          f"{video_ms:.1f} ms per comparison")


if __name__ == "__main__":
    main()
