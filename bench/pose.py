"""Body pose on this CPU: speed, detection rate and model size per estimator, and what pose evidence adds to a
`viddiff compare` with the fast CPU preset.

Part 1 runs each estimator that can run here on every frame of real clips (the two Pose2Sim clips in
tests/data/pose2sim, plus any given with --clips) at their full size: milliseconds per frame
(estimation only; decoding excluded), the share of frames with a person, and the model files' size. The last
column is the speed against BlazePose's legacy tracking mode, measured in the same run. RTMPose (rtmlib) runs
only with local ONNX files (--rtmpose-det, --rtmpose-pose): its weights cannot be downloaded here.

Part 2 is bench/stages.py's comparison (two generated 10-s squat clips, 960x720, read at 4 fps, the
cpu-fast preset, random CLIP weights, a fake model server answering after --latency seconds) once as is and
once with ``pose.evidence: true`` (after one discarded warm-up comparison, each with a fresh cache), and the
same on the real clip against its 2/3-speed copy and on a real 10-s 1080x1920 pair (two Pose2Sim views, each
played forwards and backwards to 10 s: no longer real clip is at hand), at the pose defaults (``pose.fps`` 15, a clip of at most
``pose.native_up_to_frames`` frames at its native rate). "pose step" is the time from the proposal to the
mapping answer and both videos' keypoints (reading them again at the pose rate and estimating), which runs beside
the localizer and the differencer's calls; "pose share" is the extra time of the whole comparison over the one
without pose, measured in the same run (target: at most 100%); the CPU seconds of the process tell what the
pose costs when the machine is shared (wall times then stretch with the other load), and "CPU share" is the
extra CPU time with pose over without (target: at most 100%). ``--second-look-every 0 0.25`` times the BlazePose
second look on every frame (as before) and at its default rate, in the same run; ``--max-side 0 960`` the pose
frames at the size read (as before) and scaled to ``pose.max_side`` 960 (the default), in the same run;
``--read separate shared`` the pose frames decoded again after the mapping call (as before) and decoded with the
method's own frames, one decode per video (the default), in the same run; ``--detect-every 0 0.25`` BlazePose's
detector on every frame (the default) and at most every 0.25 s with the people followed in between;
``--repeat 3`` runs each comparison three times, alternating, and prints the medians (CPU times on a shared
machine move by tens of per cent from run to run).

Usage: python bench/pose.py [--clips DIR] [--latency 1.0] [--compare-only] [--pose-fps 15] [--second-look-every 0 0.25]
       [--max-side 0 960] [--read separate shared] [--detect-every 0 0.25] [--real-only] [--repeat 3]
       [--rtmpose-det F.onnx --rtmpose-pose F.onnx]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Optional

import numpy as np

from viddiff.api import VidDiff, build_sample
from viddiff.config import PoseConfig, load_config
from viddiff.pose.blazepose import BlazePose
from viddiff.pose.estimators import PoseEstimator, build_pose_estimator
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.pose_models import write_blazepose_task
from viddiff.testing.responders import ScriptedModel
from viddiff.video import probe_video, read_video
from viddiff.video.write import write_video

ROOT = Path(__file__).resolve().parents[1]
CLIPS = sorted((ROOT / "tests" / "data" / "pose2sim").glob("*.mp4"))


def _stages_module():
    spec = importlib.util.spec_from_file_location("bench_stages", ROOT / "bench" / "stages.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def model_bytes(estimator: PoseEstimator) -> int:
    if isinstance(estimator, BlazePose) and estimator.api == "legacy":
        import mediapipe

        modules = Path(mediapipe.__file__).parent / "modules"
        files = [modules / "pose_detection" / "pose_detection.tflite", modules / "pose_landmark" / "pose_landmark_full.tflite"]
        return sum(f.stat().st_size for f in files)
    if isinstance(estimator, BlazePose):
        return estimator.model_path.stat().st_size
    return sum(Path(p).stat().st_size for p in (estimator.det_model, estimator.pose_model) if Path(p).is_file())


def time_estimator(estimator: PoseEstimator, clips: list[Path]) -> tuple[float, float]:
    """(ms per frame, detection rate) over every frame of every clip; the first call's warm-up excluded."""
    estimator.estimate([np.zeros((64, 64, 3), np.uint8)], [0.0])
    seconds, frames, found = 0.0, 0, 0
    for clip in clips:
        video = read_video(clip)
        start = time.perf_counter()
        _, confidence = estimator.estimate(list(video.frames), list(video.times_s))
        seconds += time.perf_counter() - start
        frames += len(video.frames)
        found += int((confidence > 0).any(axis=1).sum())
    return 1000 * seconds / frames, found / frames


def part_one(clips: list[Path], task: Path, det: Optional[str], pose: Optional[str]) -> None:
    estimators: list[tuple[str, PoseConfig]] = [
        ("blazepose legacy, tracking (default)", PoseConfig()),
        ("blazepose legacy, every frame alone", PoseConfig(blazepose={"static_image_mode": True})),
        ("blazepose Tasks API, VIDEO mode", PoseConfig(blazepose={"model_path": str(task)})),
        ("blazepose Tasks API, IMAGE mode", PoseConfig(blazepose={"model_path": str(task), "static_image_mode": True})),
    ]
    if det and pose:
        estimators.append(("rtmpose (your ONNX files)", PoseConfig(
            estimator="rtmpose", rtmpose={"det_model": det, "pose_model": pose, "pose_input_size": [192, 256]})))
    infos = [probe_video(c) for c in clips]
    sizes = ", ".join(sorted({f"{i.width}x{i.height}" for i in infos}))
    print(f"Part 1: every frame of {len(clips)} real clips ({sum(i.n_frames for i in infos)} frames, {sizes}), "
          f"estimation only, CPU, {os.cpu_count()} cores")
    print(f"{'estimator':<40} {'ms/frame':>9} {'detected':>9} {'model MB':>9} {'vs default':>11}")
    baseline = None
    for label, cfg in estimators:
        estimator = build_pose_estimator(cfg)
        ms, rate = time_estimator(estimator, clips)
        baseline = baseline or ms
        print(f"{label:<40} {ms:>9.1f} {rate:>8.0%} {model_bytes(estimator) / 1e6:>9.1f} {ms / baseline:>10.2f}x", flush=True)
    if not (det and pose):
        print("rtmpose: not run (its weights come from download.openmmlab.com on first use; give --rtmpose-det/--rtmpose-pose)")


def compare_time(
    videos: tuple[Path, Path], base_url: str, cache: Path, pose: bool, stages, pose_fps: Optional[float] = None,
    second_look_every_s: Optional[float] = None, max_side: Optional[int] = None, shared_read: bool = True,
    detect_every_s: Optional[float] = None,
) -> dict[str, float]:
    overrides = [f"endpoints.default.base_url={base_url}", "localizer.clip.pretrained=null", "localizer.clip.device=cpu",
                 f"cache.path={cache}", f"pose.evidence={str(pose).lower()}"]
    overrides += [f"pose.fps={pose_fps}"] if pose_fps else []
    overrides += [f"pose.blazepose.second_look_every_s={second_look_every_s}"] if second_look_every_s is not None else []
    overrides += [f"pose.max_side={max_side or 'null'}"] if max_side is not None else []
    overrides += [f"pose.blazepose.detect_every_s={detect_every_s}"] if detect_every_s is not None else []
    cfg = load_config(ROOT / "configs" / "cpu-fast.yaml", overrides)
    embedder = stages.TimedEmbedder(cfg.localizer.clip)
    embedder.embed_images(np.zeros((1, 8, 8, 3), np.uint8))  # model built outside the comparison
    sample, mode = build_sample(*videos, "barbell back squat",
                                differences=["the squat is deeper", "the descent is slower", "the knees are straighter"])

    async def run() -> dict[str, float]:
        vd = VidDiff(cfg, embedder=embedder)
        prepare = vd.pose_evidence.prepare
        spent = {"pose": 0.0}

        async def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return await prepare(*args, **kwargs)
            finally:
                spent["pose"] += time.perf_counter() - start

        vd.pose_evidence.prepare = timed
        if not shared_read:  # as before: the pose decodes each video again after the mapping call
            load = vd.load_videos_and_pose
            vd.load_videos_and_pose = lambda sample, fps=None, *, pose: load(sample, fps, pose=False)
        try:
            start, cpu = time.perf_counter(), time.process_time()
            await vd.arun_pair(sample, mode)
            return {"whole": time.perf_counter() - start, "pose": spent["pose"], "cpu": time.process_time() - cpu}
        finally:
            await vd.aclose()

    return asyncio.run(run())


def looped_clip(source: Path, out: Path, seconds: float = 10.0) -> Path:
    """A real clip played forwards and backwards until it lasts ``seconds`` (its full size and rate, H.264): no
    longer real clip of one person ships with the project or the Pose2Sim/Sports2D wheels, so the 10-s real pair
    is built from the 1.7-s Pose2Sim views this way."""
    video = read_video(source)
    frames, n = video.frames, int(round(seconds * video.fps_original))
    order = np.concatenate([np.arange(len(frames)), np.arange(len(frames))[::-1]])
    looped = (frames[order[i % len(order)]] for i in range(n))  # a generator: 10 s of 1080p never sit in memory
    return write_video(out, looped, fps=video.fps_original, options={"crf": "18"})


def part_two(
    latency: float, root: Path, base_url: str, pose_rates: list[float], second_looks: list[float], max_sides: list[int],
    real_too: bool, reads: list[str], detect_every: list[float], synthetic_too: bool = True, repeat: int = 1,
) -> None:
    stages = _stages_module()
    params = stages.sample_pair(stages.ACTIONS[0], np.random.default_rng(0))
    synthetic = (root / "a.mp4", root / "b.mp4")
    for i, (path, p) in enumerate(zip(synthetic, params)):
        stages.write_clip(path, p, seed=i)
    pairs = [("bench/stages.py's two 10-s synthetic squats", synthetic)] if synthetic_too else []
    if real_too:
        real = CLIPS[0]
        slowed = write_video(root / "slowed.mp4", read_video(real).frames, fps=40, options={"crf": "18"})
        pairs.append(("real clip vs its 2/3-speed copy (1.7 s, 2.5 s)", (real, slowed)))
        long_pair = tuple(looped_clip(clip, root / f"long_{clip.stem}.mp4") for clip in (CLIPS[0], CLIPS[1]))
        pairs.append(("real 10-s 1080x1920 pair (cam01, cam02 looped)", long_pair))
    print(f"\nPart 2: viddiff compare, cpu-fast preset, 3 statements, {latency:.1f} s per model call, CLIP at 4 fps")
    print(f"{'videos':<44} {'pose.fps':>8} {'2nd look':>8} {'max side':>8} {'read':>8} {'detect':>7} {'without pose':>13} {'with pose':>10} {'pose step':>10} "
          f"{'pose share':>11} {'CPU s without/with':>19} {'CPU share':>10}")
    for label, videos in pairs:
        tag = label.split()[0]
        compare_time(videos, base_url, root / f"{tag}-warm-up.sqlite", True, stages)  # one-time imports and set-up
        settings = [(r, e, m, d, k) for r in pose_rates for e in second_looks for m in max_sides for d in reads for k in detect_every]
        plains: list[dict[str, float]] = []
        poseds: dict[tuple, list[dict[str, float]]] = {setting: [] for setting in settings}
        for run in range(repeat):  # alternating, each with a fresh cache: the machine's other load hits all alike
            plains.append(compare_time(videos, base_url, root / f"{tag}-plain-{run}.sqlite", False, stages))
            for rate, every, side, read, detect in settings:
                poseds[(rate, every, side, read, detect)].append(compare_time(
                    videos, base_url, root / f"{tag}-pose-{rate}-{every}-{side}-{read}-{detect}-{run}.sqlite", True, stages,
                    rate, every, side, shared_read=read == "shared", detect_every_s=detect,
                ))
        plain = _median(plains)
        for (rate, every, side, read, detect), runs in poseds.items():
            posed = _median(runs)
            share = (posed["whole"] - plain["whole"]) / plain["whole"]
            cpu_share = (posed["cpu"] - plain["cpu"]) / plain["cpu"]
            print(f"{label:<44} {rate:>8g} {every:>7g}s {side or 'full':>8} {read:>8} {detect:>6g}s {plain['whole']:>12.1f}s {posed['whole']:>9.1f}s "
                  f"{posed['pose']:>9.1f}s {share:>10.0%} {plain['cpu']:>9.1f}/{posed['cpu']:<8.1f} {cpu_share:>9.0%}", flush=True)


def _median(runs: list[dict[str, float]]) -> dict[str, float]:
    return {key: float(np.median([run[key] for run in runs])) for key in runs[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=Path, help="a folder of more .mp4 clips to time part 1 on")
    parser.add_argument("--latency", type=float, default=1.0, help="seconds the fake server takes per model call")
    parser.add_argument("--rtmpose-det", help="a local YOLOX .onnx for rtmpose")
    parser.add_argument("--rtmpose-pose", help="a local RTMPose-m (192x256) .onnx for rtmpose")
    parser.add_argument("--skip-compare", action="store_true", help="part 1 only")
    parser.add_argument("--compare-only", action="store_true", help="part 2 only")
    parser.add_argument("--pose-fps", type=float, nargs="+", default=[15.0], help="pose.fps values to time (part 2)")
    parser.add_argument("--second-look-every", type=float, nargs="+", default=[0.25],
                        help="pose.blazepose.second_look_every_s values to time (part 2; 0 = every frame, as before)")
    parser.add_argument("--max-side", type=int, nargs="+", default=[960],
                        help="pose.max_side values to time (part 2; 0 = the frames at the size read, as before)")
    parser.add_argument("--read", nargs="+", default=["shared"], choices=["shared", "separate"],
                        help="pose frames decoded with the method's own (shared, the default) or again after the "
                        "mapping call (separate, as before); part 2")
    parser.add_argument("--detect-every", type=float, nargs="+", default=[0.0],
                        help="pose.blazepose.detect_every_s values to time (part 2; 0 = the detector on every frame, the default)")
    parser.add_argument("--synthetic-only", action="store_true", help="part 2 on the synthetic pair only")
    parser.add_argument("--real-only", action="store_true", help="part 2 on the real pairs only")
    parser.add_argument("--repeat", type=int, default=1, help="alternating runs of each comparison (part 2; medians shown)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    os.environ.setdefault("OPENAI_API_KEY", "dummy")
    clips = CLIPS + (sorted(args.clips.glob("*.mp4")) if args.clips else [])
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if not args.compare_only:
            part_one(clips, write_blazepose_task(root / "pose_landmarker_full.task"), args.rtmpose_det, args.rtmpose_pose)
        if not args.skip_compare:
            with FakeOpenAIServer(ScriptedModel(), latency_s=args.latency) as server:
                part_two(args.latency, root, server.base_url, args.pose_fps, args.second_look_every, args.max_side,
                         not args.synthetic_only, args.read, args.detect_every, synthetic_too=not args.real_only,
                         repeat=args.repeat)


if __name__ == "__main__":
    main()
