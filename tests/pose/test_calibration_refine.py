"""``pose.calibration_refine: body`` on the two real calibrated views of one Pose2Sim take (cam01, cam02)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from viddiff.cli import main
from viddiff.config import load_config
from viddiff.errors import ConfigError
from viddiff.pose.calibration_refine import MAX_TURN_DEG, refine_calibration, refine_rotations, turn_degrees, turned
from viddiff.pose.multiview import label_alike, triangulate_performance
from viddiff.pose.sync import SyncInfo, ViewOffset
from viddiff.pose.view import describe_view
from viddiff.schema import CalibrationRefinement, CameraView
from viddiff.testing import offline_overrides

GIVEN = SyncInfo(offsets=(ViewOffset(view=1, offset_s=0.0, uncertainty_s=0.0, method="given"),))
AXIS = np.array([0.3, -0.7, 0.5]) / np.linalg.norm([0.3, -0.7, 0.5])


@pytest.fixture(scope="module")
def refined(two_view_tracks):
    """The pair triangulated through the take's own calibration refined from the body."""
    tracks, cameras = two_view_tracks
    return triangulate_performance(tracks, cameras, GIVEN, calibration_refine="body")


def test_the_refinement_lowers_the_reprojection_and_turns_only_the_extra_camera(refined, two_view_tracks) -> None:
    _, cameras = two_view_tracks
    r = refined.refinement
    assert r is not None and r.refined and r.reason is None
    assert r.error_after_px < r.error_before_px
    assert 0 < r.turns_deg[0] < MAX_TURN_DEG
    main, extra = refined.cameras
    assert main is cameras[0]  # the main camera holds the world
    assert np.allclose(extra.centre, cameras[1].centre) and np.array_equal(extra.matrix, cameras[1].matrix)
    assert turn_degrees(cameras[1], extra) == pytest.approx(r.turns_deg[0], abs=1e-3)


def test_a_camera_turned_by_a_known_angle_is_recovered(refined, two_view_tracks) -> None:
    """Keypoints that the file's cameras picture exactly (the take's 3D body projected), the extra camera turned 1°
    off: the refinement turns it back onto the file's rotation."""
    _, cameras = two_view_tracks
    points = refined.points_3d
    pixels = np.stack([camera.project(points) for camera in cameras])
    confidence = np.where(np.isfinite(pixels).all(-1), 0.9, 0.0)
    off = turned(cameras[1], np.radians(1.0) * AXIS)
    back = refine_rotations([cameras[0], off], pixels, confidence)
    assert back[0] is cameras[0]
    assert turn_degrees(back[1], cameras[1]) < 0.01
    assert np.allclose(back[1].centre, cameras[1].centre)


def test_the_real_keypoints_turn_a_turned_camera_to_where_they_turn_the_files(two_view_tracks) -> None:
    """On the real keypoints the fit has one optimum: the extra camera turned 1° off ends where the file's ends."""
    tracks, cameras = two_view_tracks
    confidence = np.stack([t.confidence for t in tracks])
    pixels = label_alike(cameras, np.stack([t.xy for t in tracks]), confidence, 0.3)
    own = refine_rotations(cameras, pixels, confidence)
    back = refine_rotations([cameras[0], turned(cameras[1], np.radians(1.0) * AXIS)], pixels, confidence)
    assert turn_degrees(back[1], own[1]) < 0.05


def test_a_refinement_beyond_the_bound_is_refused_with_the_reason(two_view_tracks) -> None:
    tracks, cameras = two_view_tracks
    perf = triangulate_performance(tracks, cameras, GIVEN)
    confidence = np.stack([t.confidence for t in tracks])
    pixels = label_alike(cameras, np.stack([t.xy for t in tracks]), confidence, 0.3)

    def points_of(cams):
        return triangulate_performance(tracks, list(cams), GIVEN).points_3d

    kept, r = refine_calibration(cameras, pixels, confidence, points_of, max_turn_deg=0.01)
    assert not r.refined and kept == list(cameras)
    assert "more than the 0.01°" in r.reason and "cam02" in r.reason
    assert r.turns_deg[0] > 0.01 and r.error_before_px == pytest.approx(
        np.median(np.linalg.norm(cameras[1].project(perf.points_3d) - pixels[1], axis=-1)[
            (confidence[1] >= 0.7) & np.isfinite(perf.points_3d).all(-1)]), rel=0.5)


def test_too_few_sure_keypoints_keep_the_files_calibration(two_view_tracks) -> None:
    tracks, cameras = two_view_tracks
    short = [t.__class__(**{**t.__dict__, "xy": t.xy[:4], "confidence": t.confidence[:4], "times_s": t.times_s[:4],
                            "frame_indices": t.frame_indices[:4]}) for t in tracks]
    perf = triangulate_performance(short, cameras, GIVEN, calibration_refine="body")
    assert not perf.refinement.refined and "fewer than the 200" in perf.refinement.reason
    assert perf.cameras == tuple(cameras)
    words = describe_view(CameraView(label="side", yaw_deg=85.0, method="triangulated 3D from 2 calibrated views",
                                     calibration_refinement=perf.refinement))
    assert "the file's calibration kept" in words and "fewer than the 200" in words


def test_the_evidence_says_what_the_refinement_did(refined) -> None:
    view = refined.view()
    assert view.calibration_refinement == refined.refinement
    words = describe_view(view)
    assert words.startswith("in 3D from 2 calibrated views") and "refined from the body" in words
    assert f"{refined.refinement.error_before_px:.1f} → {refined.refinement.error_after_px:.1f} px" in words
    back = CameraView.model_validate_json(view.model_dump_json())
    assert back.calibration_refinement == refined.refinement
    assert "calibration_refinement" not in view.model_copy(update={"calibration_refinement": None}).model_dump()


def test_the_setting_round_trips_through_config(tmp_path: Path) -> None:
    assert load_config().pose.calibration_refine == "none"
    path = tmp_path / "refine.yaml"
    path.write_text(yaml.safe_dump({"pose": {"calibration_refine": "body"}}))
    cfg = load_config(path)
    assert cfg.pose.calibration_refine == "body"
    path.write_text(yaml.safe_dump(cfg.model_dump(mode="json")))
    assert load_config(path).pose.calibration_refine == "body"
    assert load_config(overrides=["pose.calibration_refine=none"]).pose.calibration_refine == "none"
    path.write_text(yaml.safe_dump({"pose": {"calibration_refine": "checkerboard"}}))
    with pytest.raises(ConfigError, match="calibration_refine"):
        load_config(path)


@pytest.mark.slow
def test_compare_with_the_setting_carries_the_refinement_into_the_evidence(
    scripted_server, tmp_path: Path, clip_h264: Path, clip_vp9: Path, two_camera_calibration: Path, capsys,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``pose.calibration_refine: body`` through ``viddiff compare``: the 3D side's view in the JSON evidence says
    what the refinement did, and the console says it in words."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    items = offline_overrides(scripted_server.base_url, str(tmp_path / "cache.sqlite"))
    items += ["localizer.method=uniform", "pose.calibration_refine=body"]
    sets = [x for item in items for x in ("--set", item)]
    args = ["compare", "--a", str(clip_h264), "--a", str(clip_vp9), "--b", str(clip_h264), "--calibration-a",
            str(two_camera_calibration), "--action", "a person moving in a lab", "--pose", "--difference",
            "the knees are straighter", *sets]
    assert main([*args, "--json"]) == 0
    knees = json.loads(capsys.readouterr().out)["differences"][0]["evidence"]
    refinement = CalibrationRefinement.model_validate(knees["view_a"]["calibration_refinement"])
    assert refinement.refined and refinement.error_after_px < refinement.error_before_px
    assert "calibration_refinement" not in knees["view_b"]  # the one-view side has no calibration
    assert main(args) == 0
    assert "the calibration refined from the body" in capsys.readouterr().out
