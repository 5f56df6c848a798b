"""Following people between detections with BlazePose's landmark model alone, on the real clips (tests/data)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from viddiff.config import PoseConfig
from viddiff.pose.blazepose import BlazePose
from viddiff.pose.blazepose_follow import LandmarkFollower, roi_of
from viddiff.pose.kinematics import compute_kinematics
from viddiff.pose.people import Person, size
from viddiff.pose.skeleton import JOINTS
from viddiff.video import VideoFrames, read_video


DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def every_frame() -> BlazePose:
    """A full look (the detector) on every frame, as before."""
    return BlazePose(PoseConfig(blazepose={"detect_every_s": 0}))


@pytest.fixture(scope="module")
def following() -> BlazePose:
    """A full look at most every 0.25 s, the people followed in between."""
    return BlazePose(PoseConfig(blazepose={"detect_every_s": 0.25}))


def _looks_and_people(estimator: BlazePose, video: VideoFrames) -> tuple[list[int], list[list[Person]]]:
    """The frames that got a full look (detector) and everyone found in each frame."""
    looked: list[float] = []
    everyone = estimator._everyone

    def counted(landmarker, frame, time_s, looks):
        looked.append(time_s)
        return everyone(landmarker, frame, time_s, looks)

    estimator._everyone = counted
    try:
        people = estimator.estimate_people(list(video.frames), list(video.times_s))
    finally:
        del estimator._everyone
    return [int(np.flatnonzero(np.isclose(video.times_s, t))[0]) for t in looked], people


def test_following_skips_the_detector_between_looks_and_keeps_the_angles(
    following: BlazePose, every_frame: BlazePose, clip_frames: VideoFrames
) -> None:
    assert following.follows and following.settings()["detect_every_s"] == 0.25
    assert not every_frame.follows and "detect_every_s" not in every_frame.settings()  # its cache keys as before
    looked, followed = _looks_and_people(following, clip_frames)  # 50 frames at 30 fps, one person
    looked_always, detected = _looks_and_people(every_frame, clip_frames)
    assert looked_always == list(range(len(clip_frames.frames)))
    assert looked[0] == 0 and len(looked) <= len(clip_frames.frames) // 5  # about every 0.25 s (7.5 frames)
    assert all(len(found) == 1 for found in followed)
    # on a full look the very keypoints of before; followed, within a few per cent of the body's size
    for t in looked:
        np.testing.assert_array_equal(followed[t][0].xy, detected[t][0].xy)
    error = [np.nanmedian(np.linalg.norm(f[0].xy - d[0].xy, axis=1)) / size(d[0]) for f, d in zip(followed, detected)]
    assert np.median(error) < 0.03 and max(error) < 0.06, error

    def knees(people: list[list[Person]]) -> np.ndarray:
        xy = np.stack([found[0].xy for found in people])
        confidence = np.stack([found[0].confidence for found in people])
        kin = compute_kinematics(xy, confidence, clip_frames.times_s, clip_frames.frame_indices,
                                 width=clip_frames.frames.shape[2], height=clip_frames.frames.shape[1])
        values = np.stack([kin.values["left_knee_angle"], kin.values["right_knee_angle"]])
        return np.array([np.nanmin(values, axis=1), np.nanmax(values, axis=1), np.nanmean(values, axis=1)])

    # the whole clip's minimum, maximum and mean knee angles move by less than the knee's pair noise floor (8°)
    assert np.abs(knees(followed) - knees(detected)).max() < PoseConfig().noise_floors.knee_angle * np.sqrt(2)


def test_the_roi_taken_from_the_joints_is_the_one_blazepose_takes_from_its_own_landmarks(
    every_frame: BlazePose, clip_frames: VideoFrames
) -> None:
    """The first follow after a detection starts from the joints alone; the landmark model then gives its own
    alignment points. The two ROIs agree to a few per cent (RADIUS_FROM_JOINTS was measured so)."""
    import mediapipe

    frames = [np.ascontiguousarray(f) for f in clip_frames.frames[::10]]
    people = every_frame.estimate_people(frames, [0.0] * len(frames))
    with LandmarkFollower(mediapipe) as follower:
        for frame, (person,) in zip(frames, people):
            roi = roi_of(person)
            _, _, own = follower.follow(frame, roi)
            assert abs(own.x - roi.x) < 0.05 * roi.side and abs(own.y - roi.y) < 0.05 * roi.side
            assert abs(own.side / roi.side - 1) < 0.1 and abs(own.rotation - roi.rotation) < 0.1


def test_someone_lost_gets_a_full_look_at_once(following: BlazePose, clip_frames: VideoFrames) -> None:
    """Nobody in a frame (a grey frame cut into the clip): the follower finds nobody, so that frame is looked at in
    full, finds nobody, and the next frame is looked at in full too (there is nobody to follow)."""
    frames = clip_frames.frames[:12].copy()
    frames[4] = 127
    video = dataclasses.replace(clip_frames, frames=frames, frame_indices=clip_frames.frame_indices[:12], end=24)
    looked, people = _looks_and_people(following, video)
    assert looked[:3] == [0, 4, 5] and people[4] == [] and all(len(found) == 1 for t, found in enumerate(people) if t != 4)


def test_a_model_given_by_path_is_not_followed(tmp_path: Path) -> None:
    """Following runs the package's bundled Full landmark model; a .task given by path may hold another one, so
    the detector then runs on every frame."""
    from viddiff.testing.pose_models import write_blazepose_task

    task = write_blazepose_task(tmp_path / "my_model.task")
    estimator = BlazePose(PoseConfig(blazepose={"model_path": str(task), "detect_every_s": 0.25}))
    assert estimator.multi_person and not estimator.follows and "detect_every_s" not in estimator.settings()


def test_two_people_are_each_followed(following: BlazePose) -> None:
    """The two-person take (camera 2): both people are found on every frame, followed or detected."""
    video = read_video(DATA / "pose2sim" / "p2s_two_people_cam02.mp4", target_fps=15)
    looked, people = _looks_and_people(following, video)
    assert len(looked) < len(people) / 2
    assert all(len(found) == 2 for found in people)
    assert all(p.world is not None and p.xy.shape == (len(JOINTS), 2) for found in people for p in found)
