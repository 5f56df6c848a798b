"""Validation of ViDiC-1K response files: the three accepted forms and their error messages."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from viddiff.data.dataset import Dataset
from viddiff.errors import PredictionFormatError
from viddiff.benchmarks.vidic.scoring import load_responses
from viddiff.schema import Sample, VideoRef

KEYS = ["p0", "p1", "p2"]


def _sample(key: str) -> Sample:
    videos = (VideoRef(path=f"/root/data/set/{key}_src.mp4"), VideoRef(path=f"/root/data/set/{key}_tgt.mp4"))
    return Sample(
        sample_key=key, action="vidic", action_name="", action_description="", split="vidic", domain="vidic", videos=videos
    )


@pytest.fixture
def dataset() -> Dataset:
    return Dataset(samples=[_sample(k) for k in KEYS], source="fixture", revision=None, root=Path("/root"), benchmark="vidic")


def _error(raw, dataset) -> str:
    with pytest.raises(PredictionFormatError) as info:
        load_responses(raw, dataset)
    return str(info.value)


def test_run_output_list_and_file(dataset, tmp_path: Path) -> None:
    raw = [{"id": k, "response": f"text {k}"} for k in KEYS]
    assert load_responses(raw, dataset) == {"p0": "text p0", "p1": "text p1", "p2": "text p2"}
    path = tmp_path / "predictions.json"
    path.write_text(json.dumps(raw))
    assert load_responses(path, dataset)["p2"] == "text p2"
    assert load_responses(str(path), dataset)["p0"] == "text p0"


def test_list_problems_are_listed_together(dataset) -> None:
    raw = [
        {"id": "p1", "response": "x"},  # out of order
        {"id": "p9", "response": "x"},  # unknown
        {"id": "p2", "response": 3},  # wrong slot, and not text
        {"id": "p3", "response": None},  # one item too many
    ]
    msg = _error(raw, dataset)
    assert "4 problem(s)" in msg
    assert "has 4 items but the dataset selection has 3 pairs" in msg
    assert "item 0: id 'p1' belongs elsewhere; item 0 must be pair 'p0'" in msg
    assert "item 1: id 'p9' is not a pair of the dataset" in msg
    assert "item 2 (id 'p2'): response must be a string" in msg and "got int" in msg


@pytest.mark.parametrize(
    ("item", "problem"),
    [
        ("text", "item 0: expected an object"),
        ({"id": "p0"}, "item 0: missing field(s) response"),
        ({"response": "x"}, "item 0: missing field(s) id"),
        ({"id": "p0", "response": ["x"]}, "response must be a string or null, got list"),
    ],
)
def test_bad_list_items(dataset, item, problem) -> None:
    raw = [item, {"id": "p1", "response": ""}, {"id": "p2", "response": ""}]
    assert problem in _error(raw, dataset)


def test_mapping(dataset, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        got = load_responses({"p2": "two", "p0": "zero"}, dataset)
    assert got == {"p0": "zero", "p2": "two"}  # p1 is missing (not a blank response)
    assert list(got) == ["p0", "p2"]  # dataset order
    assert "no response for 1 of 3 pair(s) (p1)" in caplog.text


def test_mapping_errors(dataset) -> None:
    msg = _error({"p0": "x", "q7": "y", "p1": ["a"]}, dataset)
    assert "id 'q7' is not a pair of the dataset selection" in msg
    assert "id 'p1': response must be a string" in msg and "got list" in msg


def test_vidic_repository_format_matches_by_video_paths(dataset, caplog: pytest.LogCaptureFixture) -> None:
    raw = [
        {"index": 1, "video1_path": "data/set/p1_src.mp4", "video2_path": "data/set/p1_tgt.mp4", "response": "one"},
        {"index": 2, "video1_path": "./set/p0_src.mp4", "video2_path": "set/p0_tgt.mp4", "response": "zero"},
    ]
    with caplog.at_level(logging.WARNING):
        got = load_responses(raw, dataset)
    assert got == {"p0": "zero", "p1": "one"}
    assert "no response for 1 of 3 pair(s) (p2)" in caplog.text


def test_vidic_repository_format_errors(dataset) -> None:
    raw = [
        {"video1_path": "set/p0_src.mp4", "video2_path": "set/p0_tgt.mp4", "response": "zero"},
        {"video1_path": "data/set/p0_src.mp4", "video2_path": "data/set/p0_tgt.mp4", "response": "again"},
        {"video1_path": "other/p1_src.mp4", "video2_path": "set/p1_tgt.mp4", "response": "one"},
        {"video1_path": "set/p2_tgt.mp4", "video2_path": "set/p2_src.mp4", "response": "swapped"},
        {"video1_path": "set/p2_src.mp4", "video2_path": "set/p2_tgt.mp4"},
    ]
    msg = _error(raw, dataset)
    assert "item 1: a second response for pair 'p0'" in msg
    assert "item 2: no pair of the dataset selection has videos 'other/p1_src.mp4' and 'set/p1_tgt.mp4'" in msg
    assert "item 3: no pair" in msg  # A and B swapped is another pair
    assert "item 4: missing field(s) response" in msg


def test_file_and_top_level_errors(dataset, tmp_path: Path) -> None:
    assert "predictions file not found" in _error(tmp_path / "missing.json", dataset)
    bad = tmp_path / "bad.json"
    bad.write_text("[{")
    assert "not valid JSON" in _error(bad, dataset)
    top = tmp_path / "top.json"
    top.write_text('"one long text"')
    assert f"{top}: top level is a str" in _error(top, dataset)
    assert "responses: top level is a int" in _error(3, dataset)
