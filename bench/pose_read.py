"""What one decode for the method's frames and the pose's saves, in CPU seconds of the reads alone (issue 40, item 7).

For each real clip (the Pose2Sim view in tests/data/pose2sim, its 2/3-speed copy, and that view played forwards and
backwards to 10 s, as bench/pose.py builds them), the frames a pose comparison needs are read both ways, alternating
``--repeat`` times: *two reads* (CLIP's frames at 4 fps, shrunk as the cpu-fast preset's CLIP keeps them, then the
pose's at the pose rate, scaled to ``pose.max_side``), as before, and *one decode* for both
(``viddiff.video.read_video_sampled``), as now. It prints the median CPU seconds of each and their ratio, and checks
that both ways give the same frames.

Usage: python bench/pose_read.py [--repeat 4]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from viddiff.backends.clip_frames import clip_frame_shrink
from viddiff.config import load_config
from viddiff.pose.frames import pose_shrink
from viddiff.pose.sampling import pose_rate
from viddiff.video import Sampling, probe_video, read_video, read_video_sampled
from viddiff.video.write import write_video

ROOT = Path(__file__).resolve().parents[1]


def _pose_bench():
    spec = importlib.util.spec_from_file_location("bench_pose", ROOT / "bench" / "pose.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=4, help="alternating runs of each way per clip")
    args = parser.parse_args()
    cfg = load_config(ROOT / "configs" / "cpu-fast.yaml", ["localizer.clip.pretrained=null"])
    clip_sampling = Sampling(target_fps=4.0, max_side=cfg.data.max_side, shrink=clip_frame_shrink(cfg.localizer.clip))
    source = _pose_bench().CLIPS[0]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        clips = {
            "real clip (1.7 s, 100 frames, 1080x1920)": source,
            "its 2/3-speed copy (2.5 s)": write_video(root / "slowed.mp4", read_video(source).frames, fps=40, options={"crf": "18"}),
            "the clip looped to 10 s (600 frames)": _pose_bench().looped_clip(source, root / "long.mp4"),
        }
        print(f"CPU seconds of the reads, median of {args.repeat} alternating runs")
        print(f"{'clip':<42} {'pose fps':>8} {'two reads':>10} {'one decode':>11} {'ratio':>7}")
        for label, path in clips.items():
            info = probe_video(path)
            rate = pose_rate(info.n_frames, info.fps, cfg.pose.fps, cfg.pose.native_up_to_frames)
            pose_sampling = Sampling(target_fps=rate, max_side=cfg.data.max_side, shrink=pose_shrink(cfg.pose.max_side))
            two, one = [], []
            for _ in range(args.repeat):
                start = time.process_time()
                apart = [read_video(path, s.target_fps, max_side=s.max_side, shrink=s.shrink) for s in (clip_sampling, pose_sampling)]
                two.append(time.process_time() - start)
                start = time.process_time()
                together = read_video_sampled(path, (clip_sampling, pose_sampling))
                one.append(time.process_time() - start)
                assert all(np.array_equal(a.frames, b.frames) for a, b in zip(apart, together)), "the frames differ"
            separate, shared = statistics.median(two), statistics.median(one)
            print(f"{label:<42} {rate or info.fps:>8g} {separate:>9.2f}s {shared:>10.2f}s {shared / separate:>6.2f}x", flush=True)


if __name__ == "__main__":
    main()
