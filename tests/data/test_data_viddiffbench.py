"""VidDiffBench loader: file formats, column encodings, row validation, filters, paths, HF failures."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from viddiff.config import DataConfig
from viddiff.data.safety import VideoPaths
from viddiff.data.dataset import Dataset
from viddiff.data.viddiffbench import RowContext, find_data_files, load_dataset, parse_row, read_rows
from viddiff.errors import DatasetError

JSON_COLUMNS = ("videos", "differences_annotated", "differences_gt", "retrieval_frames")


def make_row(key: str = "s0", action: str = "fitness_1", split: str = "easy", **overrides: Any) -> dict[str, Any]:
    """A valid row with decoded (not string) columns."""
    row: dict[str, Any] = {
        "sample_key": key,
        "action": action,
        "action_name": "squat",
        "action_description": "a barbell back squat",
        "split": split,
        "domain": "fitness",
        "source_dataset": "test",
        "videos": [
            {"path": f"videos/{key}_a.mp4", "fps_original": 30, "frames_trim": [3, 40]},
            {"path": f"videos/{key}_b", "fps_original": 12.5, "frames_trim": [None, None]},
        ],
        "differences_annotated": {
            "0": {"name": "depth", "description": "the squat is deeper", "query_string": "depth", "num_frames": "1"},
            "1": {"name": "speed", "description": "the descent is faster", "query_string": "speed", "num_frames": "gt_1"},
        },
        "differences_gt": {"0": "a", "1": "b"},
        "n_differences_open_prediction": 3,
        "retrieval_frames": {"stages": None, "keyframes": {"0": [[10], [12]]}},
    }
    row.update(overrides)
    return row


def encoded(row: dict[str, Any]) -> dict[str, Any]:
    """The row as the HF copy stores it: nested columns as JSON strings."""
    return {k: json.dumps(v) if k in JSON_COLUMNS else v for k, v in row.items()}


def rows3() -> list[dict[str, Any]]:
    return [make_row("s0"), make_row("s1", action="fitness_2", split="medium"), make_row("s2", split="hard")]


def load(path: Path, **cfg: Any) -> Dataset:
    return load_dataset(DataConfig(dataset=str(path), **cfg))


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


# --------------------------------------------------------------------------- formats and encodings


def test_json_jsonl_parquet_load_the_same_samples(tmp_path: Path) -> None:
    rows = rows3()
    (tmp_path / "j").mkdir()
    (tmp_path / "l").mkdir()
    (tmp_path / "p").mkdir()
    (tmp_path / "j" / "rows.json").write_text(json.dumps(rows))  # decoded columns
    write_jsonl(tmp_path / "l" / "rows.jsonl", [encoded(r) for r in rows])  # HF-style string columns
    pq.write_table(pa.Table.from_pylist([encoded(r) for r in rows]), tmp_path / "p" / "rows.parquet")

    loaded = [load(tmp_path / d / f"rows.{ext}") for d, ext in (("j", "json"), ("l", "jsonl"), ("p", "parquet"))]

    dumps = [[s.model_dump(exclude={"videos"}) for s in ds] for ds in loaded]
    assert dumps[0] == dumps[1] == dumps[2]
    assert [s.sample_key for s in loaded[2]] == ["s0", "s1", "s2"]
    sample = loaded[2][0]
    assert sample.videos[0].frames_trim == (3, 40)
    assert sample.videos[1].frames_trim == (None, None)
    assert sample.videos[1].fps_original == 12.5
    assert sample.labels == {"0": "a", "1": "b"}
    assert sample.differences["1"].num_frames == "gt_1"
    assert sample.n_differences_open == 3
    assert sample.retrieval_frames is not None and sample.retrieval_frames.keyframes["0"] == ([10], [12])


def test_string_and_decoded_columns_parse_identically(tmp_path: Path) -> None:
    row = make_row()
    assert parse_row(encoded(row), 0, tmp_path) == parse_row(row, 0, tmp_path)


def test_unknown_extra_fields_are_ignored(tmp_path: Path) -> None:
    row = make_row(new_hf_column=[1, 2], another={"x": 1})
    row["videos"][0]["camera"] = "front"
    sample = parse_row(row, 0, tmp_path)
    assert sample.sample_key == "s0"
    assert sample.videos[0].path.endswith("s0_a.mp4")


def test_dataset_container_and_provenance(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", rows3())
    ds = load(path)
    assert len(ds) == 3
    assert ds[1].sample_key == "s1"
    assert [s.sample_key for s in ds] == ["s0", "s1", "s2"]
    assert ds.source == str(path)
    assert ds.revision is None
    assert ds.root == tmp_path


# --------------------------------------------------------------------------- null annotations


def test_null_annotation_skips_the_difference_and_its_label(tmp_path: Path) -> None:
    row = make_row()
    row["differences_annotated"]["1"] = None
    row["differences_gt"]["2"] = "a"  # label with no annotation at all
    sample = parse_row(encoded(row), 0, tmp_path)
    assert set(sample.differences) == {"0"}
    assert sample.labels == {"0": "a"}


def test_null_label_is_kept_as_unlabelled(tmp_path: Path) -> None:
    row = make_row(differences_gt={"0": None, "1": "c"})
    sample = parse_row(row, 0, tmp_path)
    assert sample.labels == {"0": None, "1": "c"}
    assert sample.closed_differences() == []


def test_missing_label_key_means_unlabelled(tmp_path: Path) -> None:
    sample = parse_row(make_row(differences_gt={"0": "b"}), 0, tmp_path)
    assert sample.labels == {"0": "b", "1": None}


# --------------------------------------------------------------------------- invalid rows


def test_missing_field_names_row_key_and_field(tmp_path: Path) -> None:
    row = make_row("k7")
    del row["differences_gt"]
    with pytest.raises(DatasetError) as err:
        parse_row(row, 5, tmp_path)
    msg = str(err.value)
    assert "row 5" in msg and "'k7'" in msg and "differences_gt" in msg


def test_malformed_json_column_names_field_and_row(tmp_path: Path) -> None:
    rows = [encoded(make_row("s0")), encoded(make_row("s1"))]
    rows[1]["videos"] = '[{"path": "a.mp4"'
    path = write_jsonl(tmp_path / "d.jsonl", rows)
    with pytest.raises(DatasetError) as err:
        load(path)
    msg = str(err.value)
    assert str(path) in msg and "row 1" in msg and "'s1'" in msg and "'videos'" in msg and "not valid JSON" in msg


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda r: r["videos"].pop(), "videos"),
        (lambda r: r["videos"][0].pop("path"), "videos[0].path"),
        (lambda r: r["videos"][1].update(fps_original=0), "videos[1].fps_original"),
        (lambda r: r["videos"][0].update(frames_trim=[5, 2]), "videos[0].frames_trim"),
        (lambda r: r["videos"][0].update(frames_trim=[-1, 2]), "videos[0].frames_trim"),
        (lambda r: r["videos"][0].update(frames_trim=[1, 2, 3]), "videos[0].frames_trim"),
        (lambda r: r["differences_gt"].update({"0": "A"}), "differences_gt['0']"),
        (lambda r: r["differences_annotated"]["0"].update(num_frames="3"), "differences_annotated['0'].num_frames"),
        (lambda r: r["differences_annotated"]["1"].pop("description"), "differences_annotated['1'].description"),
        (lambda r: r["differences_annotated"].update({"2": "oops"}), "differences_annotated['2']"),
        (lambda r: r.update(differences_gt=["a"]), "differences_gt"),
        (lambda r: r.update(split=3), "split"),
        (lambda r: r.update(n_differences_open_prediction="3"), "n_differences_open_prediction"),
        (lambda r: r.update(sample_key=None), "sample_key"),
    ],
)
def test_wrong_values_name_the_field(tmp_path: Path, mutate: Any, field: str) -> None:
    row = make_row("bad")
    mutate(row)
    with pytest.raises(DatasetError) as err:
        parse_row(row, 2, tmp_path)
    msg = str(err.value)
    assert f"'{field}'" in msg and "row 2" in msg


def test_row_that_is_not_an_object(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="row 0: expected an object"):
        parse_row(["not", "a", "row"], 0, tmp_path)  # type: ignore[arg-type]


def test_duplicate_sample_keys(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [make_row("dup"), make_row("x"), make_row("dup")])
    with pytest.raises(DatasetError, match=r"'dup' appears in rows 0 and 2"):
        load(path)


def test_integer_sample_key_becomes_string(tmp_path: Path) -> None:
    assert parse_row(make_row(sample_key=12), 0, tmp_path).sample_key == "12"


# --------------------------------------------------------------------------- retrieval frames


def test_foreign_retrieval_frames_format_is_dropped(tmp_path: Path) -> None:
    for value in ({"0": {"frames": [1, 2]}}, "[[1, 2], [3]]", "not json", None):
        assert parse_row(make_row(retrieval_frames=value), 0, tmp_path).retrieval_frames is None
    row = make_row()
    del row["retrieval_frames"]
    assert parse_row(row, 0, tmp_path).retrieval_frames is None


def test_own_retrieval_frames_format_is_parsed(tmp_path: Path) -> None:
    value = {"stages": [{"starts": [0, 5], "end": 9}, {"starts": [1, 4], "end": 8}], "keyframes": {"1": [[2, 3], [5]]}}
    frames = parse_row(encoded(make_row(retrieval_frames=value)), 0, tmp_path).retrieval_frames
    assert frames is not None and frames.stages is not None
    assert frames.stages[1].starts == [1, 4] and frames.stages[0].end == 9
    assert frames.keyframes == {"1": ([2, 3], [5])}


# --------------------------------------------------------------------------- filters


def many_rows() -> list[dict[str, Any]]:
    spec = [("a1", "easy"), ("a1", "easy"), ("a2", "easy"), ("a1", "easy"), ("a3", "hard"), ("a2", "easy"), ("a2", "easy")]
    return [make_row(f"s{i}", action=a, split=s) for i, (a, s) in enumerate(spec)]


def keys(ds: Dataset) -> list[str]:
    return [s.sample_key for s in ds]


def test_split_filter(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", many_rows())
    cfg = DataConfig(dataset=str(path))
    assert keys(load_dataset(cfg, ["hard"])) == ["s4"]
    assert keys(load_dataset(cfg, ["easy", "hard"])) == [f"s{i}" for i in range(7)]
    assert len(load_dataset(cfg)) == 7


def test_subset_per_action_keeps_first_rows_in_dataset_order(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", many_rows())
    assert keys(load(path, subset_per_action=2)) == ["s0", "s1", "s2", "s4", "s5"]
    assert keys(load_dataset(DataConfig(dataset=str(path), subset_per_action=1), ["easy"])) == ["s0", "s2"]


def test_limit_applies_after_split_and_subset(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", many_rows())
    assert keys(load(path, limit=3)) == ["s0", "s1", "s2"]
    cfg = DataConfig(dataset=str(path), subset_per_action=1, limit=2)
    assert keys(load_dataset(cfg, ["easy", "hard"])) == ["s0", "s2"]


def test_unknown_split_lists_present_splits(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", many_rows())
    with pytest.raises(DatasetError) as err:
        load_dataset(DataConfig(dataset=str(path)), ["medium"])
    assert "medium" in str(err.value) and "easy, hard" in str(err.value)


def test_empty_dataset_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text("\n")
    with pytest.raises(DatasetError, match="no samples"):
        load(path)


# --------------------------------------------------------------------------- files and paths


def test_relative_paths_resolve_against_dataset_dir(tmp_path: Path) -> None:
    (tmp_path / "bench").mkdir()
    row = make_row()
    row["videos"][1]["path"] = str(tmp_path / "bench" / "abs" / "b.mp4")  # absolute, but inside the folder
    write_jsonl(tmp_path / "bench" / "dataset.jsonl", [row])
    ds = load(tmp_path / "bench")
    a, b = ds[0].videos
    assert a.path == str(tmp_path / "bench" / "videos" / "s0_a.mp4")
    assert b.path == str(tmp_path / "bench" / "abs" / "b.mp4")
    assert ds.root == tmp_path / "bench"
    assert ds.data_dir == tmp_path / "bench"


def test_relative_paths_resolve_against_video_root(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [make_row()])
    ds = load(path, video_root=str(tmp_path / "media"))
    assert ds[0].videos[0].path == str(tmp_path / "media" / "videos" / "s0_a.mp4")
    assert ds.root == tmp_path / "media"


def test_relative_video_root_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [make_row()])
    monkeypatch.chdir(tmp_path)
    ds = load(path, video_root="media")
    assert Path(ds[0].videos[0].path).is_absolute()
    assert ds[0].videos[0].path == str(tmp_path / "media" / "videos" / "s0_a.mp4")


def test_directory_with_several_files_lists_them(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "one.jsonl", [make_row()])
    (tmp_path / "two.json").write_text(json.dumps([make_row()]))
    with pytest.raises(DatasetError) as err:
        load(tmp_path)
    assert "one.jsonl" in str(err.value) and "two.json" in str(err.value)
    write_jsonl(tmp_path / "dataset.jsonl", [make_row("chosen")])
    assert keys(load(tmp_path)) == ["chosen"]


def test_single_file_in_directory_is_used(tmp_path: Path) -> None:
    (tmp_path / "rows.json").write_text(json.dumps([make_row("only")]))
    assert keys(load(tmp_path)) == ["only"]


def test_hf_repo_layout_prefers_files_of_the_split(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    for name in ("test-00001-of-00002.parquet", "test-00000-of-00002.parquet", "train-00000-of-00001.parquet"):
        (data / name).touch()
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "x.json").touch()
    files = find_data_files(tmp_path, "test")
    assert [p.name for p in files] == ["test-00000-of-00002.parquet", "test-00001-of-00002.parquet"]
    with pytest.raises(DatasetError, match="several dataset files"):
        find_data_files(tmp_path, None)


def test_missing_dataset_path(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="not found; use --dataset hf"):
        load(tmp_path / "nope.jsonl")
    with pytest.raises(DatasetError, match="no dataset file"):
        load(tmp_path)


def test_malformed_files(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(json.dumps(encoded(make_row())) + "\n{broken\n")
    with pytest.raises(DatasetError, match=r"a\.jsonl: line 2: not valid JSON"):
        load(tmp_path / "a.jsonl")
    (tmp_path / "b.json").write_text(json.dumps({"rows": []}))
    with pytest.raises(DatasetError, match="must be a list of rows"):
        load(tmp_path / "b.json")
    (tmp_path / "c.parquet").write_text("not parquet")
    with pytest.raises(DatasetError, match="not a readable parquet file"):
        load(tmp_path / "c.parquet")
    (tmp_path / "d.csv").write_text("x")
    with pytest.raises(DatasetError, match="unsupported dataset format"):
        load(tmp_path / "d.csv")


# --------------------------------------------------------------------------- HF hub


def test_hf_failure_names_repo_and_local_alternative(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cfg = DataConfig(dataset="hf", hf_repo="someone/NoSuchBench", hf_cache_dir=str(tmp_path / "hf"))
    with pytest.raises(DatasetError) as err:
        load_dataset(cfg)
    msg = str(err.value)
    assert "'someone/NoSuchBench'" in msg and "--dataset PATH" in msg and "HF_HUB_OFFLINE" in msg


def test_rows_are_not_mutated(tmp_path: Path) -> None:
    row = make_row()
    before = copy.deepcopy(row)
    parse_row(row, 0, tmp_path)
    assert row == before


# --------------------------------------------------------------------------- published revisions


def first_revision_row(key: str = "s0", action: str = "fitness_3", **overrides: Any) -> dict[str, Any]:
    """A row with the first public revision's columns: no domain, no N_diff, ``split`` holding the domain."""
    row = encoded(make_row(key, action=action, split="fitness"))
    for column in ("domain", "n_differences_open_prediction"):
        del row[column]
    row.update(sample_hash=1234567890123, vid0_thumbnail={"bytes": b"\x89PNG", "path": None}, **overrides)
    return row


def write_first_revision(folder: Path, rows: list[dict[str, Any]], n_diff: Any, splits: Any) -> Path:
    (folder / "data").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), folder / "data" / "test-00000-of-00001.parquet")
    if n_diff is not None:
        (folder / "n_differences.json").write_text(json.dumps(n_diff))
    if splits is not None:
        (folder / "lookup_action_to_split.json").write_text(json.dumps(splits))
    return folder


@pytest.mark.parametrize("n_diff", [{"fitness_3": 7}, {"fitness": {"fitness_3": 7}}], ids=["flat", "by-domain"])
def test_first_revision_takes_domain_split_and_n_diff_from_beside_the_rows(tmp_path: Path, n_diff: Any) -> None:
    folder = write_first_revision(tmp_path, [first_revision_row()], n_diff, {"fitness_3": "medium"})
    sample = load(folder)[0]
    assert (sample.domain, sample.split, sample.n_differences_open) == ("fitness", "medium", 7)
    assert sample.sample_hash == 1234567890123


def test_domain_comes_from_the_action_id_when_there_is_no_domain_column(tmp_path: Path) -> None:
    row = make_row(action="surgery_12")
    del row["domain"]
    assert parse_row(row, 0, tmp_path).domain == "surgery"
    row["action"] = "squat"
    with pytest.raises(DatasetError, match=r"'domain': missing, and action id 'squat' has no domain prefix"):
        parse_row(row, 0, tmp_path)


def test_action_missing_from_a_side_file_is_named(tmp_path: Path) -> None:
    rows = [first_revision_row("s0"), first_revision_row("s1", action="fitness_9")]
    folder = write_first_revision(tmp_path / "a", rows, {"fitness_3": 7, "fitness_9": 2}, {"fitness_3": "easy"})
    with pytest.raises(DatasetError, match=r"row 1 .*'split'.*action 'fitness_9' is not in .*lookup_action_to_split.json"):
        load(folder)
    folder = write_first_revision(tmp_path / "b", rows, {"fitness_3": 7}, {"fitness_3": "easy", "fitness_9": "hard"})
    missing = load(folder).missing_n_diff  # loads: only open mode needs N_diff, and refuses it then
    assert missing is not None and re.search(r"^1 row has none, the first: .*row 1 .*action 'fitness_9' is not in .*n_differences.json", missing)


def test_optional_columns_may_be_absent(tmp_path: Path) -> None:
    row = make_row()
    for column in ("source_dataset", "retrieval_frames"):
        del row[column]
    sample = parse_row(row, 0, tmp_path)
    assert sample.source_dataset == "" and sample.retrieval_frames is None and sample.sample_hash is None


def test_n_differences_column_wins_over_the_side_file(tmp_path: Path) -> None:
    row = first_revision_row(n_differences_open_prediction=11, domain="fitness", split="hard")
    folder = write_first_revision(tmp_path, [row], {"fitness_3": 7}, None)
    assert load(folder)[0].n_differences_open == 11


def test_thumbnail_columns_are_not_read(tmp_path: Path) -> None:
    folder = write_first_revision(tmp_path, [first_revision_row()], {"fitness_3": 1}, {"fitness_3": "easy"})
    rows = read_rows(folder / "data" / "test-00000-of-00001.parquet")
    assert "vid0_thumbnail" not in rows[0] and rows[0]["sample_key"] == "s0"


# --------------------------------------------------------------------------- finding row files by content


def test_side_files_and_scripts_are_not_rows(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    pq.write_table(pa.Table.from_pylist([encoded(make_row())]), tmp_path / "data" / "test-00000-of-00001.parquet")
    (tmp_path / "n_differences.json").write_text(json.dumps({"fitness_1": 3}))
    (tmp_path / "egoexo4d_uids.json").write_text(json.dumps(["3f2a6c1e-0b7d-4e59-9a1c-5d8e7f6a4b21"]))
    (tmp_path / "lookup_action_to_split.json").write_text(json.dumps({"fitness_1": "easy"}))
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "samples.jsonl").write_text(json.dumps({"sample_key": "s0", "index": 0}) + "\n")
    assert find_data_files(tmp_path) == [tmp_path / "data" / "test-00000-of-00001.parquet"]
    assert keys(load(tmp_path)) == ["s0"]


def test_no_row_file_lists_what_was_found(tmp_path: Path) -> None:
    (tmp_path / "n_differences.json").write_text(json.dumps({"fitness_1": 3}))
    with pytest.raises(DatasetError, match=r"no dataset file \(n_differences.json hold no rows\)"):
        load(tmp_path)


def test_a_damaged_row_file_is_reported_not_skipped(tmp_path: Path) -> None:
    (tmp_path / "rows.jsonl").write_text("{broken\n")
    (tmp_path / "n_differences.json").write_text("{}")
    with pytest.raises(DatasetError, match=r"rows\.jsonl: line 1: not valid JSON"):
        load(tmp_path)


# --------------------------------------------------------------------------- untrusted files: text caps, paths


def test_a_10_mb_field_is_refused_naming_row_and_field(tmp_path: Path) -> None:
    rows = [make_row("s0"), make_row("s1")]
    rows[1]["differences_annotated"]["1"]["description"] = "x" * 10_000_000
    path = write_jsonl(tmp_path / "d.jsonl", [encoded(r) for r in rows])
    with pytest.raises(DatasetError) as err:
        load(path)
    msg = str(err.value)
    assert "row 1 (sample_key 's1')" in msg and "differences_annotated['1'].description" in msg
    assert "10,000,000 characters" in msg and "data.max_text_chars=20,000" in msg and len(msg) < 600


@pytest.mark.parametrize("field", ["action_description", "action_name", "sample_key", "split"])
def test_text_cap_applies_to_every_text_field(tmp_path: Path, field: str) -> None:
    row = make_row(**{field: "y" * 101})
    with pytest.raises(DatasetError, match=rf"'{field}': 101 characters, more than data.max_text_chars=100"):
        parse_row(row, 0, tmp_path, RowContext(paths=VideoPaths.under(tmp_path), max_text_chars=100))


def test_text_cap_is_configurable(tmp_path: Path) -> None:
    row = make_row(action_description="z" * 30_000)
    path = write_jsonl(tmp_path / "d.jsonl", [row])
    with pytest.raises(DatasetError, match="action_description"):
        load(path)
    assert len(load(path, max_text_chars=None)[0].action_description) == 30_000
    assert len(load(path, max_text_chars=40_000)[0].action_description) == 30_000


@pytest.mark.parametrize(
    "video_path", ["../../etc/passwd", "/etc/passwd", "videos/../../outside.mp4", "~/clip.mp4"]
)
def test_video_paths_outside_the_dataset_are_refused(tmp_path: Path, video_path: str) -> None:
    row = make_row()
    row["videos"][0]["path"] = video_path
    (tmp_path / "bench").mkdir()
    path = write_jsonl(tmp_path / "bench" / "d.jsonl", [row])
    with pytest.raises(DatasetError) as err:
        load(path)
    msg = str(err.value)
    assert "row 0 (sample_key 's0')" in msg and "'videos[0].path'" in msg and "resolves outside" in msg
    assert "data.allow_paths_outside_root=true" in msg
    assert load(path, allow_paths_outside_root=True)[0].videos[0].path.endswith(Path(video_path).name)


def test_a_symlink_escaping_the_dataset_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "videos").symlink_to(tmp_path / "elsewhere")
    path = write_jsonl(tmp_path / "bench" / "d.jsonl", [make_row()])
    with pytest.raises(DatasetError, match=r"resolves outside .* \(a symlink leads to .*elsewhere"):
        load(path)
    assert load(path, allow_paths_outside_root=True)[0].videos[0].path == str(tmp_path / "bench" / "videos" / "s0_a.mp4")


def test_paths_inside_video_root_are_allowed(tmp_path: Path) -> None:
    media = tmp_path / "media"
    row = make_row()
    row["videos"][1]["path"] = str(media / "b.mp4")
    path = write_jsonl(tmp_path / "d.jsonl", [row])
    ds = load(path, video_root=str(media))
    assert ds[0].videos[1].path == str(media / "b.mp4")


def test_search_stops_at_the_shallowest_level_with_rows(tmp_path: Path) -> None:
    """Unpacked videos with their own JSON metadata below the rows are never opened (nor taken for rows)."""
    write_jsonl(tmp_path / "dataset.jsonl", [make_row()])
    takes = tmp_path / "videos" / "takes"
    takes.mkdir(parents=True)
    write_jsonl(takes / "rows_elsewhere.jsonl", [make_row("other")])
    (takes / "meta.json").write_text("{unreadable")
    (tmp_path / "videos" / "loop").symlink_to(tmp_path)  # a symlink loop does not hang the search
    assert find_data_files(tmp_path) == [tmp_path / "dataset.jsonl"]
    (tmp_path / "dataset.jsonl").unlink()  # now the rows are two levels down, next to an unreadable file
    with pytest.raises(DatasetError, match=r"several dataset files \(videos/takes/meta.json, videos/takes/rows_elsewhere"):
        find_data_files(tmp_path)
