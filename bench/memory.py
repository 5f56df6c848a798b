"""Benchmark: peak memory (RSS) of ``viddiff compare`` on long 1080p phone clips, and where it comes from.

Each compare runs in a fresh child process (``viddiff compare --json-lines``, open mode, 3 differences,
default settings otherwise) against the scripted stand-in server, with a random-weight CLIP whose input is
224 px like the default model's (2 layers, so the bench measures frames, not a model). Its peak RSS
is the child's ``ru_maxrss`` (``os.wait4``). The peak is split into where it comes from: the imports (a
child that only imports what compare imports), the sampled frames kept at CLIP's input size (their count
times 224 x 224 x 3 bytes), and the rest, the transient work; the child's RSS is polled (every 20 ms) to
give the peak before the segmentation event (decoding and embedding) and after it (keyframes decoded again
at full size, the differencer's requests). The split uses anonymous memory (``RssAnon``: the heap, arrays,
tensors), which a machine short of memory cannot take back without swap; RSS also counts the pages of the
shared libraries mapped in, which the kernel drops and reads again under memory pressure from other jobs,
so a loaded machine's RSS can read lower than the same run's on an idle one. The clips are generated once with PyAV (cheap content:
scrolling coarse noise, a fresh noise band, a moving box; x264 ultrafast, 30 fps) and cached in
``--workdir``; B is a copy of A under another name, so both are decoded and kept, as two clips are.
``--source-fps 8`` writes and decodes 4x fewer frames (a loaded machine takes an hour for 2 x 18 000
1080p frames) and samples exactly as many (compare's default 4 fps): what is kept is the same.

    python bench/memory.py                                  # 10-min pair: this tree only
    python bench/memory.py --source-fps 8                   # the same frames kept, a quarter of the decoding
    python bench/memory.py --source-fps 5 8 30 --workdir /work/scratch/longclip   # the three clip rates
    python bench/memory.py --baseline-src /path/to/old/checkout --baseline-minutes 1
    python bench/memory.py --minutes 2.5 --baseline-src /work/main --baseline-minutes 2.5

With ``--baseline-src`` the other checkout's ``viddiff`` runs the same compare at
``--baseline-minutes`` (its memory grows with the clip: 10 min of 1080p frames at 4 fps is ~30 GB
there), and this tree runs that length too, in the same run: the ratio old/new is printed, and
whether both gave the same keyframes and verdicts.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
WIDTH, HEIGHT = 1920, 1080
BLOCK = 32
TARGET_GB = 2.5
BENCH_CLIP = {
    "embed_dim": 32,
    "vision_cfg": {"image_size": 224, "layers": 2, "width": 64, "head_width": 32, "patch_size": 32},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 64, "heads": 2, "layers": 2},
}


def synthetic_frames(n_frames: int, seed: int = 0) -> Iterator[np.ndarray]:
    """Cheap to draw and to encode, and not trivially compressible (a fresh band each frame)."""
    rng = np.random.default_rng(seed)

    def noise(rows: int, cols: int) -> np.ndarray:
        cells = rng.integers(0, 256, size=(rows // BLOCK + 1, cols // BLOCK + 1, 3), dtype=np.uint8)
        return np.repeat(np.repeat(cells, BLOCK, axis=0), BLOCK, axis=1)[:rows, :cols]

    texture = noise(HEIGHT, 2 * WIDTH)
    band, box = HEIGHT // 10, HEIGHT // 6
    for t in range(n_frames):
        shift = (4 * t) % WIDTH
        frame = texture[:, shift:shift + WIDTH].copy()
        frame[-band:] = noise(band, WIDTH)
        x = (7 * t) % (WIDTH - box)
        frame[box:2 * box, x:x + box] = 255
        yield frame


def clip_pair(workdir: Path, minutes: float, fps: float) -> tuple[Path, Path]:
    from viddiff.video.write import write_video

    a = workdir / f"phone_{minutes:g}min_{fps:g}fps_a.mp4"
    b = workdir / f"phone_{minutes:g}min_{fps:g}fps_b.mp4"
    if not a.exists():
        started = time.perf_counter()
        partial = a.with_suffix(".partial.mp4")
        write_video(partial, synthetic_frames(round(minutes * 60 * fps)), fps, options={"preset": "ultrafast"})
        partial.rename(a)
        print(f"wrote {a.name} ({a.stat().st_size / 2**20:.0f} MiB) in {time.perf_counter() - started:.0f} s", flush=True)
    if not b.exists():
        shutil.copyfile(a, b)
    return a, b


@dataclass
class RssTimeline:
    """A child's resident memory, polled from ``/proc``, and when each of its events arrived."""

    pid: int
    samples: list[tuple[float, float]] = field(default_factory=list)
    """(time, GB of anonymous memory)."""
    events: list[tuple[float, str]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def poll(self) -> None:
        while not self._stop.is_set():
            try:
                status = Path(f"/proc/{self.pid}/status").read_text()
            except OSError:
                return
            for line in status.splitlines():
                if line.startswith("RssAnon:"):
                    self.samples.append((time.perf_counter(), int(line.split()[1]) / 2**20))
            time.sleep(0.02)

    def stop(self) -> None:
        self._stop.set()

    def peak_between(self, start: Optional[str], end: Optional[str]) -> float:
        """Peak GB from the first event named ``start`` (or the beginning) to the first named ``end`` (or the end)."""
        begin = next((t for t, name in self.events if name == start), 0.0) if start else 0.0
        until = next((t for t, name in self.events if name == end), float("inf")) if end else float("inf")
        return max((gb for t, gb in self.samples if begin <= t <= until), default=float("nan"))


def imports_gb(src: Path) -> tuple[float, float]:
    """RSS and anonymous memory (GB) of a child that has only imported what a compare imports."""
    code = (
        "import av, torch, open_clip, viddiff.cli, viddiff.api, viddiff.commands.compare, viddiff.methods.viddiff\n"
        "status = dict(line.split(':', 1) for line in open('/proc/self/status'))\n"
        "print(int(status['VmRSS'].split()[0]), int(status['RssAnon'].split()[0]))"
    )
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(src)},
                         capture_output=True, text=True, check=True).stdout.split()
    rss_kb, anon_kb = (int(v) for v in out)
    return rss_kb / 2**20, anon_kb / 2**20


def kept_frames(clip: Path, target_fps: float = 4.0) -> int:
    """Frames compare samples from ``clip`` (at its default fps): each is kept at CLIP's 224 x 224 input size."""
    from viddiff.video.read import compute_stride, probe_video

    info = probe_video(clip)
    return len(range(0, info.n_frames, compute_stride(info.fps, target_fps)))


def compare(
    src: Path, clips: tuple[Path, Path], base_url: str, workdir: Path, label: str
) -> tuple[float, float, dict, RssTimeline]:
    """Peak RSS (GB), wall time (s), JSON result and RSS timeline of one compare by the ``viddiff`` in ``src``."""
    arch = workdir / "viddiff-bench-clip224.json"
    arch.write_text(json.dumps(BENCH_CLIP))
    cache = workdir / f"cache-{label}.sqlite"
    cache.unlink(missing_ok=True)  # every run decodes and embeds: nothing comes from an earlier one
    sets = [
        f"endpoints.default.base_url={base_url}", "endpoints.backoff_base_s=0.01",
        "localizer.clip.model=viddiff-bench-clip224", f"localizer.clip.arch_config={arch}",
        "localizer.clip.pretrained=null", "localizer.clip.device=cpu", f"cache.path={cache}",
    ]
    argv = [sys.executable, "-m", "viddiff.cli", "-q", "compare", str(clips[0]), str(clips[1]),
            "--action", "a squat", "--n-differences", "3", "--json-lines"]
    for item in sets:
        argv += ["--set", item]
    env = {**os.environ, "PYTHONPATH": str(src), "OPENAI_API_KEY": "dummy"}
    out, err = workdir / f"{label}.json", workdir / f"{label}.err"
    started = time.perf_counter()
    with out.open("w") as stdout, err.open("w") as stderr:
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=stderr, env=env, cwd=workdir, text=True)
        timeline = RssTimeline(child.pid)
        poller = threading.Thread(target=timeline.poll, daemon=True)
        poller.start()
        assert child.stdout is not None
        for line in child.stdout:  # one JSON event per line, flushed as it happens
            timeline.events.append((time.perf_counter(), json.loads(line)["type"]))
            stdout.write(line)
        _, status, usage = os.wait4(child.pid, 0)
        timeline.stop()
        poller.join()
    elapsed = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{label}: compare failed:\n{err.read_text()[-2000:]}")
    result = json.loads(out.read_text().splitlines()[-1])["result"]
    return usage.ru_maxrss / 2**20, elapsed, result, timeline


def where_it_comes_from(base: tuple[float, float], frames: int, timeline: RssTimeline) -> str:
    """The anonymous-memory peak split into the imports', the kept frames' and the rest (transient work)."""
    frames_gb = frames * 224 * 224 * 3 / 2**30
    before, after = timeline.peak_between(None, "segmentation"), timeline.peak_between("segmentation", None)
    peak = max(before, after)
    return (f"anonymous memory peak {peak:.2f} GB = imports {base[1]:.2f} + {frames} kept frames {frames_gb:.2f} + "
            f"the rest {peak - base[1] - frames_gb:.2f} (decoding and embedding: peak {before:.2f}; after the "
            f"segmentation, full-size keyframes and differencer: {after:.2f}); imports alone: {base[0]:.2f} GB RSS")


def same_result(a: dict, b: dict) -> bool:
    """Same segmentation, keyframes and verdicts (what the user sees), whichever tree produced them."""
    def seen(result: dict) -> str:
        differences = [
            {k: d[k] for k in ("key", "prediction", "keyframes_a", "keyframes_b", "times_a", "times_b")}
            for d in result["differences"]
        ]
        return json.dumps([result["segmentations"], differences], sort_keys=True)
    return seen(a) == seen(b)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10.0, help="length of the clips this tree compares")
    parser.add_argument("--baseline-src", type=Path, help="another checkout to measure (e.g. before a change)")
    parser.add_argument("--baseline-minutes", type=float, default=1.0,
                        help="clip length for the baseline and for this tree beside it")
    parser.add_argument("--source-fps", type=float, nargs="+", default=[30.0],
                        help="frame rate(s) of the generated clips: one compare per rate")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "viddiff-bench-memory")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from viddiff.testing.fake_openai import FakeOpenAIServer
    from viddiff.testing.responders import ScriptedModel

    args.workdir.mkdir(parents=True, exist_ok=True)
    base = imports_gb(ROOT)
    with FakeOpenAIServer(ScriptedModel()) as server:
        for fps in args.source_fps:
            if args.baseline_src is not None:
                clips = clip_pair(args.workdir, args.baseline_minutes, fps)
                old_gb, old_s, old, old_line = compare(args.baseline_src, clips, server.base_url, args.workdir, "baseline")
                new_gb, new_s, new, new_line = compare(ROOT, clips, server.base_url, args.workdir, "this-tree-short")
                old_anon, new_anon = old_line.peak_between(None, None), new_line.peak_between(None, None)
                print(f"{args.baseline_minutes:g}-min 1080p pair at {fps:g} fps: baseline {old_gb:.2f} GB RSS, "
                      f"{old_anon:.2f} GB anonymous ({old_s:.0f} s); this tree {new_gb:.2f} GB RSS, {new_anon:.2f} GB "
                      f"anonymous ({new_s:.0f} s): {old_anon - new_anon:+.2f} GB anonymous less; "
                      f"same segmentation, keyframes and verdicts: {same_result(old, new)}", flush=True)
            clips = clip_pair(args.workdir, args.minutes, fps)
            gb, seconds, _, timeline = compare(ROOT, clips, server.base_url, args.workdir, "this-tree")
            verdict = "within" if gb <= TARGET_GB else "ABOVE"
            frames = 2 * kept_frames(clips[0])
            print(f"{args.minutes:g}-min 1080p pair at {fps:g} fps: this tree {gb:.2f} GB peak RSS ({seconds:.0f} s), "
                  f"{verdict} the {TARGET_GB} GB target", flush=True)
            print(f"  {where_it_comes_from(base, frames, timeline)}", flush=True)
    print("(compared at 4 fps: compare's default)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
