"""People, identity, camera view and sides on real clips (the Pose2Sim and Sports2D demo videos, BSD-3).

    python bench/pose_people.py CLIPS_DIR [--fps 15] [--cache PATH]

CLIPS_DIR holds the wheels' folders: ``Pose2Sim/Demo_SinglePerson/videos/cam0{1..4}.mp4``,
``Pose2Sim/Demo_MultiPerson/videos/cam0{1..4}.mp4`` and ``Sports2D/Demo/demo.mp4`` (unzip the ``pose2sim`` and
``sports2d`` wheels from PyPI). Prints, each against the single-person tracker of before measured in the same run:

- people found per frame on the two-person clips, and the cost per frame, per detection method;
- the wide frame: two 884×498 copies of the Sports2D demo side by side (1768×498), people found in each half;
- identity: the single-person tracker's breaks caught as identity gaps on the two-person clips and the
  Sports2D demo, and trunk-lean jumps (> 20° between samples) left in the measured series; the measured person's
  frames, and each frame without them by its reason (also in the wide frame);
- camera views of the four synchronised single-person cameras, 3D and 2D, and the spread of the knee angle
  across the four views, from 2D keypoints and from 3D world landmarks;
- sides: frames relabelled with continuity alone and with the view, frames left unresolved.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import numpy as np

from viddiff.cache import Cache
from viddiff.config import PoseConfig
from viddiff.pose.absence import REASONS as ABSENCE
from viddiff.pose.blazepose import BlazePose
from viddiff.pose.facing import facing_per_frame
from viddiff.pose.kinematics import compute_kinematics, joint_angle
from viddiff.pose.people import describe_subject
from viddiff.pose.skeleton import INDEX
from viddiff.pose.track import PoseTrack, estimate_track
from viddiff.pose.view import comparable_views, estimate_view, view_gap
from viddiff.video import VideoFrames, read_video


def timed(video: VideoFrames, estimator, cache: Cache) -> tuple[PoseTrack, float]:
    start = time.perf_counter()
    track = estimate_track(video, estimator, cache)
    return track, (time.perf_counter() - start) / max(len(video.frames), 1)


def methods() -> dict[str, BlazePose]:
    return {
        "single (legacy tracker)": BlazePose(PoseConfig(blazepose={"max_people": 1})),
        "tasks, num_poses=4": BlazePose(PoseConfig(blazepose={"second_look": False, "crop_search": False})),
        "+ second look": BlazePose(PoseConfig(blazepose={"crop_search": False})),
        "+ second look + crops (default)": BlazePose(PoseConfig()),
    }


def people(root: Path, fps: float, cache: Cache) -> None:
    print("\n## People on the two-person clips (Pose2Sim Demo_MultiPerson), frames with >= 2 people found")
    estimators = methods()
    print("| camera | frames | " + " | ".join(estimators) + " |")
    print("|---|---|" + "---|" * len(estimators))
    cost = {name: [] for name in estimators}
    gaps = []
    for cam in range(1, 5):
        video = read_video(root / f"Pose2Sim/Demo_MultiPerson/videos/cam0{cam}.mp4", target_fps=fps)
        cells = []
        for name, estimator in estimators.items():
            track, seconds = timed(video, estimator, cache)
            cost[name].append(seconds)
            cells.append(f"{int((track.people >= 2).sum())} (subject at {track.subject.position})")
            if name.startswith("single"):
                gaps.append(track.subject.identity_gaps)
        print(f"| cam0{cam} | {len(video.frames)} | " + " | ".join(cells) + " |")
    base = np.mean(cost["single (legacy tracker)"])
    print("\ncost per frame (first run of each; cached runs are ~0): " + ", ".join(
        f"{name} {np.mean(v) * 1000:.0f} ms ({np.mean(v) / base:.1f}x)" for name, v in cost.items()
    ))
    print(f"single-person tracker: identity breaks caught as gaps per camera: {gaps}")


def measured(track: PoseTrack) -> str:
    """The measured person's frames: found in how many, how many from the first to the last frame they were found
    in, and each frame without them by its reason (:data:`viddiff.pose.absence.REASONS`)."""
    detected = track.detected
    seen = np.flatnonzero(detected)
    span = detected[seen[0]: seen[-1] + 1] if len(seen) else detected[:0]
    reasons = ", ".join(f"{n} {ABSENCE[key]}" for key, n in track.subject.dropped.items()) or "none"
    return (f"measured person found in {int(detected.sum())} of {len(detected)} frames ({detected.mean():.0%}); "
            f"in {int(span.sum())} of the {len(span)} from their first to their last; without them: {reasons}")


def identity(root: Path, fps: float, cache: Cache) -> None:
    print("\n## Identity on the Sports2D demo (1768x994, a person on a roof, others walking past)")
    video = read_video(root / "Sports2D/Demo/demo.mp4", target_fps=fps)
    for name, estimator in methods().items():
        track, seconds = timed(video, estimator, cache)
        lean = track.kinematics().values["trunk_lean"]
        jumps = int((np.abs(np.diff(lean)) > 20).sum())
        print(f"- {name}: person in {track.detection_rate():.0%} of {len(video.frames)} frames, people_max "
              f"{track.subject.people_max}, frames with others {track.subject.frames_with_others}, identity gaps "
              f"{track.subject.identity_gaps}, subject at {track.subject.position}, trunk-lean jumps > 20 deg "
              f"between samples {jumps}; {seconds * 1000:.0f} ms/frame")
        print(f"  {measured(track)}")


def wide(root: Path, fps: float, cache: Cache) -> None:
    import cv2

    print("\n## Wide frame: two 884x498 copies of the Sports2D demo side by side (1768x498)")
    video = read_video(root / "Sports2D/Demo/demo.mp4", target_fps=fps)
    half = np.stack([cv2.resize(f, (884, 498), interpolation=cv2.INTER_AREA) for f in video.frames])
    both = np.ascontiguousarray(np.concatenate([half, half[:, :, ::-1]], axis=2))
    estimators = methods()
    for name, estimator in estimators.items():
        alone, t_alone = timed(dataclasses.replace(video, frames=half), estimator, cache)
        start = time.perf_counter()
        found = estimator.estimate_people(list(both), [float(t) for t in video.times_s])
        seconds = (time.perf_counter() - start) / len(both)
        left = np.mean([any(np.nanmedian(p.xy[:, 0]) < 884 for p in f) for f in found])
        right = np.mean([any(np.nanmedian(p.xy[:, 0]) >= 884 for p in f) for f in found])
        print(f"- {name}: 884x498 alone {alone.detection_rate():.0%}; side by side: left half {left:.0%}, "
              f"right half {right:.0%} of {len(both)} frames; {seconds * 1000:.0f} ms/frame")
    track = estimate_track(dataclasses.replace(video, frames=both), estimators["+ second look + crops (default)"], cache)
    print(f"- side by side, default: {describe_subject(track.subject)}; {measured(track)}")


def knee_3d(world: np.ndarray, side: str) -> np.ndarray:
    return joint_angle(*(world[:, INDEX[f"{side}_{j}"]] for j in ("hip", "knee", "ankle")))


def views(root: Path, fps: float, cache: Cache) -> None:
    print("\n## Views of the four synchronised Demo_SinglePerson cameras")
    estimator = BlazePose(PoseConfig())
    tracks = []
    for cam in range(1, 5):
        path = root / f"Pose2Sim/Demo_SinglePerson/videos/cam0{cam}.mp4"
        track = estimate_track(read_video(path, target_fps=fps), estimator, cache)
        tracks.append(track)
        flat = dataclasses.replace(track, world_xyz=None)
        half = estimate_track(read_video(path, target_fps=fps, max_side=960), estimator, cache)
        print(f"- cam0{cam}: 3D {estimate_view(track)}\n         2D {estimate_view(flat)}\n         "
              f"the same camera at half size: 3D view gap {view_gap(estimate_view(track), estimate_view(half)):.1f} deg, "
              f"2D {view_gap(estimate_view(flat), estimate_view(dataclasses.replace(half, world_xyz=None))):.1f} deg")
    n = min(len(t.xy) for t in tracks)
    for side in ("left", "right"):
        two_d = np.stack([t.kinematics().values[f"{side}_knee_angle"][:n] for t in tracks])
        three_d = np.stack([knee_3d(t.world_xyz[:n], side) for t in tracks])
        spread_2d = np.nanmedian(np.nanmax(two_d, 0) - np.nanmin(two_d, 0))
        spread_3d = np.nanmedian(np.nanmax(three_d, 0) - np.nanmin(three_d, 0))
        print(f"- {side} knee angle, median over frames of (max - min across the 4 views): 2D {spread_2d:.1f} deg, "
              f"3D world {spread_3d:.1f} deg")
    print("\n| pair | view gap (3D) | view gap (2D) | median abs knee-angle difference, 2D (left / right) | comparable at "
          f"{PoseConfig().view_tolerance_deg:g} deg |")
    print("|---|---|---|---|---|")
    views_3d = [estimate_view(t) for t in tracks]
    views_2d = [estimate_view(dataclasses.replace(t, world_xyz=None)) for t in tracks]
    for i in range(4):
        for j in range(i + 1, 4):
            diffs = []
            for side in ("left", "right"):
                a = tracks[i].kinematics().values[f"{side}_knee_angle"][:n]
                b = tracks[j].kinematics().values[f"{side}_knee_angle"][:n]
                diffs.append(np.nanmedian(np.abs(a - b)))
            reason = comparable_views(views_3d[i], views_3d[j], PoseConfig().view_tolerance_deg)
            print(f"| cam0{i + 1}-cam0{j + 1} | {view_gap(views_3d[i], views_3d[j]):.0f} | "
                  f"{view_gap(views_2d[i], views_2d[j]):.0f} | {diffs[0]:.1f} / {diffs[1]:.1f} | "
                  f"{'yes' if reason is None else 'no'} |")
    print("\n## Sides (frames relabelled, arms/legs; unresolved)")
    for cam, track in enumerate(tracks, 1):
        args = dict(width=track.width, height=track.height)
        alone = compute_kinematics(track.xy, track.confidence, track.times_s, track.frame_indices, **args)
        facing, contested = facing_per_frame(track.xy, track.confidence, track.world_xyz)
        checked = track.kinematics()
        wrong_before = _against_view(alone.xy, facing)
        wrong_after = _against_view(checked.xy, facing)
        print(f"- cam0{cam}: frames facing/back/unknown {[int((facing == v).sum()) for v in (1, -1, 0)]}, contested "
              f"{int(contested.sum())}; continuity only: "
              f"relabelled {alone.swapped.sum(0).tolist()}, contradicting the view {wrong_before}; with the view: "
              f"relabelled {checked.swapped.sum(0).tolist()}, contradicting {wrong_after}, unresolved "
              f"{checked.side_unresolved.sum(0).tolist()}")


def _against_view(xy: np.ndarray, facing: np.ndarray) -> list[int]:
    from viddiff.pose.kinematics import labels_against_view

    return (labels_against_view(xy, facing) < 0).sum(0).tolist()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("clips", type=Path)
    parser.add_argument("--fps", type=float, default=15.0)
    parser.add_argument("--cache", type=Path, default=Path("pose_people_cache.sqlite"))
    parser.add_argument("--only", choices=["people", "identity", "wide", "views"], nargs="*")
    args = parser.parse_args()
    with Cache(args.cache) as cache:
        for part in args.only or ["people", "identity", "wide", "views"]:
            {"people": people, "identity": identity, "wide": wide, "views": views}[part](args.clips, args.fps, cache)


if __name__ == "__main__":
    main()
