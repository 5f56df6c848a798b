"""Two real calibrated views of one Pose2Sim take (cam01, cam02) made into one 3D performance."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from viddiff.pose.multiview import PerformancePose, triangulate_performance
from viddiff.pose.skeleton import INDEX, JOINTS, SWAP
from viddiff.pose.sync import SyncError, SyncInfo, ViewOffset, motion_offset
from viddiff.pose.trc import write_trc
from viddiff.pose.view import comparable_views, describe_view, is_triangulated


def cut(track, frames: int):
    """``track`` as if its video had started ``frames`` frames later (its clock restarts at the first kept frame)."""
    t = track.times_s[frames:]
    return replace(track, xy=track.xy[frames:], confidence=track.confidence[frames:], times_s=t - t[0],
                   frame_indices=track.frame_indices[frames:] - frames)


@pytest.fixture(scope="module")
def performance(two_view_tracks) -> PerformancePose:
    tracks, cameras = two_view_tracks
    return triangulate_performance(tracks, cameras, SyncInfo(offsets=(ViewOffset(view=1, offset_s=0.0, uncertainty_s=0.0, method="given"),)))


def test_the_body_in_3d_keeps_its_bone_lengths(performance: PerformancePose) -> None:
    points = performance.points_3d
    assert np.isfinite(points[:, [INDEX["left_knee"], INDEX["right_hip"]]]).all(-1).mean() > 0.9
    for a, b in (("left_hip", "left_knee"), ("right_knee", "right_ankle"), ("left_shoulder", "left_elbow")):
        length = np.linalg.norm(points[:, INDEX[a]] - points[:, INDEX[b]], axis=-1)
        assert 0.2 < np.nanmedian(length) < 0.6  # metres: an adult's thigh, shin, upper arm
        assert np.nanstd(length) < 0.03  # a rigid bone, whatever the pose: the two views agree in time and space
    assert np.nanmedian(performance.error_px) < 10


def test_3d_kinematics_use_the_2d_names_and_are_the_bodys_own(performance: PerformancePose, two_view_tracks) -> None:
    kin = performance.kinematics(min_confidence=0.5)
    flat = two_view_tracks[0][0].kinematics()
    assert set(kin.values) == set(flat.values)
    knee = kin.values["left_knee_angle"]
    assert np.isfinite(knee).mean() > 0.9 and 60 < np.nanmin(knee) and np.nanmax(knee) <= 180
    # heights along the world's up (z in the Qualisys world): the wrist below the shoulder when the arm hangs
    assert performance.up.tolist() == [0.0, 0.0, 1.0]
    assert kin.xy.shape == flat.xy.shape and (kin.width, kin.height) == (flat.width, flat.height)


def test_two_triangulated_views_always_compare(performance: PerformancePose) -> None:
    view = performance.view()
    assert is_triangulated(view) and view.yaw_deg is not None
    other = view.model_copy(update={"yaw_deg": -view.yaw_deg + 120, "label": "back"})
    assert comparable_views(view, other, tolerance_deg=20) is None
    assert "in 3D from 2 calibrated views" in describe_view(view)


@pytest.mark.parametrize("frames", [pytest.param(0, marks=pytest.mark.slow), 12, pytest.param(30, marks=pytest.mark.slow)])
def test_the_offset_of_a_view_that_started_later_is_found(two_view_tracks, frames: int) -> None:
    (main, extra), (cam_main, cam_extra) = two_view_tracks
    found = motion_offset(main, cut(extra, frames), cam_main, cam_extra)
    truth = -frames / 60
    assert abs(found.offset_s - truth) <= max(2 * found.uncertainty_s, 1 / 60)
    assert found.uncertainty_s < 0.05 and found.method == "motion"


def test_a_still_body_cannot_be_synchronised(two_view_tracks) -> None:
    (main, extra), (cam_main, cam_extra) = two_view_tracks
    still = replace(main, xy=np.repeat(main.xy[:1], len(main.xy), axis=0), confidence=np.repeat(main.confidence[:1], len(main.xy), axis=0))
    other = replace(extra, xy=np.repeat(extra.xy[:1], len(extra.xy), axis=0), confidence=np.repeat(extra.confidence[:1], len(extra.xy), axis=0))
    with pytest.raises(SyncError, match="not distinct"):
        motion_offset(still, other, cam_main, cam_extra)


def test_trc_parses_back_with_opensim_layout(performance: PerformancePose, tmp_path: Path) -> None:
    path = write_trc(tmp_path / "take.trc", performance, units="mm")
    lines = path.read_text().split("\n")
    assert lines[0].split("\t") == ["PathFileType", "4", "(X/Y/Z)", "take.trc"]
    header = dict(zip(lines[1].split("\t"), lines[2].split("\t")))
    assert header["Units"] == "mm" and int(header["NumFrames"]) == len(performance.times_s)
    assert float(header["DataRate"]) == pytest.approx(60.0)
    names = lines[3].split("\t")
    assert names[:3] == ["Frame#", "Time", "nose"] and names[2::3][: int(header["NumMarkers"])][-1] != ""
    assert lines[4].split("\t")[2:5] == ["X1", "Y1", "Z1"]
    rows = [line.split("\t") for line in lines[5:] if line]
    assert len(rows) == len(performance.times_s) and all(len(r) == 2 + 3 * int(header["NumMarkers"]) for r in rows)
    knee = INDEX["left_knee"]
    x, y, z = (float(v) for v in rows[10][2 + 3 * knee: 5 + 3 * knee])
    world = performance.points_3d[10, knee] * 1000
    assert (x, y, z) == pytest.approx((world[1], world[2], world[0]), abs=1e-3)  # z up becomes OpenSim's y up


def test_a_calibration_with_a_reprojection_error_widens_the_intervals(two_view_tracks, performance: PerformancePose) -> None:
    tracks, cameras = two_view_tracks
    assert performance.calibration_errors == {}  # Qualisys: no pixel error reported, the measured parts alone
    rough = [replace(c, error_px=3.0) for c in cameras]
    worse = triangulate_performance(tracks, rough, performance.sync)
    knee = worse.calibration_errors["knee_angle"]
    assert 0.1 < knee < 20
    assert worse.triangulation_errors["knee_angle"] == pytest.approx(
        np.hypot(performance.triangulation_errors["knee_angle"], knee), abs=1e-3)
    finer = triangulate_performance(tracks, [replace(c, error_px=0.3) for c in cameras], performance.sync)
    assert finer.calibration_errors["knee_angle"] < knee


def test_the_triangulation_part_is_scaled_by_the_pairs_placement(performance: PerformancePose) -> None:
    """cam01 and cam02 stand 47° apart at the athlete (bench/pose_3d.py): their part is wider than the constant for
    views at right angles, by one over the sine of that angle and the root of the limb share triangulated."""
    from viddiff.pose.triangulation_part import TRIANGULATION_ERRORS

    scale = performance.part_scale
    assert 40 < scale.sight_deg < 55 and 0.9 < scale.limb_share <= 1.0
    assert scale.factor == pytest.approx(1 / (np.sin(np.radians(scale.sight_deg)) * np.sqrt(scale.limb_share)))
    for quantity, constant in TRIANGULATION_ERRORS.items():  # Qualisys reports no pixel error: no calibration part
        assert performance.triangulation_errors[quantity] == pytest.approx(constant * scale.factor, abs=1e-3)


def test_a_keyframe_skeleton_is_body_centred_with_y_up(performance: PerformancePose) -> None:
    skeleton = performance.skeleton(0.5)
    assert skeleton.frame_index == 30 and skeleton.time_s == pytest.approx(0.5)
    points = {name: p for name, p in zip(JOINTS, skeleton.points)}
    hips = (np.array(points["left_hip"]) + np.array(points["right_hip"])) / 2
    assert np.abs(hips).max() < 1e-3  # centred on the hips
    assert points["nose"][1] > 0.4 and points["left_ankle"][1] < -0.6  # y up, metres
    assert type(skeleton).model_validate_json(skeleton.model_dump_json()) == skeleton


def test_3d_evidence_is_the_bodys_own_with_the_triangulation_part(performance: PerformancePose, two_view_tracks) -> None:
    from viddiff.pose.measure import Settings, VideoMeasures, measure
    from viddiff.pose.view import estimate_view
    from viddiff.schema import MeasurementSpec

    kin = performance.kinematics()
    window = np.array([[0.0, float(performance.times_s[-1]) + 1 / 60]])
    three_d = VideoMeasures(windows=window, frame_indices=performance.frame_indices, times_s=performance.times_s,
                            kinematics=kin, frame_step_s=1 / 60, view=performance.view(),
                            triangulation_errors=performance.triangulation_errors)
    spec = MeasurementSpec(quantity="knee_angle", side="left", statistic="min", direction="smaller")
    views_checked = Settings(views_differ=lambda a, b, s: comparable_views(a, b, 30, s), plane_tolerance_deg=20,
                             view_errors={"knee_angle": 34.0})
    turned = replace(three_d, view=performance.view().model_copy(update={"yaw_deg": 150.0}))
    ev = measure("k", spec, three_d, turned, ["whole"], estimator=performance.estimator, settings=views_checked)
    assert ev.status == "measured" and not ev.interval_a.in_picture
    assert ev.interval_a.view == pytest.approx(performance.triangulation_errors["knee_angle"])
    # against one video: the one-video rules, with the 3D side's main camera as its view
    flat = estimate_view(two_view_tracks[0][1])
    as_one_video = performance.view().model_copy(update={"method": flat.method})
    for tolerance in (5, 30, 90):
        assert comparable_views(performance.view(), flat, tolerance) == comparable_views(as_one_video, flat, tolerance)
    assert comparable_views(performance.view(), flat, 5) is not None


def test_the_same_two_views_give_the_same_body_whichever_is_main(performance: PerformancePose, two_view_tracks) -> None:
    """Left and right are named by the body, not by the main view, and the extra view is read at its own samples as
    estimated: with cam02 as the main view the points are the same (before, the left hip's minimum was 123° against
    140° and joints 1.1 m apart)."""
    tracks, cameras = two_view_tracks
    other = triangulate_performance(tracks[::-1], cameras[::-1], SyncInfo(offsets=(ViewOffset(view=1, offset_s=0.0, uncertainty_s=0.0, method="given"),)))
    both = np.isfinite(performance.points_3d).all(-1) & np.isfinite(other.points_3d).all(-1)
    assert (np.isfinite(performance.points_3d) == np.isfinite(other.points_3d)).all()
    assert np.linalg.norm(performance.points_3d[both] - other.points_3d[both], axis=-1).max() < 1e-6
    hip = "left_hip_angle"
    assert np.nanmin(other.kinematics().values[hip]) == pytest.approx(np.nanmin(performance.kinematics().values[hip]), abs=1e-4)


def test_a_main_view_whose_sides_are_all_wrong_gives_the_same_body(performance: PerformancePose, two_view_tracks) -> None:
    """The main view's estimator calling every left right does not mirror the body in 3D."""
    tracks, cameras = two_view_tracks
    mirrored = replace(tracks[0], xy=tracks[0].xy[:, SWAP], confidence=tracks[0].confidence[:, SWAP])
    again = triangulate_performance([mirrored, tracks[1]], cameras, SyncInfo(offsets=(ViewOffset(view=1, offset_s=0.0, uncertainty_s=0.0, method="given"),)))
    both = np.isfinite(performance.points_3d).all(-1) & np.isfinite(again.points_3d).all(-1)
    assert both.sum() >= 0.95 * np.isfinite(performance.points_3d).all(-1).sum()
    assert np.nanmax(np.linalg.norm(performance.points_3d[both] - again.points_3d[both], axis=-1)) < 1e-6


def test_a_stretched_bone_leaves_its_joints_out_of_that_frame() -> None:
    from viddiff.pose.multiview import rigid_bones

    points = np.random.default_rng(0).normal(0, 1, (20, len(JOINTS), 3))
    elbow, wrist = INDEX["left_elbow"], INDEX["left_wrist"]
    direction = np.random.default_rng(1).normal(0, 1, (20, 3))
    points[:, wrist] = points[:, elbow] + 0.25 * direction / np.linalg.norm(direction, axis=1, keepdims=True)
    points[7, wrist] = points[7, elbow] + (points[7, wrist] - points[7, elbow]) * 1.5  # misplaced in depth: 50% longer
    gated = rigid_bones(points)
    assert np.isnan(gated[7, [elbow, wrist]]).all()
    others = [t for t in range(20) if t != 7]
    assert np.isfinite(gated[others][:, wrist]).all()


def test_estimate_performance_from_the_real_videos(two_view_tracks, blazepose, pose_cache) -> None:
    """The contract's entry point on the two real clips (their pose is cached by the session's fixture): the views'
    offset is found from the motion (0: the cameras were synchronised) and the cameras are fitted to the frames."""
    from viddiff.cache import Cache
    from viddiff.pose.calibration import CalibrationError
    from viddiff.pose.multiview import estimate_performance
    from viddiff.pose.setup import read_cameras
    from viddiff.video import read_video

    clips = Path(__file__).resolve().parents[1] / "data" / "pose2sim"
    videos = [read_video(clips / "p2s_single_cam01.mp4"), read_video(clips / "p2s_single_cam02.mp4")]
    cameras = read_cameras(clips / "Calib.qca.txt")[:2]
    performance = estimate_performance(videos, cameras, blazepose, Cache(pose_cache), "auto")
    (offset,) = performance.sync.offsets
    assert offset.method == "motion" and abs(offset.offset_s) <= max(2 * offset.uncertainty_s, 1 / 60)
    assert performance.cameras[0].width == 1080 and np.isfinite(performance.points_3d).all(-1).mean() > 0.8
    assert "view 2: " in performance.sync.describe() and performance.estimator.endswith("from 2 calibrated views")
    with pytest.raises(CalibrationError, match="2 videos need 2 calibrated cameras"):
        estimate_performance(videos, read_cameras(clips / "Calib.qca.txt"), blazepose, Cache(pose_cache), "auto")


def test_sound_that_cannot_tell_falls_back_to_the_motion(two_view_tracks, audio_clip, tmp_path: Path) -> None:
    """Both phones recorded sound but heard no distinct event: the offset comes from the motion instead."""
    from viddiff.pose.multiview import synchronise
    from viddiff.video import read_video

    (main, extra), cameras = two_view_tracks
    quiet = [audio_clip(tmp_path / f"quiet_{i}.mp4", 1.0, None, seed=i) for i in (1, 2)]
    views = [read_video(path) for path in quiet]
    (offset,) = synchronise([main, extra], cameras, views, sources=quiet).offsets
    assert offset.method == "motion" and abs(offset.offset_s) <= max(2 * offset.uncertainty_s, 1 / 60)


def test_views_that_measured_different_people_say_so_not_that_nobody_was_found(blazepose, pose_cache) -> None:
    """The real two-person take (cam01, cam02): ``pose.subject: largest`` picks the person nearest cam01 there and
    the athlete in cam02; nothing triangulates, and the reason is that, not "no person was found"."""
    from viddiff.cache import Cache
    from viddiff.pose.kinematics import VIEWS_APART, describe_reasons
    from viddiff.pose.multiview import estimate_performance
    from viddiff.pose.setup import read_cameras
    from viddiff.video import read_video

    data = Path(__file__).resolve().parents[1] / "data" / "pose2sim"
    cameras = {c.name: c for c in read_cameras(data / "Calib.qca.txt")}
    views = [read_video(data / f"p2s_two_people_{name}.mp4") for name in ("cam01", "cam02")]
    apart = estimate_performance(views, [cameras["cam01"], cameras["cam02"]], blazepose, Cache(pose_cache), "largest", offsets=[0.0])
    assert all((t.confidence > 0).any(axis=1).all() for t in apart.tracks)  # each view measured someone in every frame
    assert not np.isfinite(apart.points_3d).any()
    reasons = apart.kinematics().reasons["left_knee_angle"]
    assert (reasons == VIEWS_APART).all()
    assert describe_reasons(reasons).startswith("each camera view found a person")
