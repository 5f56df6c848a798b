"""The rate a clip's pose is estimated at: every frame of a short clip, at least pose.fps over a long one."""

from __future__ import annotations

import pytest

from viddiff.pose.sampling import pose_rate


def test_a_short_clip_is_read_at_its_native_rate() -> None:
    assert pose_rate(100, 60.0, 15.0, 150) is None  # the 1.67-s Pose2Sim clip: every frame
    assert pose_rate(100, 40.0, 15.0, 150) is None  # its 1.5x slowed copy: the very same frames


def test_a_long_clip_gets_as_many_frames_as_allowed_but_never_fewer_than_pose_fps() -> None:
    assert pose_rate(300, 30.0, 15.0, 150) == pytest.approx(15.0)  # 10 s at 30 fps
    assert pose_rate(240, 60.0, 15.0, 150) == pytest.approx(37.5)  # 4 s at 60 fps: 150 frames
    assert pose_rate(36000, 60.0, 15.0, 150) == pytest.approx(15.0)  # 10 min: the floor wins
    assert pose_rate(300, 30.0, None, 150) is None  # pose.fps null: every frame of every clip
    assert pose_rate(160, 30.0, 30.0, 150) is None  # the floor is the native rate itself
