"""Two-view 3D evidence end to end, through the command line and the real local server, on the real Pose2Sim take
(cam01 and cam02, calibrated): ``viddiff run`` on a dataset row whose sides are the take's first and second half
(``frames_trim``), each filmed by both cameras, and ``viddiff compare --a --a --b --calibration`` (console and
``--json``) with a 3D side against a one-view side; and ``viddiff pose`` of the take in 3D with its ``.trc``."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from viddiff.cli import main
from viddiff.store import ResultsStore
from viddiff.testing import offline_overrides
from viddiff.video import probe_video, read_video
from viddiff.video.write import write_video

STATEMENTS = ("the knees are straighter", "the arms are straighter", "the person is slower")
THREE_D = "triangulated 3D from 2 calibrated views"


@pytest.fixture(scope="module")
def sets(scripted_server, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Offline models and one cache for the module: the second command reuses the first one's keypoints."""
    items = offline_overrides(scripted_server.base_url, str(tmp_path_factory.mktemp("two_view") / "cache.sqlite"))
    items += ["localizer.method=uniform", "pose.fps=20", "pose.native_up_to_frames=20"]  # 25-34 pose frames a view
    return [x for item in items for x in ("--set", item)]


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")


def _dataset(root: Path, clip_h264: Path, clip_vp9: Path, calibration: Path) -> Path:
    """One row: A = the take's frames [0, 50) from both cameras, B = frames [50, 100)."""
    (root / "videos").mkdir(parents=True)
    for clip in (clip_h264, clip_vp9, calibration):
        os.link(clip, root / "videos" / clip.name)

    def side(trim: list[int]) -> dict:
        return {"path": f"videos/{clip_h264.name}", "frames_trim": trim, "calibration": f"videos/{calibration.name}",
                "views": [{"path": f"videos/{clip_vp9.name}", "frames_trim": trim}]}

    row = {
        "sample_key": "halves", "action": "fitness_0", "action_name": "lab walk",
        "action_description": "a person moving in a lab", "split": "easy", "domain": "fitness",
        "videos": json.dumps([side([0, 50]), side([50, 100])]),
        "differences_annotated": json.dumps(
            {str(i): {"name": t, "description": t, "query_string": t, "num_frames": "gt_1"} for i, t in enumerate(STATEMENTS)}
        ),
        "differences_gt": json.dumps({str(i): "a" for i in range(len(STATEMENTS))}),
    }
    (root / "dataset.jsonl").write_text(json.dumps(row) + "\n")
    return root


@pytest.mark.slow
def test_halves_of_a_take_filmed_by_two_cameras_compare_in_3d(
    tmp_path: Path, sets: list[str], clip_h264: Path, clip_vp9: Path, two_camera_calibration: Path
) -> None:
    dataset = _dataset(tmp_path / "dataset", clip_h264, clip_vp9, two_camera_calibration)
    out = tmp_path / "run"
    assert main(["-q", "run", "--dataset", str(dataset), "--mode", "closed", "--output", str(out), *sets,
                 "--set", "pose.evidence=true"]) == 0
    result = ResultsStore(out).load()["halves"]
    evidence = {e.key: e for e in result.evidence}
    knees, arms, slower = evidence["0"], evidence["1"], evidence["2"]
    for e in (knees, arms):
        assert e.view_a.method == THREE_D and e.view_b.method == THREE_D
        assert e.status in ("measured", "within_noise"), e.reason  # two 3D sides always compare
        assert "triangulated from 2 calibrated views" in e.estimator
        assert 0 < e.value_a < 180 and 0 < e.value_b < 180 and e.unit == "°"
        assert not e.interval_a.in_picture and not e.interval_b.in_picture  # the body's own angle
    assert slower.view_a is None and slower.value_a == pytest.approx(slower.value_b, abs=0.02)  # two halves, 50 frames each


@pytest.mark.slow
def test_compare_shows_a_3d_side_against_a_one_view_side(
    tmp_path: Path, sets: list[str], clip_h264: Path, clip_vp9: Path, two_camera_calibration: Path, capsys
) -> None:
    args = ["compare", "--a", str(clip_h264), "--a", str(clip_vp9), "--b", str(clip_h264), "--calibration-a",
            str(two_camera_calibration), "--action", "a person moving in a lab", "--pose", "--difference", STATEMENTS[0],
            *sets]
    assert main([*args, "--json"]) == 0
    knees = json.loads(capsys.readouterr().out)["differences"][0]["evidence"]
    assert knees["view_a"]["method"] == THREE_D and knees["view_b"]["method"] != THREE_D
    assert "triangulated from 2 calibrated views" in knees["estimator"]

    report = tmp_path / "report.html"
    assert main([*args, "--report", str(report)]) == 0
    table = capsys.readouterr().out
    assert "A: the only person in view, in 3D from 2 calibrated views" in table
    assert "in 3D from 2 calibrated views" in report.read_text()


@pytest.mark.slow
def test_pose_command_writes_the_take_in_3d_and_a_trc(
    tmp_path: Path, sets: list[str], clip_h264: Path, clip_vp9: Path, two_camera_calibration: Path, capsys
) -> None:
    out = tmp_path / "pose"
    assert main(["pose", str(clip_h264), str(clip_vp9), "--calibration", str(two_camera_calibration), "--out", str(out),
                 "--trc", str(out / "take.trc"), "--fps", "20", "--overlay", *sets]) == 0
    err = capsys.readouterr().err
    assert "triangulated from 2 calibrated views" in err and "views aligned in time: view 2:" in err
    header = (out / "take.trc").read_text().splitlines()
    assert header[0].split("\t")[:3] == ["PathFileType", "4", "(X/Y/Z)"]
    rate, _, n_frames, n_markers, units = header[2].split("\t")[:5]
    assert (int(n_markers), units) == (17, "m") and int(n_frames) == len(header) - 5
    with (out / "angles.csv").open() as fh:
        knees = [row["left_knee_angle"] for row in csv.DictReader(fh)]
    assert len(knees) == int(n_frames) and sum(1 for k in knees if k) > len(knees) // 2  # the body's own angles
    assert probe_video(out / "overlay.mp4").n_frames == int(n_frames)  # the 3D skeleton on the main video's frames


@pytest.fixture(scope="module")
def still_cam02(tmp_path_factory: pytest.TempPathFactory, clip_vp9: Path) -> Path:
    """cam02's first frame held for 100 frames at 60 fps: a view with no motion to align it by."""
    first = read_video(clip_vp9).frames[:1]
    out = tmp_path_factory.mktemp("still") / "cam02_still.mp4"
    return write_video(out, [first[0]] * 100, fps=60, options={"crf": "12", "preset": "ultrafast"})


@pytest.mark.slow
def test_views_that_cannot_be_aligned_leave_the_pose_evidence_absent_not_guessed(
    sets: list[str], clip_h264: Path, still_cam02: Path, two_camera_calibration: Path, capsys
) -> None:
    assert main(["compare", "--a", str(clip_h264), "--a", str(still_cam02), "--b", str(clip_h264), "--calibration-a",
                 str(two_camera_calibration), "--action", "a person moving in a lab", "--pose", "--json",
                 "--difference", STATEMENTS[0], "--difference", STATEMENTS[2], *sets]) == 0
    knees, slower = json.loads(capsys.readouterr().out)["differences"]
    assert knees["evidence"] is None and knees["prediction"] in ("a", "b")  # the VLM's verdict stands alone
    assert knees["evidence_absent"].startswith("the pose was not measured: video A's views could not be aligned in time")
    assert slower["evidence"]["status"] != "absent" and slower["evidence"]["unit"] == "s"  # durations need no pose
