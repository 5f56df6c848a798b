"""Triangulation through the real Pose2Sim calibration (tests/data/pose2sim/Calib.qca.txt, BSD-3)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from viddiff.pose.calibration import read_qca
from viddiff.pose.skeleton import INDEX
from viddiff.pose.triangulation import reprojection_errors, triangulate, triangulate_point

DATA = Path(__file__).resolve().parents[1] / "data" / "pose2sim"


@pytest.fixture(scope="module")
def cameras():
    return read_qca(DATA / "Calib.qca.txt")


@pytest.fixture(scope="module")
def body() -> np.ndarray:
    """(40, 3) points where the demo's athlete stands (1.5 m of the force plates, up to 1.8 m high)."""
    return np.random.default_rng(0).uniform([-1.6, -0.4, 0.0], [-0.6, 0.4, 1.8], (40, 3))


def test_noisy_pixels_in_four_real_views_give_the_points_back(cameras, body) -> None:
    pixels = np.stack([c.project(body) for c in cameras])
    noisy = pixels + np.random.default_rng(1).normal(0, 2.0, pixels.shape)
    result = triangulate(cameras, noisy, np.ones(pixels.shape[:2]))
    assert np.linalg.norm(result.points - body, axis=1).max() < 0.02  # 2 px of noise at ~3.5 m: millimetres
    assert np.median(result.error_px) == pytest.approx(2.0 * np.sqrt(0.5), rel=0.5)  # ~ the noise itself
    assert result.views.all()


def test_a_view_that_disagrees_is_dropped(cameras, body) -> None:
    pixels = np.stack([c.project(body) for c in cameras])
    pixels[2] += 120.0  # camera 3 sees something else (another person's limb)
    result = triangulate(cameras, pixels, np.ones(pixels.shape[:2]), max_error_px=15.0)
    assert not result.views[:, 2].any() and result.views[:, [0, 1, 3]].all()
    assert np.linalg.norm(result.points - body, axis=1).max() < 1e-6
    errors = reprojection_errors(cameras, result.points, pixels)
    assert np.nanmin(errors[2]) > 50 and np.nanmax(errors[[0, 1, 3]]) < 1e-3


def test_unseen_or_unsure_keypoints_do_not_count(cameras, body) -> None:
    pixels = np.stack([c.project(body[:2]) for c in cameras])
    confidence = np.ones((4, 2))
    confidence[1:, 0] = 0.1  # the first point is sure in one view only
    pixels[0, 1] = np.nan  # the second is missing in one view
    result = triangulate(cameras, pixels, confidence, min_views=2)
    assert np.isnan(result.points[0]).all()
    assert result.views[1].tolist() == [False, True, True, True]
    assert result.points[1] == pytest.approx(body[1], abs=1e-6)


def test_confidence_weights_pull_towards_the_surer_views(cameras, body) -> None:
    point = body[0]
    pixels = np.stack([c.project(point) for c in cameras])
    pixels[3] += 10.0
    rays = np.stack([c.normalised(p) for c, p in zip(cameras, pixels)])
    projections = np.stack([c.projection() for c in cameras])
    trusted = triangulate_point(projections, rays, np.array([1.0, 1.0, 1.0, 0.05]))
    equal = triangulate_point(projections, rays, np.ones(4))
    assert np.linalg.norm(trusted - point) < np.linalg.norm(equal - point)


@pytest.mark.slow
def test_real_keypoints_of_two_real_views_reproject_within_pixels(cameras, clip_h264, clip_vp9, pose_cache, blazepose) -> None:
    """BlazePose on the two demo views in tests/data (cam01, cam02; 1080-wide copies of the 1088-wide calibrated
    pictures), triangulated through the real calibration: the torso's keypoints reproject within a few percent of
    the person's height. A wrong axis convention or scale puts them hundreds of pixels off."""
    from viddiff.cache import Cache
    from viddiff.pose.track import estimate_track
    from viddiff.video import read_video

    cache = Cache(pose_cache)  # every frame, as the pose method reads these short clips: one estimate per clip
    tracks = [estimate_track(read_video(clip), blazepose, cache) for clip in (clip_h264, clip_vp9)]
    views = [cameras[0].fitted_to(tracks[0].width, tracks[0].height), cameras[1].fitted_to(tracks[1].width, tracks[1].height)]
    torso = [INDEX[j] for j in ("left_shoulder", "right_shoulder", "left_hip", "right_hip")]
    pixels = np.stack([t.xy[:, torso] for t in tracks])
    confidence = np.stack([t.confidence[:, torso] for t in tracks])
    result = triangulate(views, pixels, confidence, max_error_px=np.inf)
    errors = result.error_px[np.isfinite(result.error_px)]
    assert len(errors) > 100
    assert np.median(errors) < 25  # the person is ~1000 px tall
    heights = result.points[..., 2][np.isfinite(result.points[..., 2])]
    assert 0.7 < np.median(heights) < 1.7  # shoulders and hips of a standing adult, metres above the floor


def test_a_point_behind_the_cameras_triangulates_without_numpy_warnings(cameras) -> None:
    """Two views whose keypoints' lines meet behind both cameras (a mislabelled limb can do it): its reprojection
    is unknown (NaN), said without numpy's 'All-NaN slice' / 'Mean of empty slice' warnings on the terminal."""
    pair = [cameras[0], cameras[1]]
    forward = [c.rotation[2] for c in pair]  # each camera's optical axis in the world
    behind = (pair[0].centre + pair[1].centre) / 2 - 3.0 * (forward[0] + forward[1])
    pixels = []
    for cam in pair:
        x = cam.rotation @ behind + cam.translation
        assert x[2] < 0  # behind this camera
        pixels.append(cam.matrix[:2, :2] @ (x[:2] / x[2]) + cam.matrix[:2, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = triangulate(pair, np.array(pixels)[:, None, :], np.ones((2, 1)), max_error_px=15.0)
    assert np.isnan(result.error_px[0])
