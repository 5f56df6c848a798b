"""The measured person chosen across calibrated views (``pose.subject: auto``) on the real two-person take."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from viddiff.pose.multiview import (
    PerformancePose,
    estimate_performance,
    triangulate_performance,
)
from viddiff.pose.setup import read_cameras
from viddiff.pose.sync import SyncInfo, ViewOffset
from viddiff.pose.track import PoseTrack, estimate_track
from viddiff.video import VideoFrames, read_video

DATA = Path(__file__).resolve().parents[1] / "data" / "pose2sim"


@pytest.fixture(scope="module")
def two_people_start() -> list[VideoFrames]:
    """The first 20 frames of the two-person take's cam01 and cam02 test clips at 15 fps (source frames 0, 2, ...,
    18): there ``auto`` on its own measures the athlete in cam01 and the bystander in cam02."""
    return [read_video(DATA / f"p2s_two_people_{name}.mp4", target_fps=15, frames_trim=(0, 20)) for name in ("cam01", "cam02")]


@pytest.fixture(scope="module")
def cameras():
    by_name = {c.name: c for c in read_cameras(DATA / "Calib.qca.txt")}
    return [by_name["cam01"], by_name["cam02"]]


@pytest.fixture(scope="module")
def joint(two_people_start, cameras, blazepose, pose_cache) -> PerformancePose:
    from viddiff.cache import Cache

    return estimate_performance(two_people_start, cameras, blazepose, Cache(pose_cache), "auto", offsets=[0.0])


def off_athlete(track: PoseTrack, athlete: PoseTrack) -> float:
    """The median distance, as a share of the frame, between ``track``'s sure keypoints and the athlete's at the
    same source frames (the two-person take is the single take's movement with a second person composited in)."""
    rows = track.frame_indices
    sure = (track.confidence >= 0.5) & (athlete.confidence[rows] >= 0.5)
    gaps = np.linalg.norm(track.xy / (track.width, track.height) - athlete.xy[rows] / (athlete.width, athlete.height), axis=-1)
    return float(np.median(gaps[sure]))


def test_both_views_measure_the_athlete(joint: PerformancePose, two_view_tracks, two_people_start, blazepose, pose_cache) -> None:
    """Each view alone measures a different person (cam02: the bystander, a third of the frame away from the
    athlete); chosen across the views, both measure the athlete (within 5% of the frame of her keypoints in the
    single take), and her body is triangulated."""
    from viddiff.cache import Cache

    athlete, _ = two_view_tracks  # the single take, cam01 and cam02
    alone = [estimate_track(view, blazepose, Cache(pose_cache), "auto") for view in two_people_start]
    assert off_athlete(alone[0], athlete[0]) < 0.05 and off_athlete(alone[1], athlete[1]) > 0.2
    given = SyncInfo(offsets=(ViewOffset(view=1, offset_s=0.0, uncertainty_s=0.0, method="given"),))
    apart = triangulate_performance(alone, list(joint.cameras), given)
    assert np.isfinite(apart.points_3d).all(-1).mean() < 0.1

    assert [off_athlete(track, a) for track, a in zip(joint.tracks, athlete)] == pytest.approx([0.0, 0.0], abs=0.05)
    assert np.isfinite(joint.points_3d).all(-1).mean() > 0.5


def test_the_views_subject_records_say_why(joint: PerformancePose) -> None:
    main, extra = (track.subject.rule for track in joint.tracks)
    assert "chosen across the 2 calibrated views" in main and "would have chosen another person" not in main
    assert extra.endswith("(this view alone would have chosen another person)")


def test_a_rule_chosen_by_the_user_stays_per_view(two_people_start, cameras, blazepose, pose_cache) -> None:
    """``largest`` is the user's rule for each view: each view measures whom it chooses there, as on its own
    (``tests/pose/test_multiview.py`` has the clips where it picks different people)."""
    from viddiff.cache import Cache

    cache = Cache(pose_cache)
    kept = estimate_performance(two_people_start, cameras, blazepose, cache, "largest", offsets=[0.0])
    for track, view in zip(kept.tracks, two_people_start):
        alone = estimate_track(view, blazepose, cache, "largest")
        assert np.array_equal(track.xy, alone.xy, equal_nan=True) and track.subject == alone.subject
        assert "chosen across" not in track.subject.rule


class _AthleteHiddenInCam01:
    """BlazePose's people on the two-person test clips, with the athlete (the middle of cam01's picture) never found
    in cam01: she is behind the bystander there. The people are estimated once and looked up by the frames."""

    name = "blazepose, athlete hidden in cam01"

    def __init__(self, views: list[VideoFrames], estimator, cache) -> None:
        from viddiff.pose.people import centre
        from viddiff.pose.track import estimate_people, frames_digest

        cam01, cam02 = (estimate_people(view, estimator, cache) for view in views)
        width = views[0].frames.shape[2]
        hidden = [[p for p in found if centre(p)[0] > 0.55 * width] for found in cam01]
        self._people = {frames_digest(views[0].frames): hidden, frames_digest(views[1].frames): cam02}

    def settings(self) -> dict:
        return {}

    def estimate_people(self, frames, times_s):
        from viddiff.pose.track import frames_digest

        return self._people[frames_digest(np.stack(frames))]


def test_a_view_whose_person_the_others_barely_see_keeps_its_choice(two_view_tracks, cameras, blazepose, pose_cache) -> None:
    """cam01 finds only the bystander, so the only pairing is the bystander in both views; cam02's own choice, the
    athlete, lies nearer where the cameras aim, so it is kept: the views stay apart rather than measure the
    bystander."""
    from viddiff.cache import Cache
    from viddiff.pose.joint_subject import choose_jointly

    views = [read_video(DATA / f"p2s_two_people_{name}.mp4") for name in ("cam01", "cam02")]
    hiding = _AthleteHiddenInCam01(views, blazepose, Cache(pose_cache))
    tracks = choose_jointly(views, cameras, hiding, [0.0])
    (athlete_cam01, athlete_cam02), _ = two_view_tracks
    assert off_athlete(tracks[1], athlete_cam02) < 0.05
    assert off_athlete(tracks[0], athlete_cam01) > 0.2  # cam01: the bystander, the only person it found
    assert not any("chosen across" in track.subject.rule for track in tracks)
