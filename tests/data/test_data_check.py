"""``viddiff data check``: missing, unreadable and mis-trimmed videos are reported with advice."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from viddiff.benchmarks.viddiffbench import VIDDIFFBENCH
from viddiff.cli import main
from viddiff.config import Config, DataConfig
from viddiff.data.check import check_dataset
from viddiff.data.dataset import Dataset
from viddiff.data.viddiffbench import load_dataset
from viddiff.schema import Sample, VideoRef


def _check(dataset: Dataset, backend: str = "auto"):
    return check_dataset(dataset, lambda s: VIDDIFFBENCH.video_advice(s, dataset, Config()), backend=backend)


@pytest.fixture()
def synth_copy(synth_file: Path, tmp_path: Path) -> Path:
    """A private copy of the session's synthetic benchmark that a test may damage."""
    return shutil.copytree(synth_file.parent, tmp_path / "bench")


def test_intact_dataset_has_no_problems(synth_file: Path) -> None:
    assert _check(load_dataset(DataConfig(dataset=str(synth_file)))) == []


def test_reports_deleted_and_unreadable_videos(synth_copy: Path) -> None:
    deleted = synth_copy / "videos" / "pair_0001_b.mp4"
    corrupt = synth_copy / "videos" / "pair_0002_a.mp4"
    deleted.unlink()
    corrupt.write_bytes(corrupt.read_bytes()[:200])
    problems = _check(load_dataset(DataConfig(dataset=str(synth_copy))), backend="pyav")
    by_path = {p.path: p for p in problems}
    assert set(by_path) == {str(deleted), str(corrupt)}
    assert by_path[str(deleted)].problem == "missing"
    assert (by_path[str(deleted)].sample_key, by_path[str(deleted)].video) == ("pair_0001", "B")
    assert by_path[str(corrupt)].problem.startswith("unreadable")
    assert (by_path[str(corrupt)].sample_key, by_path[str(corrupt)].video) == ("pair_0002", "A")
    assert all("viddiff data synth" in p.advice and str(synth_copy) in p.advice for p in problems)


def test_reports_trim_past_the_end(synth_copy: Path) -> None:
    path = synth_copy / "dataset.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    videos = json.loads(rows[0]["videos"])
    videos[0]["frames_trim"] = [2, 10_000]
    rows[0]["videos"] = json.dumps(videos)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    problems = _check(load_dataset(DataConfig(dataset=str(path))))
    assert len(problems) == 1
    assert problems[0].sample_key == "pair_0000" and problems[0].video == "A"
    assert "frames_trim [2, 10000)" in problems[0].problem and "does not fit" in problems[0].problem


def _sample(domain: str, source: str = "VidDiffBench") -> Sample:
    ref = VideoRef(path="/x.mp4", fps_original=30)
    return Sample(
        sample_key="k", action="a", action_name="a", action_description="a", split="easy",
        domain=domain, source_dataset=source, videos=(ref, ref),
    )


@pytest.mark.parametrize(
    ("domain", "expected"),
    [
        ("fitness", ["my/Repo", "videos_fitness.zip", "/root"]),
        ("surgery", ["my/Repo", "videos_surgery.zip"]),
        ("ballsports", ["Ego-Exo4D", "licence"]),
        ("music", ["Ego-Exo4D"]),
        ("diving", ["FineDiving", "licence"]),
        ("other", ["data.video_root"]),
    ],
)
def test_advice_names_where_videos_come_from(domain: str, expected: list[str]) -> None:
    dataset = Dataset(samples=[], source="fixture", revision=None, root=Path("/root"))
    advice = VIDDIFFBENCH.video_advice(_sample(domain), dataset, Config().with_overrides(["data.hf_repo=my/Repo"]))
    assert all(text in advice for text in expected)


def test_cli_check_exit_codes(synth_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "check", "--dataset", str(synth_copy)]) == 0
    assert "all 8 videos readable" in capsys.readouterr().out
    missing = synth_copy / "videos" / "pair_0000_a.mp4"
    missing.unlink()
    assert main(["data", "check", "--dataset", str(synth_copy), "--split", "easy"]) == 1
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("pair_0000 video A"))
    assert "missing" in line and str(missing) in line and "viddiff data synth" in line
    assert "1 of 4 videos cannot be used" in out
    # the other split does not contain the missing video
    assert main(["data", "check", "--dataset", str(synth_copy), "--split", "medium"]) == 0


def test_cli_check_bad_dataset_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "check", "--dataset", str(tmp_path / "nothing")]) == 2
    assert "not found" in capsys.readouterr().err


def test_a_one_frame_video_is_one_frame_in_the_message(synth_copy: Path) -> None:
    """The count takes its noun's number (it said "the video's 1 frames")."""
    import numpy as np

    from viddiff.video.write import write_video

    write_video(synth_copy / "videos" / "one.mp4", np.zeros((1, 32, 32, 3), np.uint8), 12.0)
    path = synth_copy / "dataset.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    videos = json.loads(rows[0]["videos"])
    videos[0] = {"path": "videos/one.mp4", "fps_original": 12.0, "frames_trim": [0, 5]}
    rows[0]["videos"] = json.dumps(videos)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (problem,) = _check(load_dataset(DataConfig(dataset=str(path))))
    assert problem.problem.endswith("does not fit the video's 1 frame")
