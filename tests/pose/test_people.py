"""The right person, seen from where, with the right sides: on real clips (tests/data, BSD-3-Clause).

Each clip is estimated once per session (BlazePose costs tens of milliseconds a frame here).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from viddiff.config import PoseConfig
from viddiff.pose.blazepose import BlazePose
from viddiff.pose.kinematics import IDENTITY, REASONS, SIDE_UNRESOLVED, compute_kinematics
from viddiff.pose.measure import Settings, VideoMeasures, measure
from viddiff.pose.people import Person, centre, describe_subject
from viddiff.pose.skeleton import INDEX, JOINTS
from viddiff.pose.track import PoseTrack, estimate_track
from viddiff.pose.view import comparable_views, estimate_view, view_gap
from viddiff.schema import CameraView, MeasurementSpec
from viddiff.video import VideoFrames, read_video

DATA = Path(__file__).resolve().parents[1] / "data"
TWO_PEOPLE = DATA / "pose2sim" / "p2s_two_people_cam02.mp4"
TWO_PEOPLE_CAM01 = DATA / "pose2sim" / "p2s_two_people_cam01.mp4"
WIDE_HALF = DATA / "sports2d" / "s2d_demo_884x498.mp4"


@pytest.fixture(scope="session")
def two_people_video() -> VideoFrames:
    """Pose2Sim's two-person take, camera 2: the subject on the force plates (centre), a second person at the left."""
    return read_video(TWO_PEOPLE, target_fps=15)


@pytest.fixture(scope="session")
def two_people(blazepose: BlazePose, two_people_video: VideoFrames) -> list[list[Person]]:
    return blazepose.estimate_people(list(two_people_video.frames), list(two_people_video.times_s))


@pytest.fixture(scope="session")
def wide_video() -> VideoFrames:
    """Two real 884×498 clips side by side (the Sports2D demo and its mirror image): a 1768×498 frame."""
    half = read_video(WIDE_HALF)
    frames = np.ascontiguousarray(np.concatenate([half.frames, half.frames[:, :, ::-1]], axis=2))
    return dataclasses.replace(half, frames=frames)


@pytest.fixture(scope="session")
def view_tracks(blazepose: BlazePose, clip_h264: Path, clip_vp9: Path) -> dict[str, PoseTrack]:
    """Two synchronised cameras of one take (camera 1: front-left oblique; camera 2: front), and camera 1 again at
    half the size."""
    return {
        "cam01": estimate_track(read_video(clip_h264, target_fps=10), blazepose),
        "cam01_half": estimate_track(read_video(clip_h264, target_fps=10, max_side=960), blazepose),
        "cam02": estimate_track(read_video(clip_vp9, target_fps=10), blazepose),
    }


def test_a_second_person_is_reported_and_the_subject_is_the_one_in_the_centre(
    blazepose: BlazePose, two_people_video: VideoFrames
) -> None:
    track = estimate_track(two_people_video, blazepose)
    n = len(two_people_video.frames)
    assert track.subject.people_max == 2
    assert track.subject.frames_with_others >= 0.8 * n  # the bystander is in view throughout
    assert (track.people[track.detected] >= 1).all() and track.detection_rate() >= 0.9
    x, _ = track.subject.position
    assert 0.35 < x < 0.6  # the person on the force plates, not the bystander at the left (x ≈ 0.16)
    assert track.subject.identity_gaps <= 2 and "nearest the centre and moving most" in track.subject.rule
    left = estimate_track(two_people_video, blazepose, subject="left")
    assert left.subject.position[0] < 0.3 and "leftmost" in left.subject.rule
    # The measured keypoints are the subject's own: each frame's hips lie where the subject's are.
    hips = (track.xy[:, INDEX["left_hip"], 0] + track.xy[:, INDEX["right_hip"], 0]) / 2 / track.width
    assert np.nanmax(np.abs(hips - x)) < 0.1


def test_the_athlete_is_measured_not_the_larger_bystander_nearer_the_camera(blazepose: BlazePose) -> None:
    """Camera 1 of the two-person take: the bystander stands nearer the camera (larger, lower right), the athlete
    moves on the force plates (middle). Size × centrality alone chose the bystander in every frame; the athlete's
    range of movement (0.7 torso lengths against 0.1) makes them the subject, and the words say who."""
    track = estimate_track(read_video(TWO_PEOPLE_CAM01), blazepose)
    x, _ = track.subject.position
    assert 0.3 < x < 0.5, track.subject  # the athlete's hips (the bystander's are at x ≈ 0.70)
    assert track.detection_rate() >= 0.9 and track.subject.people_max == 2
    assert describe_subject(track.subject) == "the person in the middle, 1 of 2 in view"


def test_the_single_person_tracker_says_it_looked_for_no_one_else(two_people_video: VideoFrames) -> None:
    single = BlazePose(PoseConfig(blazepose={"max_people": 1}))
    assert single.api == "legacy" and not single.multi_person
    track = estimate_track(two_people_video, single)
    assert track.subject.people_max == 1 and "does not look for others" in track.subject.rule


def test_an_identity_switch_is_a_gap_never_the_same_body(two_people, two_people_video: VideoFrames) -> None:
    """A single-person estimator that follows the subject, then jumps to the bystander (real keypoints of both,
    from the real clip): the jump becomes identity gaps, and no statistic gets the bystander's body."""
    frames_with_both = [t for t, found in enumerate(two_people) if len(found) == 2]
    assert len(frames_with_both) >= 0.8 * len(two_people)

    def by_x(found: list[Person]) -> list[Person]:
        return sorted(found, key=lambda p: centre(p)[0])

    switch = len(two_people) * 2 // 3

    class Jumping:
        """Follows the person at the centre, then, from ``switch`` on, the one at the left."""

        name = "jumping"

        def settings(self):
            return {"switch": switch}

        def estimate(self, frames, times_s):
            xy, confidence = np.full((len(frames), len(JOINTS), 2), np.nan), np.zeros((len(frames), len(JOINTS)))
            for t, found in enumerate(two_people):
                if len(found) == 2:
                    person = by_x(found)[0 if t >= switch else 1]
                    xy[t], confidence[t] = person.xy, person.confidence
            return xy, confidence

    track = estimate_track(two_people_video, Jumping())
    after = np.array([t >= switch for t in range(len(two_people))]) & track.people.astype(bool)
    assert track.identity_gap[after].all() and not track.identity_gap[~after].any()
    assert track.subject.identity_gaps == int(after.sum())
    assert np.isnan(track.xy[after]).all()  # the bystander's keypoints are not the subject's
    kin = track.kinematics()
    assert np.isnan(kin.values["trunk_lean"][after]).all()
    assert (kin.reasons["left_knee_angle"][after] == IDENTITY).all()
    assert "could not be told apart from another person" in REASONS[IDENTITY]


def test_people_side_by_side_in_a_wide_frame_are_found_in_each_half(blazepose: BlazePose, wide_video: VideoFrames) -> None:
    frames = wide_video.frames
    assert frames.shape[1:3] == (498, 1768)
    found = blazepose.estimate_people(list(frames), list(wide_video.times_s))
    half = frames.shape[2] / 2
    left = np.mean([any(centre(p)[0] < half for p in people) for people in found])
    right = np.mean([any(centre(p)[0] >= half for p in people) for people in found])
    assert left >= 0.8 and right >= 0.8, (left, right)
    plain = BlazePose(PoseConfig(blazepose={"crop_search": False}))  # the whole frame only: today's 0%
    assert np.mean([bool(p) for p in plain.estimate_people(list(frames[:5]), list(wide_video.times_s[:5]))]) == 0


def test_views_of_two_cameras_differ_and_one_camera_agrees_with_itself(view_tracks: dict[str, PoseTrack]) -> None:
    cam01, half, cam02 = (estimate_view(view_tracks[k]) for k in ("cam01", "cam01_half", "cam02"))
    assert cam01.method == "3D world landmarks" and cam01.frames >= 15
    assert cam02.label == "front" and abs(cam02.yaw_deg) < 25  # the person faces camera 2
    assert cam01.label == "oblique" and -60 < cam01.yaw_deg < -25  # camera 1 sees them from their right-front
    assert abs(cam01.yaw_deg - half.yaw_deg) < 10
    tolerance = PoseConfig().view_tolerance_deg
    assert comparable_views(cam01, half, tolerance) is None and view_gap(cam01, half) < 10
    reason = comparable_views(cam01, cam02, tolerance)
    assert reason is not None and reason.startswith("A filmed from an angle") and "B from the front" in reason
    # The camera's roll: the body's up direction over the clip (cam01: the person leans towards the picture's
    # right, about 20°); a picture rolled 45° more compares knee angles (they turn with it) but not trunk lean
    assert 5 < cam01.roll_deg < 40 and abs(cam01.roll_deg - half.roll_deg) < 5 and cam01.turned_deg == 0
    rolled = cam01.model_copy(update={"roll_deg": cam01.roll_deg + 45})
    knees, lean = (
        MeasurementSpec(quantity=q, side=side, statistic="mean", direction="greater")
        for q, side in (("knee_angle", "both"), ("trunk_lean", "none"))
    )
    assert comparable_views(cam01, rolled, tolerance, knees) is None
    assert "the body's up direction in the picture differs by 45°" in comparable_views(cam01, rolled, tolerance, lean)
    # The view over some frames only (a stage), by mask or by indices
    rows = np.zeros(len(view_tracks["cam02"].xy), dtype=bool)
    rows[:5] = True
    assert estimate_view(view_tracks["cam02"], rows).frames == 5
    assert estimate_view(view_tracks["cam02"], np.arange(5)).frames == 5
    # Without world landmarks the 2D torso geometry gives the view, front and back folded together
    flat = estimate_view(dataclasses.replace(view_tracks["cam01"], world_xyz=None))
    assert flat.method == "2D torso geometry" and view_gap(flat, cam01) < 20
    assert "could not be estimated in B" in comparable_views(cam01, CameraView(label="unknown"), tolerance)


def test_sides_are_checked_against_the_view(view_tracks: dict[str, PoseTrack]) -> None:
    """Camera 2 sees the person from the front, but BlazePose returns some frames as a mirror image (seen from
    behind, left and right swapped together). The view (decided over the whole square-on run) relabels them;
    continuity alone also does here, but keeps whatever the majority of frames says."""
    track = view_tracks["cam02"]
    kin = track.kinematics()
    shoulders = kin.xy[:, INDEX["left_shoulder"], 0] - kin.xy[:, INDEX["right_shoulder"], 0]
    seen = np.isfinite(shoulders)
    assert (shoulders[seen] > 0).mean() >= 0.95  # facing the camera: their left on the image's right
    assert track.subject_info(kin).side_unresolved == int(kin.side_unresolved.any(axis=1).sum())
    # A contested run (front and back readings split) leaves sides unresolved: one-side series are gaps there,
    # both-sides ones stay.
    facing = np.ones(len(track.xy), dtype=np.int8)
    contested = np.zeros(len(track.xy), dtype=bool)
    contested[3:7] = True
    doubtful = compute_kinematics(
        track.xy, track.confidence, track.times_s, track.frame_indices, width=track.width, height=track.height,
        facing=(facing, contested),
    )
    assert doubtful.side_unresolved[3:7].all()
    assert (doubtful.reasons["left_knee_angle"][3:7] == SIDE_UNRESOLVED).all()
    assert (doubtful.reasons["right_elbow_angle"][3:7] == SIDE_UNRESOLVED).all()
    assert np.isfinite(doubtful.values["trunk_lean"][3:7]).all()
    # ... and a left+right mean of a one-group quantity keeps them (which knee is which does not change the mean);
    # a hip angle mixes the arm and leg groups, so its mean does not
    spec = MeasurementSpec(quantity="knee_angle", side="both", statistic="mean", direction="greater")
    video = VideoMeasures(windows=np.array([[0.0, float(track.times_s[-1]) + 1]]), frame_indices=track.frame_indices,
                          times_s=track.times_s, kinematics=doubtful)
    knees = measure("k", spec, video, video, ["whole"], estimator="blazepose", settings=Settings(min_frames=3))
    assert knees.status == "measured" and set(track.frame_indices[3:7].tolist()) <= set(knees.frames_a)
    assert np.isfinite(doubtful.either_side["left_knee_angle"][3:7]).all() and "left_hip_angle" not in doubtful.either_side
    assert np.isfinite(doubtful.values["left_knee_angle"][8:]).mean() > 0.8


def _passes_and_people(estimator: BlazePose, video: VideoFrames) -> tuple[int, list[list[Person]]]:
    """The people found in each frame and how many passes of the model it took to find them."""
    passes = 0
    detect = estimator._detect

    def counted(*args, **kwargs):
        nonlocal passes
        passes += 1
        return detect(*args, **kwargs)

    estimator._detect = counted
    try:
        people = estimator.estimate_people(list(video.frames), list(video.times_s))
        return passes, people
    finally:
        del estimator._detect


def test_the_second_look_keeps_looking_while_it_finds_someone(two_people_video: VideoFrames) -> None:
    # a full look on every frame (detect_every_s 0), as the second look's rule is about full looks
    every_frame = BlazePose(PoseConfig(blazepose={"second_look_every_s": 0, "detect_every_s": 0}))
    _, looked_always = _passes_and_people(every_frame, two_people_video)
    _, looked_when_due = _passes_and_people(BlazePose(PoseConfig(blazepose={"detect_every_s": 0})), two_people_video)
    assert [len(found) for found in looked_when_due] == [len(found) for found in looked_always]
    for ours, always in zip(looked_when_due, looked_always):
        for a, b in zip(ours, always):
            np.testing.assert_array_equal(a.xy, b.xy)


@pytest.mark.slow
def test_on_a_steady_scene_the_second_look_runs_a_few_times_a_second_and_the_subject_is_unchanged(clip_vp9: Path) -> None:
    video = read_video(clip_vp9, target_fps=30)  # one person in a 1080x1920 frame, 50 frames
    every_frame = BlazePose(PoseConfig(blazepose={"second_look_every_s": 0, "detect_every_s": 0}))
    passes_always, _ = _passes_and_people(every_frame, video)
    default = BlazePose(PoseConfig(blazepose={"detect_every_s": 0}))  # full looks only: the second look's own rule
    passes, _ = _passes_and_people(default, video)
    assert passes_always >= 2 * len(video.frames) - 2  # a second look on (nearly) every frame, as before
    assert passes <= 0.6 * passes_always
    always, sometimes = estimate_track(video, every_frame), estimate_track(video, default)
    np.testing.assert_array_equal(always.xy, sometimes.xy)
    np.testing.assert_array_equal(always.confidence, sometimes.confidence)
    assert always.subject_info().position == sometimes.subject_info().position
