"""Pose frames no larger than ``pose.max_side``: decoded small, keypoints still in the pixels of the frame as read."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from viddiff.pose.blazepose import BlazePose
from viddiff.pose.frames import pose_shrink
from viddiff.pose.skeleton import INDEX
from viddiff.pose.track import estimate_track
from viddiff.video import read_video


def test_only_frames_larger_than_max_side_are_scaled_down() -> None:
    shrink = pose_shrink(960)
    tall = np.random.default_rng(0).integers(0, 255, (1920, 1080, 3), dtype=np.uint8)
    small = tall[:480, :640]
    assert shrink(tall).shape == (960, 540, 3)
    assert shrink(small) is small
    assert pose_shrink(None) is None
    # area averaging: a uniform frame stays that colour, with no ringing at its edges
    grey = np.full((1920, 1080, 3), 77, np.uint8)
    assert np.array_equal(shrink(grey), np.full((960, 540, 3), 77, np.uint8))


def test_keypoints_of_shrunk_frames_are_in_the_pixels_of_the_frame_read(blazepose: BlazePose, clip_h264: Path) -> None:
    """The real 1080x1920 clip estimated on 540x960 frames gives keypoints where the full-size frames put them."""
    full = estimate_track(read_video(clip_h264, target_fps=10), blazepose)
    video = read_video(clip_h264, target_fps=10, shrink=pose_shrink(960))
    assert video.frames.shape[1:3] == (960, 540) and video.size == (1080, 1920)
    half = estimate_track(video, blazepose)
    assert (half.width, half.height) == (full.width, full.height) == (1080, 1920)
    sure = (full.confidence > 0.8) & (half.confidence > 0.8)
    torso = np.linalg.norm(full.xy[:, INDEX["left_shoulder"]] - full.xy[:, INDEX["left_hip"]], axis=1)
    error = np.linalg.norm(half.xy - full.xy, axis=2) / torso[:, None]
    assert sure.mean() > 0.5 and half.detection_rate() == full.detection_rate() == 1.0
    assert np.median(error[sure]) < 0.05 and np.nanmax(half.xy[..., 1]) > 960  # legs in the frame's lower half
