"""The ``pose`` method on identical movements: how often it claims a difference that is not there, and the tempo.

For each real clip given (use clips that are not in the test suite), copies that show the very same movement are
written with PyAV: a re-encode (H.264 CRF 30), a same-speed variable-frame-rate copy (uneven presentation
times, ±30%), and 1.5× slowed copies at a constant rate (the same frames at 2/3 of the rate) and at a variable
rate. Each clip is compared with each copy by the ``pose`` method (scripted mapping, a fake model server, the
given localizer) on angle/width statements and tempo statements. A verdict a/b on an angle/width statement is a
false difference; the whole-action duration must read 1× (re-encode, VFR) or 1.5× (slowed) within 2%, and the
tempo statements "slower"/"faster" must be answered b/a on slowed copies.

The script only uses the public API, so the same file measures the code before a change
(``PYTHONPATH=/path/to/old/checkout python bench/pose_identical.py ...``) and after.

Usage: python bench/pose_identical.py CLIP [CLIP ...] [--localizer uniform|clip] [--set KEY=VALUE ...]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from viddiff.api import build_sample
from viddiff.config import load_config
from viddiff.methods.pose import PoseMethod
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel
from viddiff.video import read_video
from viddiff.video.write import write_video

SHAPE = [
    "the knees are straighter",
    "the knees are straighter in stage 1",
    "the squat is deeper",
    "the arms are straighter",
    "the person leans forward more in stage 0",
    "the person is more upright",
    "the stance is wider",
    "the hands are higher",
    "the hips are lower in stage 2",
]
"""Angle/width/height statements: on an identical movement every answer should be c (or no answer)."""
TEMPO = ["the person is slower", "the person is faster"]
SLOW = 1.5
JITTER = 0.3


def variants(clip: Path, out: Path) -> dict[str, tuple[Path, float]]:
    """name → (file, true speed factor of the copy's movement time)."""
    video = read_video(clip)
    frames, fps, n = video.frames, float(video.fps_original), len(video.frames)
    rng = np.random.default_rng(0)

    def uneven(scale: float) -> np.ndarray:
        steps = (scale / fps) * (1 + rng.uniform(-JITTER, JITTER, n - 1))
        steps *= (scale / fps) * (n - 1) / steps.sum()
        return np.round(np.concatenate([[0.0], np.cumsum(steps)]) * 1000) / 1000

    opts = {"crf": "18", "preset": "veryfast"}
    made = {
        "reencode": (write_video(out / f"{clip.stem}.reencode.mp4", frames, fps, options={"crf": "30", "preset": "veryfast"}), 1.0),
        "vfr": (write_video(out / f"{clip.stem}.vfr.mp4", frames, fps, options=opts, times_s=uneven(1.0)), 1.0),
        "slow_cfr": (write_video(out / f"{clip.stem}.slow_cfr.mp4", frames, fps / SLOW, options=opts), SLOW),
        "slow_vfr": (write_video(out / f"{clip.stem}.slow_vfr.mp4", frames, fps / SLOW, options=opts, times_s=uneven(SLOW)), SLOW),
    }
    return made


async def compare(cfg, a: Path, b: Path):
    sample, mode = build_sample(a, b, "a person moving in a lab", differences=SHAPE + TEMPO)
    method = PoseMethod(cfg)
    try:
        return await method.aprocess(sample, mode)
    finally:
        await method.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("clips", nargs="+", type=Path)
    parser.add_argument("--localizer", default="clip", choices=["clip", "uniform"])
    parser.add_argument("--set", dest="sets", action="append", default=[])
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "dummy")
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(ScriptedModel()) as server:
        tmp = Path(tmp)
        sets = offline_overrides(server.base_url, str(tmp / "cache.sqlite"))
        if args.localizer == "uniform":
            sets.append("localizer.method=uniform")
        cfg = load_config(None, sets + args.sets)
        print(f"pose.fps={cfg.pose.fps}  localizer={args.localizer}  extra={args.sets}")
        print(f"{'clip':<34} {'copy':<9} {'a/b of shape':>12} {'uncertain':>9} {'tempo×':>7} {'slower':>6} {'faster':>6}  s")
        false, total, tempo_errors = 0, 0, []
        for clip in args.clips:
            for name, (copy, factor) in variants(clip, tmp).items():
                start = time.perf_counter()
                result = asyncio.run(compare(cfg, clip, copy))
                took = time.perf_counter() - start
                letters = {p.description: p.prediction for p in result.predictions}
                keys = {d.description: d.key for d in result.proposal.differences}
                evidence = {e.key: e for e in result.evidence}
                decisive = [s for s in SHAPE if letters[s] in ("a", "b")]
                uncertain = sum(1 for s in SHAPE if keys[s] in evidence and evidence[keys[s]].status != "measured")
                whole = evidence[keys["the person is slower"]]
                ratio = whole.value_b / whole.value_a if whole.value_a else float("nan")
                tempo_errors.append(abs(ratio / factor - 1))
                false += len(decisive)
                total += len(SHAPE)
                label = f"{clip.parent.parent.name}/{clip.stem}"[-34:]
                print(f"{label:<34} {name:<9} {len(decisive):>5} of {len(SHAPE):<4} {uncertain:>9} {ratio:>7.3f} "
                      f"{str(letters['the person is slower']):>6} {str(letters['the person is faster']):>6}  {took:.1f}"
                      + (f"   a/b: {', '.join(f'{s} → {letters[s]}' for s in decisive)}" if decisive else ""))
        print(f"\nfalse differences: {false} of {total} shape statements ({false / total:.1%}); "
              f"tempo ratio error: max {max(tempo_errors):.2%}, median {np.median(tempo_errors):.2%}")


if __name__ == "__main__":
    main()
