"""``viddiff pose VIDEO --out DIR``: one video's body pose and kinematics as files (docs/pose.md).

Writes ``keypoints.csv`` (joints per sampled frame, in the upright frame's pixels), ``angles.csv`` (joint angles,
trunk lean, widths and heights per frame, after side fixing and smoothing; an empty cell is a gap) and, with
``--overlay``, ``overlay.mp4``: the sampled frames with the skeleton drawn, at their own times.

``viddiff pose FRONT SIDE --calibration setup.toml --out DIR [--trc take.trc]``: one take filmed by several
calibrated cameras, triangulated: ``angles.csv`` holds the body's own 3D angles, ``keypoints.csv`` the main
video's 2D keypoints, the overlay the 3D skeleton as the main camera pictures it, and ``--trc`` the 3D markers
as an OpenSim ``.trc`` file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Union

import numpy as np

from viddiff.cache import open_cache
from viddiff.config import config_from_args
from viddiff.errors import ViddiffError
from viddiff.pose.absence import REASONS as ABSENCE
from viddiff.pose.drawing import draw_skeleton, track_keypoints
from viddiff.pose.estimators import build_pose_estimator
from viddiff.pose.frames import pose_shrink
from viddiff.pose.export import write_angles_csv, write_keypoints_csv
from viddiff.pose.multiview import PerformancePose, estimate_performance
from viddiff.pose.performance_input import performance_cameras, performance_paths
from viddiff.pose.people import describe_subject
from viddiff.pose.track import PoseTrack, estimate_track
from viddiff.pose.trc import write_trc
from viddiff.schema import VideoRef
from viddiff.report.compare import ensure_writable_dir
from viddiff.store import output_error
from viddiff.video import read_video
from viddiff.video.write import write_video
from viddiff.console import count_of

DEFAULT_FPS = 30.0


def cli_pose(args: argparse.Namespace) -> int:
    cfg = config_from_args(args)
    pose = cfg.pose
    fps = args.fps if args.fps is not None else (pose.fps or DEFAULT_FPS)
    if fps <= 0:
        raise ViddiffError(f"--fps must be positive, got {fps}")
    ref = _performance(args)
    out = ensure_writable_dir(Path(args.out).expanduser(), "--out")
    videos = [
        read_video(
            path, target_fps=fps, fps_original=args.fps_original, max_side=cfg.data.max_side,
            backend=cfg.data.video_backend, shrink=pose_shrink(pose.max_side),
        )
        for path in performance_paths(ref)
    ]
    video = videos[0]
    estimator = build_pose_estimator(pose)
    cache = open_cache(cfg.cache)
    try:
        if ref.views:
            performance = estimate_performance(
                videos, performance_cameras(ref, "the take"), estimator, cache, pose.subject,
                sources=performance_paths(ref),
            )
            body: Union[PoseTrack, PerformancePose] = performance
            track = performance.main
        else:
            body = track = estimate_track(video, estimator, cache, subject=pose.subject)
    finally:
        if cache is not None:
            cache.close()
    kinematics = body.kinematics(
        min_confidence=pose.min_confidence, smoothing_frames=pose.smoothing_frames, fix_sides=pose.fix_side_swaps
    )
    written = []
    try:
        written.append(write_keypoints_csv(out / "keypoints.csv", track))
        written.append(write_angles_csv(out / "angles.csv", kinematics))
        if isinstance(body, PerformancePose) and args.trc:
            written.append(write_trc(Path(args.trc).expanduser(), body))
        if args.overlay:
            shrunk = np.array(video.size, dtype=np.float64) / (video.frames.shape[2], video.frames.shape[1])
            frames = (  # drawn on the frames the pose saw (no larger than pose.max_side)
                draw_skeleton(frame, track_keypoints(xy / shrunk, conf), min_confidence=pose.min_confidence)
                for frame, xy, conf in zip(video.frames, kinematics.xy, kinematics.confidence)
            )
            times = None if video.frame_times_s is None else list(video.times_s)
            written.append(write_video(out / "overlay.mp4", _even(frames), fps=video.fps, times_s=times))
    except OSError as exc:
        raise output_error(Path(exc.filename or out), exc) from None
    found = int(track.detected.sum())
    print(
        f"{args.video[0]}: measured {describe_subject(track.subject)}; found in {found} of {len(track.detected)} frames "
        f"at {video.fps:.3g} fps ({body.estimator}){dropped_frames(track)}; side swaps fixed in "
        f"{count_of(int(kinematics.swapped.any(axis=1).sum()), 'frame')}",
        file=sys.stderr,
    )
    if isinstance(body, PerformancePose):
        print(f"views aligned in time: {body.sync.describe()}", file=sys.stderr)
    for path in written:
        print(path)
    return 0


def _performance(args: argparse.Namespace) -> VideoRef:
    """The take: one video, or several of it from calibrated cameras (checked before any frame is read)."""
    paths = [str(Path(video).expanduser().absolute()) for video in args.video]
    if len(paths) == 1:
        if args.calibration or args.trc:
            flag = "--calibration" if args.calibration else "--trc"
            raise ViddiffError(f"{flag} is for a take filmed by several calibrated cameras: give each camera's video")
        return VideoRef(path=paths[0], fps_original=args.fps_original)
    if not args.calibration:
        raise ViddiffError(
            f"{len(paths)} videos of one take need --calibration, the file that says where their cameras stand "
            "(a Pose2Sim .toml or a Qualisys .qca.txt), one camera per video in their order"
        )
    ref = VideoRef(
        path=paths[0], fps_original=args.fps_original,
        views=tuple(VideoRef(path=path, fps_original=args.fps_original) for path in paths[1:]),
        calibration=str(Path(args.calibration).expanduser().absolute()),
    )
    performance_cameras(ref, "the take")
    return ref


def dropped_frames(track: PoseTrack) -> str:
    """Why the measured person has no keypoints in the other frames, each frame counted once by its reason."""
    missing = int((~track.detected).sum())
    if not missing:
        return ""
    dropped = track.subject.dropped or {"nobody": missing}  # a track without reasons: nobody was followed
    return f"; not in {missing}: " + ", ".join(f"{n} {ABSENCE[key]}" for key, n in dropped.items())


def _even(frames):
    """Frames cropped to even sizes (the H.264 encoder's yuv420p needs them)."""
    for frame in frames:
        height, width = frame.shape[:2]
        yield frame[: height - height % 2, : width - width % 2]
