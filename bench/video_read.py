"""Benchmark: read a long 720p video at 2 fps with viddiff.video vs. decoding every frame.

The baseline is what the public reference code did: decode the whole video
into one array, then keep every ``stride``-th frame. Each measurement runs in
a fresh subprocess so its peak RSS (``ru_maxrss``) belongs to that read alone.
The long test video is generated once and cached in ``--workdir``.

    python bench/video_read.py                 # 3 min, 1280x720, 30 fps
    python bench/video_read.py --seconds 20    # quick run
    python bench/video_read.py --baseline-src /path/to/older/checkout   # also time that version's reader

With ``--baseline-src`` the same reads also run with another checkout's ``viddiff`` (e.g. the
commit before a change to ``viddiff/video.py``), alternating old and new ``--repeat`` times, and the
ratio old/new of the best times is printed: a regression check measured in one run.

Naive runs whose frames would not fit in ``--naive-limit-gb`` are skipped
(the machine is shared; a 3-minute 720p video is ~15 GB of RGB frames).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator, Optional

import numpy as np

BLOCK = 16  # noise texture cell size in pixels: coarse enough for a fast encode


def synthetic_frames(n_frames: int, width: int, height: int, seed: int = 0) -> Iterator[np.ndarray]:
    """Scrolling coarse noise, a band of fresh noise and a bouncing box.

    Cheap to draw; the fresh band keeps the bitrate in the range of real
    footage (a pure scroll compresses to almost nothing and decodes too fast).
    """
    rng = np.random.default_rng(seed)

    def noise(rows: int, cols: int) -> np.ndarray:
        cells = rng.integers(0, 256, size=(rows // BLOCK + 1, cols // BLOCK + 1, 3), dtype=np.uint8)
        return np.repeat(np.repeat(cells, BLOCK, axis=0), BLOCK, axis=1)[:rows, :cols]

    texture = noise(height, 2 * width)
    band = height // 8
    box = max(8, height // 6)
    for t in range(n_frames):
        shift = (4 * t) % width
        frame = texture[:, shift:shift + width].copy()
        frame[-band:] = noise(band, width)
        x = (7 * t) % (width - box)
        y = abs((5 * t) % (2 * (height - box)) - (height - box))
        frame[y:y + box, x:x + box] = 255
        yield frame


def ensure_video(workdir: Path, seconds: float, fps: int, width: int, height: int) -> Path:
    """Generate the benchmark video unless the cached one exists; write atomically."""
    from viddiff.video.write import write_video

    path = workdir / f"long_{seconds:g}s_{width}x{height}_{fps}fps.mp4"
    if path.exists():
        return path
    workdir.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial.mp4")
    n_frames = round(seconds * fps)
    start = time.perf_counter()
    write_video(partial, synthetic_frames(n_frames, width, height), fps, options={"preset": "ultrafast"})
    partial.rename(path)
    size_mb = path.stat().st_size / 2**20
    print(f"generated {path} ({n_frames} frames, {size_mb:.0f} MB) in {time.perf_counter() - start:.0f} s")
    return path


# --------------------------------------------------------------------------- child side


def naive_read(path: str, backend: str, stride: int) -> np.ndarray:
    """The baseline: every frame decoded into one array, then subsampled."""
    if backend == "decord":
        import decord

        reader = decord.VideoReader(path, ctx=decord.cpu(0))
        everything = reader.get_batch(list(range(len(reader)))).asnumpy()
    else:
        import av

        with av.open(path) as container:
            stream = container.streams.video[0]
            stream.thread_type = "AUTO"
            everything = np.stack([f.to_ndarray(format="rgb24") for f in container.decode(stream)])
    return everything[::stride]


def child(method: str, backend: str, path: str, target_fps: float) -> None:
    """Run one read and print its time, peak RSS and a digest of the frames as JSON."""
    from viddiff.video import compute_stride, probe_video, read_video

    info = probe_video(path, backend=backend)  # warms up imports and the file cache for both methods
    stride = compute_stride(info.fps, target_fps)
    base_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    cpu_start = _cpu_seconds()
    start = time.perf_counter()
    if method == "ours":
        frames = read_video(path, target_fps=target_fps, backend=backend).frames
    else:
        frames = naive_read(path, backend, stride)
    seconds = time.perf_counter() - start
    cpu_s = _cpu_seconds() - cpu_start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    digest = hashlib.sha1(np.ascontiguousarray(frames).tobytes()).hexdigest()[:12]
    print(json.dumps({"time_s": seconds, "cpu_s": cpu_s, "peak_mb": peak_mb, "base_mb": base_mb,
                      "n": len(frames), "digest": digest}))


def _cpu_seconds() -> float:
    """User + system CPU time of this process, all threads: steadier than wall time on a shared machine."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# --------------------------------------------------------------------------- parent side


def measure(method: str, backend: str, path: Path, target_fps: float, src: Optional[Path] = None) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src or Path(__file__).resolve().parents[1])}
    out = subprocess.run(
        [sys.executable, __file__, "--child", method, backend, str(path), str(target_fps)],
        check=True, capture_output=True, text=True, env=env,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def ratio(naive: Optional[dict], ours: dict, key: str) -> str:
    return f"{naive[key] / ours[key]:.1f}x" if naive else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/viddiff-bench"))
    parser.add_argument("--seconds", type=float, default=180.0, help="video duration (default 180)")
    parser.add_argument("--fps", type=int, default=30)
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=720)
    parser.add_argument("--target-fps", type=float, default=2.0)
    parser.add_argument("--backends", nargs="+", default=["decord", "pyav"], choices=["decord", "pyav"])
    parser.add_argument("--naive-limit-gb", type=float, default=6.0,
                        help="skip naive reads whose decoded frames (x2 for list/batch copies) exceed this")
    parser.add_argument("--baseline-src", type=Path,
                        help="another checkout whose viddiff/video.py is timed against this one's (default: none)")
    parser.add_argument("--repeat", type=int, default=3, help="alternating runs per version with --baseline-src")
    parser.add_argument("--child", nargs=4, metavar=("METHOD", "BACKEND", "PATH", "TARGET_FPS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        method, backend, path, target = args.child
        child(method, backend, path, float(target))
        return

    video = ensure_video(args.workdir, args.seconds, args.fps, args.width, args.height)
    n_frames = round(args.seconds * args.fps)
    naive_gb = 2 * n_frames * args.width * args.height * 3 / 2**30
    print(f"video: {video.name}, {n_frames} frames; target {args.target_fps:g} fps; "
          f"naive needs ~{naive_gb:.1f} GB (limit {args.naive_limit_gb:g} GB)\n")
    header = f"{'backend':8} {'method':6} {'time s':>8} {'peak MB':>9} {'read MB':>8} {'frames':>6}  digest"
    print(header)
    rows = []
    for backend in args.backends:
        ours = measure("ours", backend, video, args.target_fps)
        naive = measure("naive", backend, video, args.target_fps) if naive_gb <= args.naive_limit_gb else None
        for method, result in (("ours", ours), ("naive", naive)):
            if result is None:
                print(f"{backend:8} {method:6} skipped: needs ~{naive_gb:.1f} GB > --naive-limit-gb")
                continue
            print(f"{backend:8} {method:6} {result['time_s']:8.2f} {result['peak_mb']:9.0f} "
                  f"{result['peak_mb'] - result['base_mb']:8.0f} {result['n']:6d}  {result['digest']}")
        rows.append((backend, ours, naive))
    print("\nratios naive/ours (higher = ours better); 'read MB' = peak RSS minus RSS before the read")
    for backend, ours, naive in rows:
        same = "-" if naive is None else ("yes" if naive["digest"] == ours["digest"] else "NO")
        read_ratio = "-" if naive is None else (
            f"{(naive['peak_mb'] - naive['base_mb']) / max(1.0, ours['peak_mb'] - ours['base_mb']):.1f}x"
        )
        print(f"{backend:8} time {ratio(naive, ours, 'time_s'):>7}  peak RSS {ratio(naive, ours, 'peak_mb'):>7}  "
              f"read MB {read_ratio:>7}  identical frames: {same}")
    if args.baseline_src:
        compare_versions(args.baseline_src, video, args.backends, args.target_fps, args.repeat)


def compare_versions(baseline_src: Path, video: Path, backends: list[str], target_fps: float, repeat: int) -> None:
    """Time this checkout's reader against another's, alternating runs so machine load hits both alike."""
    print(f"\nthis checkout vs {baseline_src} (best of {repeat}, alternating; old/new > 1: this one is faster)")
    print(f"{'backend':8} {'old s':>7} {'new s':>7} {'old/new':>8} {'old cpu':>8} {'new cpu':>8} {'old/new':>8}"
          f" {'old MB':>7} {'new MB':>7}  same frames")
    for backend in backends:
        old_runs, new_runs = [], []
        for _ in range(repeat):
            old_runs.append(measure("ours", backend, video, target_fps, baseline_src))
            new_runs.append(measure("ours", backend, video, target_fps))
        old, new = (min(runs, key=lambda r: r["time_s"]) for runs in (old_runs, new_runs))
        old_cpu, new_cpu = (min(r["cpu_s"] for r in runs) for runs in (old_runs, new_runs))
        same = "yes" if old["digest"] == new["digest"] else "NO"
        print(f"{backend:8} {old['time_s']:7.2f} {new['time_s']:7.2f} {old['time_s'] / new['time_s']:7.2f}x "
              f"{old_cpu:8.2f} {new_cpu:8.2f} {old_cpu / new_cpu:7.2f}x "
              f"{old['peak_mb']:7.0f} {new['peak_mb']:7.0f}  {same}")


if __name__ == "__main__":
    main()
