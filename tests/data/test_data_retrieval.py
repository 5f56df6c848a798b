"""``retrieval_frames`` in every published shape, into the ``RetrievalFrames`` the oracle localizer reads."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from viddiff.config import DataConfig
from viddiff.data.retrieval import UnknownFormat, parse_retrieval_frames
from viddiff.data.viddiffbench import load_dataset

EXPECTED = {"0": ([12], [30]), "3": ([40, 44, 48], [61, 65, 69])}


@pytest.mark.parametrize(
    "value",
    [
        json.dumps([{"0": [12], "3": [40, 44, 48]}, {"0": [30], "3": [61, 65, 69]}]),  # the published column
        [{"0": [12], "3": [40, 44, 48]}, {"0": [30], "3": [61, 65, 69]}],  # decoded
        {"0": {"0": [12], "3": [40, 44, 48]}, "1": {"0": [30], "3": [61, 65, 69]}},  # keyed by video index
        {"a": {"0": 12, "3": [40, 44, 48]}, "b": {"0": 30.0, "3": [61, 65, 69]}},  # single ints, integral floats
        json.dumps({"keyframes": {"0": [[12], [30]], "3": [[40, 44, 48], [61, 65, 69]]}}),  # viddiff's own format
    ],
    ids=["published", "decoded", "by-index", "by-letter", "own"],
)
def test_published_shapes_give_the_same_keyframes(value: Any) -> None:
    frames = parse_retrieval_frames(value)
    assert frames is not None and frames.keyframes == EXPECTED


def test_older_loader_shape_inside_videos() -> None:
    videos = [
        {"path": "a.mp4", "retrieval_frames": {"0": [12], "3": [40, 44, 48]}},
        {"path": "b.mp4", "retrieval_frames": {"0": [30], "3": [61, 65, 69]}},
    ]
    frames = parse_retrieval_frames(None, videos)
    assert frames is not None and frames.keyframes == EXPECTED
    # the column wins over the per-video maps when both are there
    column = parse_retrieval_frames([{"9": [1]}, {"9": [2]}], videos)
    assert column is not None and column.keyframes == {"9": ([1], [2])}


def test_keys_annotated_in_one_video_or_empty_are_left_out() -> None:
    frames = parse_retrieval_frames([{"0": [1], "1": [5], "2": [], "4": None}, {"0": [2], "2": [3], "4": [9]}])
    assert frames is not None and frames.keyframes == {"0": ([1], [2])}
    assert parse_retrieval_frames([{"1": [5]}, {}]) is None  # nothing annotated in both videos
    assert parse_retrieval_frames(None, [{"path": "a"}, {"path": "b"}]) is None


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("[[1, 2], [3]", "not valid JSON"),
        ([{"0": [1]}], "one map per video"),
        ({"0": [1], "1": [2]}, "expected a map of difference key"),
        ([{"0": [-1]}, {"0": [2]}], "integers >= 0"),
        ([{"0": ["x"]}, {"0": [2]}], "integers >= 0"),
        ([{"0": {"f": 1}}, {"0": [2]}], "expected frame indices"),
        (7, "expected a list of two maps"),
        ({"stages": "x"}, "not a valid RetrievalFrames"),
    ],
)
def test_unreadable_shapes_say_why(value: Any, reason: str) -> None:
    with pytest.raises(UnknownFormat, match=reason):
        parse_retrieval_frames(value)


def test_loader_ignores_unreadable_annotations_with_one_warning(
    tmp_path: Path, synth_rows: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    rows = [dict(r) for r in synth_rows]
    for row in rows[:2]:
        row["retrieval_frames"] = json.dumps({"0": [1, 2]})
    path = tmp_path / "dataset.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with caplog.at_level(logging.WARNING, logger="viddiff.data.viddiffbench"):
        dataset = load_dataset(DataConfig(dataset=str(path)))
    assert [s.retrieval_frames is None for s in dataset] == [True, True] + [False] * (len(rows) - 2)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "retrieval_frames of 2 row(s)" in warnings[0] and "row 0" in warnings[0]


@pytest.mark.parametrize("empty", ["{}", {}, "[]", [], "", "  ", "null"])
def test_an_empty_annotation_is_no_annotation(
    empty: Any, tmp_path: Path, synth_rows: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 22: rows whose ``retrieval_frames`` hold an empty object loaded with a warning about every row."""
    assert parse_retrieval_frames(empty) is None
    videos = [{"path": "a.mp4", "retrieval_frames": {"0": [12]}}, {"path": "b.mp4", "retrieval_frames": {"0": [30]}}]
    older = parse_retrieval_frames(empty, videos)  # the per-video maps still count
    assert older is not None and older.keyframes == {"0": ([12], [30])}
    rows = [{**r, "retrieval_frames": empty} for r in synth_rows]
    path = tmp_path / "dataset.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with caplog.at_level(logging.WARNING, logger="viddiff.data.viddiffbench"):
        dataset = load_dataset(DataConfig(dataset=str(path)))
    assert all(s.retrieval_frames is None for s in dataset)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
