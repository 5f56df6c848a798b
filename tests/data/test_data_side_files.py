"""Side files beside the rows (``n_differences.json``, ``lookup_action_to_split.json``, ``egoexo4d_uids.json``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from viddiff.data.side_files import SideFiles, egoexo_uids, search_dirs
from viddiff.errors import DatasetError


def side(tmp_path: Path, name: str, content: object) -> SideFiles:
    (tmp_path / name).write_text(content if isinstance(content, str) else json.dumps(content))
    return SideFiles([tmp_path])


def test_n_differences_flat_or_grouped_by_domain(tmp_path: Path) -> None:
    assert side(tmp_path, "n_differences.json", {"fitness_0": 4, "music_1": 2}).n_differences == {"fitness_0": 4, "music_1": 2}
    grouped = {"fitness": {"fitness_0": 4}, "music": {"music_1": 2}}
    assert side(tmp_path, "n_differences.json", grouped).n_differences == {"fitness_0": 4, "music_1": 2}


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ({"fitness_0": "4"}, "must be an integer >= 0"),
        ({"fitness_0": -1}, "must be an integer >= 0"),
        ({"a": {"fitness_0": 4}, "b": {"fitness_0": 5}}, "two different N_diff values"),
        ([1, 2], "expected an object keyed by action id"),
        ("{not json", "not valid JSON"),
    ],
)
def test_malformed_n_differences_names_the_file(tmp_path: Path, content: object, problem: str) -> None:
    with pytest.raises(DatasetError, match=problem) as err:
        side(tmp_path, "n_differences.json", content).n_differences
    assert str(tmp_path / "n_differences.json") in str(err.value)


def test_split_lookup_values_must_be_difficulties(tmp_path: Path) -> None:
    assert side(tmp_path, "lookup_action_to_split.json", {"fitness_0": "easy"}).split_lookup == {"fitness_0": "easy"}
    with pytest.raises(DatasetError, match="split of 'fitness_0' must be one of easy, medium, hard, got 'fitness'"):
        side(tmp_path, "lookup_action_to_split.json", {"fitness_0": "fitness"}).split_lookup


def test_missing_files_are_none_and_the_nearest_copy_wins(tmp_path: Path) -> None:
    assert SideFiles([tmp_path]).n_differences is None and SideFiles([tmp_path]).split_lookup is None
    (tmp_path / "data").mkdir()
    (tmp_path / "n_differences.json").write_text(json.dumps({"x_0": 1}))
    (tmp_path / "data" / "n_differences.json").write_text(json.dumps({"x_0": 2}))
    assert SideFiles(search_dirs(tmp_path / "data" / "rows.parquet", tmp_path)).n_differences == {"x_0": 2}


def test_search_stops_at_the_dataset_folder(tmp_path: Path) -> None:
    row_file = tmp_path / "repo" / "data" / "shard" / "rows.parquet"
    assert search_dirs(row_file, tmp_path / "repo") == [row_file.parent, row_file.parent.parent, tmp_path / "repo"]
    assert search_dirs(row_file, None) == [row_file.parent, row_file.parent.parent]


def test_egoexo_uids_are_found_at_any_nesting(tmp_path: Path) -> None:
    a, b = "3f2a6c1e-0b7d-4e59-9a1c-5d8e7f6a4b21", "A9C04D7E-61F3-4B2A-8E5D-0C1B2A3F4E5D"
    path = tmp_path / "egoexo4d_uids.json"
    for content in ([a, b, a], {"ballsports": [a], "music": {"take": b}}, {a: "basketball", b: "piano"}):
        path.write_text(json.dumps(content))
        assert egoexo_uids(path) == [a, b.lower()]
    path.write_text(json.dumps({"note": "no uids here"}))
    assert egoexo_uids(path) == []
