"""A performance filmed by two calibrated cameras, where it enters: the Python API, ``viddiff compare``'s flags,
dataset rows and ``viddiff data check``; each wrong input is one clear error before any model call."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from viddiff.api import build_describe_sample, build_sample
from viddiff.cli import main
from viddiff.config import Config, DataConfig
from viddiff.benchmarks.viddiffbench import VIDDIFFBENCH
from viddiff.data.check import check_dataset
from viddiff.data.viddiffbench import load_dataset
from viddiff.errors import CameraSetupError, DatasetError, VideoError, ViddiffError

CLIPS = Path(__file__).resolve().parents[1] / "data" / "pose2sim"
CLIP_H264, CLIP_VP9 = CLIPS / "p2s_single_cam01.mp4", CLIPS / "p2s_single_cam02.mp4"
CALIBRATION = CLIPS / "Calib.qca.txt"
"""The calibration of the take's four cameras: not one camera per video of a two-view performance."""

TWO = [str(CLIP_H264), str(CLIP_VP9)]


def test_a_list_of_videos_is_one_performance_with_its_calibration(two_camera_calibration: Path) -> None:
    sample, mode = build_sample(TWO, CLIP_H264, "a lab walk", differences=["slower"], calibration=two_camera_calibration)
    a, b = sample.videos
    assert mode == "closed" and a.path == str(CLIP_H264) and [v.path for v in a.views] == [str(CLIP_VP9)]
    assert a.calibration == str(two_camera_calibration)
    assert b.path == str(CLIP_H264) and "views" not in b.model_dump() and "calibration" not in b.model_dump()
    described = build_describe_sample(TWO, TWO, "", 3, calibration_a=two_camera_calibration, calibration_b=two_camera_calibration)
    assert all(len(ref.views) == 1 and ref.calibration == str(two_camera_calibration) for ref in described.videos)


def test_one_video_in_a_list_stays_one_view() -> None:
    sample, _ = build_sample([CLIP_H264], (CLIP_VP9,), "a lab walk", n_differences=2)
    assert [ref.model_dump() for ref in sample.videos] == [
        {"path": str(path), "fps_original": None, "frames_trim": None} for path in (CLIP_H264, CLIP_VP9)
    ]


@pytest.mark.parametrize(
    ("video_a", "calibrations", "error", "message"),
    [
        (TWO, {}, ViddiffError, "video A is 2 videos, but no calibration"),
        ([CLIP_H264], {"calibration": CALIBRATION}, ViddiffError, "a calibration is for a side filmed by several cameras"),
        (TWO, {"calibration": CALIBRATION, "calibration_a": CALIBRATION}, ViddiffError, "not both"),
        ([CLIP_H264], {"calibration_b": CALIBRATION}, ViddiffError, "calibration_b is for several videos of side B"),
        (TWO, {"calibration": CALIBRATION}, CameraSetupError, r"holds 4 cameras \(cam01, cam02, cam03, cam04\) for 2 videos"),
        (TWO, {"calibration": CLIPS / "LICENSE"}, CameraSetupError, "not a calibration file"),
        (TWO, {"calibration": CLIPS / "absent.toml"}, CameraSetupError, "cannot read calibration file"),
        ([CLIP_H264, CLIPS / "absent.mp4"], {"calibration": CALIBRATION}, VideoError, "absent.mp4 not found"),
        ([CLIP_H264, CLIP_H264], {"calibration": CALIBRATION}, VideoError, "more than once"),
        ([], {}, VideoError, "video A is an empty list"),
    ],
)
def test_wrong_performances_are_refused_before_any_model_call(video_a, calibrations, error, message) -> None:
    with pytest.raises(error, match=message):
        build_sample(video_a, CLIP_H264, "a lab walk", differences=["slower"], **calibrations)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--a", *TWO[:1], "--a", TWO[1], "--b", TWO[0]], "--a names 2 videos: give --calibration (or --calibration-a)"),
        ([TWO[0], "--b", TWO[1]], "not both ways"),
        (["--a", TWO[0]], "--b is missing"),
        ([TWO[0]], "give two videos"),
        (["--a", TWO[0], "--b", TWO[1], "--calibration", str(CALIBRATION)], "--calibration is for a side filmed by several"),
        (["--a", TWO[0], "--a", TWO[1], "--b", TWO[0], "--calibration-a", str(CALIBRATION), "--calibration-b", str(CALIBRATION)],
         "--calibration-b is for several videos of side B"),
        (["--a", TWO[0], "--a", TWO[1], "--b", TWO[0], "--calibration", str(CALIBRATION)], "holds 4 cameras"),
    ],
)
def test_compare_flags_say_what_is_wrong(args: list[str], message: str, capsys) -> None:
    assert main(["compare", *args, "--action", "a lab walk", "--difference", "slower"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("viddiff: error: ") and message in err and "Traceback" not in err


def _dataset(root: Path, video_a: dict) -> Path:
    """A one-row dataset under ``root`` whose video A is ``video_a``, B the first clip."""
    (root / "videos").mkdir(parents=True, exist_ok=True)
    for clip in (CLIP_H264, CLIP_VP9):
        (root / "videos" / clip.name).write_bytes(clip.read_bytes())
    row = {
        "sample_key": "take", "action": "fitness_0", "action_name": "lab walk", "action_description": "a lab walk",
        "split": "easy", "domain": "fitness",
        "videos": json.dumps([video_a, {"path": f"videos/{CLIP_H264.name}"}]),
        "differences_annotated": json.dumps({"0": {"name": "slower", "description": "slower", "num_frames": "gt_1"}}),
        "differences_gt": json.dumps({"0": "a"}),
    }
    (root / "dataset.jsonl").write_text(json.dumps(row) + "\n")
    return root / "dataset.jsonl"


def test_a_dataset_row_carries_views_and_a_calibration_relative_to_the_dataset(tmp_path: Path, two_camera_calibration: Path) -> None:
    (tmp_path / "setup").mkdir()
    (tmp_path / "setup" / "cams.qca.txt").write_bytes(two_camera_calibration.read_bytes())
    path = _dataset(tmp_path, {
        "path": f"videos/{CLIP_H264.name}", "fps_original": 60, "frames_trim": [0, 50],
        "views": [{"path": f"videos/{CLIP_VP9.name}", "frames_trim": [0, 50]}], "calibration": "setup/cams.qca.txt",
    })
    dataset = load_dataset(DataConfig(dataset=str(path)))
    a = dataset[0].videos[0]
    assert a.path == str(tmp_path / "videos" / CLIP_H264.name) and a.frames_trim == (0, 50)
    assert [(v.path, v.frames_trim) for v in a.views] == [(str(tmp_path / "videos" / CLIP_VP9.name), (0, 50))]
    assert a.calibration == str(tmp_path / "setup" / "cams.qca.txt")
    assert check_dataset(dataset, lambda s: VIDDIFFBENCH.video_advice(s, dataset, Config())) == []


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"views": [{"path": f"videos/{CLIP_VP9.name}"}]}, "field 'videos[0].calibration': views need a calibration"),
        ({"calibration": "setup.qca.txt"}, "field 'videos[0].views': a calibration needs views"),
        ({"views": [{"path": f"videos/{CLIP_VP9.name}", "views": [], "calibration": "c.toml"}], "calibration": "c.toml"},
         "field 'videos[0].views[0]': a view has no views or calibration of its own"),
        ({"views": [{"path": f"videos/{CLIP_VP9.name}"}], "calibration": "../../outside.toml"},
         "field 'videos[0].calibration': video path '../../outside.toml' resolves outside"),
        ({"views": "side.mp4", "calibration": "c.toml"}, "field 'videos[0].views': expected a list"),
    ],
)
def test_malformed_views_in_a_row_name_their_field(tmp_path: Path, extra: dict, message: str) -> None:
    path = _dataset(tmp_path, {"path": f"videos/{CLIP_H264.name}", **extra})
    with pytest.raises(DatasetError, match=re.escape(message)):
        load_dataset(DataConfig(dataset=str(path)))


def test_data_check_reports_a_missing_view_and_a_calibration_of_other_cameras(tmp_path: Path) -> None:
    (tmp_path / "Calib.qca.txt").write_bytes(CALIBRATION.read_bytes())
    path = _dataset(tmp_path, {
        "path": f"videos/{CLIP_H264.name}", "views": [{"path": "videos/side.mp4"}], "calibration": "Calib.qca.txt",
    })
    dataset = load_dataset(DataConfig(dataset=str(path)))
    problems = {p.path: p for p in check_dataset(dataset, lambda s: "advice")}
    assert set(problems) == {str(tmp_path / "videos" / "side.mp4"), str(tmp_path / "Calib.qca.txt")}
    assert problems[str(tmp_path / "videos" / "side.mp4")].problem == "missing"
    calibration = problems[str(tmp_path / "Calib.qca.txt")]
    assert calibration.video == "A" and "holds 4 cameras" in calibration.problem and "for 2 videos" in calibration.problem


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([TWO[0], "--trc", "take.trc"], "--trc is for a take filmed by several calibrated cameras"),
        ([TWO[0], "--calibration", str(CALIBRATION)], "--calibration is for a take filmed by several calibrated cameras"),
        (TWO, "2 videos of one take need --calibration"),
        ([*TWO, "--calibration", str(CALIBRATION)], "holds 4 cameras (cam01, cam02, cam03, cam04) for 2 videos"),
    ],
)
def test_pose_command_refuses_a_take_it_cannot_triangulate(args: list[str], message: str, tmp_path: Path, capsys) -> None:
    assert main(["pose", *args, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("viddiff: error: ") and message in err
    assert not (tmp_path / "out").exists()  # refused before anything was written
