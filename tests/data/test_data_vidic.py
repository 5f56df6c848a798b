"""ViDiC-1K loader: checklists, validation messages, filters, overlap, HF access, and `data check`."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any, Callable

import pytest

from viddiff.cli import main
from viddiff.config import Config, DataConfig, VidicConfig
from viddiff.benchmarks import load_benchmark
from viddiff.benchmarks.vidic import VIDIC
from viddiff.benchmarks.vidic.data import (
    CATEGORIES,
    CATEGORY_NAMES,
    find_checklist,
    load_vidic,
    normalise_category,
    overlap_with_viddiffbench,
)
from viddiff.benchmarks.vidic.synthetic import write_synthetic_vidic
from viddiff.data.check import check_dataset
from viddiff.errors import DatasetError

PAIRS = 4


@pytest.fixture(scope="module")
def fixture_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_synthetic_vidic(tmp_path_factory.mktemp("vidic"), pairs=PAIRS, seed=5).parent


def _load(dataset: Path, **data: Any) -> Any:
    vidic = data.pop("vidic", VidicConfig())
    return load_vidic(DataConfig(benchmark="vidic", dataset=str(dataset), **data), vidic)


def _check(dataset: Any) -> Any:
    return check_dataset(dataset, lambda sample: VIDIC.video_advice(sample, dataset, Config()))


def _question(category: str, text: str, answer: str) -> dict[str, str]:
    return {"class": category, "question": text, "correct_answer": answer}


def _item(**fields: Any) -> dict[str, Any]:
    item = {
        "index": 7,
        "video1_path": "data/LongoXC/add_person/7_src.mp4",
        "video2_path": "data/LongoXC/add_person/7_tgt.mp4",
        "structured_analysis": {
            "Similarities": [_question("style", "Is the visual style different between Video A and Video B?", "no")],
            "Differences": [
                _question("subject", "Does Video B show a second person?", "yes"),
                _question("camera", "Does the camera pan in Video A but stay static in Video B?", "yes"),
            ],
        },
    }
    item.update(fields)
    return item


def _write(tmp_path: Path, items: Any, name: str = "checklist.json") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(items))
    return path


# --------------------------------------------------------------------------- the synthetic fixture


def test_loads_the_synthetic_fixture(fixture_dir: Path) -> None:
    dataset = _load(fixture_dir, vidic=VidicConfig(n_differences=7))
    assert dataset.benchmark == "vidic" and len(dataset) == PAIRS
    assert [s.sample_key for s in dataset] == ["0", "1", "2", "3"]
    assert dataset.source == str(fixture_dir / "checklist.json") and dataset.revision is None
    assert dataset.root == fixture_dir
    items = json.loads((fixture_dir / "checklist.json").read_text())
    for sample, item in zip(dataset, items):
        assert (sample.action, sample.action_name, sample.action_description) == ("vidic", "", "")
        assert (sample.split, sample.domain, sample.source_dataset) == ("vidic", "vidic", "synthetic")
        assert sample.differences == {} and sample.labels == {} and sample.n_differences_open == 7
        assert [v.path for v in sample.videos] == [
            str(fixture_dir / item["video1_path"]),
            str(fixture_dir / item["video2_path"]),
        ]
        assert all(Path(v.path).is_absolute() and Path(v.path).is_file() for v in sample.videos)
        checklist = dataset.checklists[sample.sample_key]
        sims, diffs = item["structured_analysis"]["Similarities"], item["structured_analysis"]["Differences"]
        assert [q.key for q in checklist] == [f"s{i}" for i in range(len(sims))] + [f"d{i}" for i in range(len(diffs))]
        assert [q.question for q in checklist] == [q["question"] for q in sims + diffs]
        assert all(q.correct_answer == ("no" if q.kind == "similarity" else "yes") for q in checklist)
    categories = {q.category for checklist in dataset.checklists.values() for q in checklist}
    assert categories <= set(CATEGORIES) and "playback" in categories  # "playback technique" normalised


def test_a_checklist_file_and_its_directory_load_alike(fixture_dir: Path) -> None:
    by_dir, by_file = _load(fixture_dir), _load(fixture_dir / "checklist.json")
    assert by_dir.samples == by_file.samples and by_dir.checklists == by_file.checklists


def test_load_benchmark_dispatches_to_vidic(fixture_dir: Path) -> None:
    cfg = Config().with_overrides(["data.benchmark=vidic", f"data.dataset={fixture_dir}", "data.limit=1"])
    dataset = load_benchmark(cfg)
    assert dataset.benchmark == "vidic" and [s.sample_key for s in dataset] == ["0"]
    assert list(dataset.checklists) == ["0"]


# --------------------------------------------------------------------------- categories


@pytest.mark.parametrize(
    "raw, key",
    [
        ("subject ", "subject"),
        ("Camera Work", "camera"),
        ("camera_work", "camera"),
        ("Cinematography", "camera"),
        ("Playback Technique", "playback"),
        ("playback-techniques", "playback"),
        ("LOCATION", "position"),
        ("Visual Style", "style"),
        ("background", "background"),
        ("Motion", "motion"),
    ],
)
def test_category_variants_normalise(raw: str, key: str) -> None:
    assert normalise_category(raw) == key


def test_unknown_category_names_the_known_ones() -> None:
    with pytest.raises(
        DatasetError, match=r"unknown checklist category 'lighting'; expected one of .*playback technique"
    ):
        normalise_category("lighting")
    assert set(CATEGORY_NAMES) == set(CATEGORIES) and CATEGORY_NAMES["playback"] == "playback technique"


# --------------------------------------------------------------------------- validation


def _sims(item: dict[str, Any]) -> list[Any]:
    return item["structured_analysis"]["Similarities"]


def _diffs(item: dict[str, Any]) -> list[Any]:
    return item["structured_analysis"]["Differences"]


Mutation = Callable[[dict[str, Any]], Any]

BAD_ITEMS: list[tuple[str, Mutation, str]] = [
    (
        "missing path",
        lambda i: i.pop("video2_path"),
        "item 0 (index 7): missing field(s) video2_path; every item needs",
    ),
    (
        "path type",
        lambda i: i.update(video1_path=3),
        "item 0 (index 7): field 'video1_path': expected a non-empty video path, got 3",
    ),
    (
        "empty path",
        lambda i: i.update(video2_path=" "),
        "field 'video2_path': expected a non-empty video path, got ' '",
    ),
    ("bad id", lambda i: i.update(index=True), "field 'index': expected a non-empty string or an integer, got True"),
    (
        "analysis type",
        lambda i: i.update(structured_analysis=[]),
        "field 'structured_analysis': expected an object with Similarities",
    ),
    ("analysis json", lambda i: i.update(structured_analysis="{oops"), "field 'structured_analysis': not valid JSON"),
    (
        "missing section",
        lambda i: i["structured_analysis"].pop("Differences"),
        "field 'structured_analysis': missing Differences (has: Similarities); use [] for an empty list",
    ),
    (
        "section type",
        lambda i: i["structured_analysis"].update(Differences="x"),
        "field 'structured_analysis.Differences': expected a list of questions, got str",
    ),
    (
        "question type",
        lambda i: _diffs(i).append("why?"),
        "field 'structured_analysis.Differences[2]': expected an object",
    ),
    (
        "missing class",
        lambda i: _diffs(i)[0].pop("class"),
        "field 'structured_analysis.Differences[0]': missing class; every question needs class, question, correct_answer",
    ),
    (
        "unknown class",
        lambda i: _diffs(i)[1].update({"class": "lighting"}),
        "field 'structured_analysis.Differences[1].class': unknown checklist category 'lighting'",
    ),
    (
        "class type",
        lambda i: _sims(i)[0].update({"class": 3}),
        "field 'structured_analysis.Similarities[0].class': expected a category name, got 3",
    ),
    (
        "empty question",
        lambda i: _diffs(i)[0].update(question=""),
        "field 'structured_analysis.Differences[0].question': expected a non-empty string",
    ),
    (
        "answer value",
        lambda i: _sims(i)[0].update(correct_answer="maybe"),
        "field 'structured_analysis.Similarities[0].correct_answer': expected 'yes' or 'no', got 'maybe'",
    ),
    (
        "similarity answered yes",
        lambda i: _sims(i)[0].update(correct_answer="yes"),
        (
            "field 'structured_analysis.Similarities[0].correct_answer': similarity questions are phrased so the correct "
            "answer is 'no', got 'yes' for question 'Is the visual style different between Video A and Video B?'"
        ),
    ),
    (
        "difference answered no",
        lambda i: _diffs(i)[1].update(correct_answer="No"),
        (
            "field 'structured_analysis.Differences[1].correct_answer': difference questions are phrased so the correct "
            "answer is 'yes', got 'No' for question 'Does the camera pan in Video A but stay static in Video B?'"
        ),
    ),
]


@pytest.mark.parametrize(
    "mutate, message", [(m, msg) for _, m, msg in BAD_ITEMS], ids=[name for name, _, _ in BAD_ITEMS]
)
def test_malformed_items_name_item_and_field(tmp_path: Path, mutate: Mutation, message: str) -> None:
    item = _item()
    mutate(item)
    path = _write(tmp_path, [item, _item(index=8)])
    with pytest.raises(DatasetError) as info:
        _load(path)
    assert str(info.value).startswith(f"{path}: item 0")
    assert message in str(info.value)


def test_non_object_item_and_non_list_file(tmp_path: Path) -> None:
    with pytest.raises(
        DatasetError, match=r"item 1: expected an object with video1_path, video2_path, structured_analysis, got str"
    ):
        _load(_write(tmp_path, [_item(), "pair"]))
    with pytest.raises(DatasetError, match="must be a list"):
        _load(_write(tmp_path, {"items": []}, "other/checklist.json"))


def test_duplicate_ids_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"item 1: id '7' is used by an earlier item; ids must be unique"):
        _load(_write(tmp_path, [_item(), _item()]))


def test_lenient_where_the_meaning_is_clear(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Answer case/spacing, a JSON-encoded analysis, missing ids, extra fields and an empty checklist load."""
    shouting = _item(extra="ignored")
    _sims(shouting)[0]["correct_answer"] = " NO "
    _diffs(shouting)[0]["correct_answer"] = "Yes"
    encoded = _item(structured_analysis=json.dumps(_item()["structured_analysis"]))
    empty = _item(structured_analysis={"Similarities": [], "Differences": []})
    for item in (shouting, encoded, empty):
        item.pop("index")
    with caplog.at_level(logging.WARNING, logger="viddiff.benchmarks.vidic.data"):
        dataset = _load(_write(tmp_path, [shouting, encoded, empty]))
    assert [s.sample_key for s in dataset] == ["0000", "0001", "0002"]
    assert [q.correct_answer for q in dataset.checklists["0000"]] == ["no", "yes", "yes"]
    assert dataset.checklists["0001"] == dataset.checklists["0000"]
    assert dataset.checklists["0002"] == [] and "item 2: empty checklist" in caplog.text


def test_missing_dataset_and_ambiguous_directory(tmp_path: Path) -> None:
    with pytest.raises(
        DatasetError, match=r"ViDiC-1K dataset '.*nowhere' not found; use --dataset hf or pass --dataset PATH"
    ):
        _load(tmp_path / "nowhere")
    _write(tmp_path, [_item()], "a.json")
    _write(tmp_path, [_item()], "b.json")
    with pytest.raises(
        DatasetError,
        match=r"several candidate checklist files \(a.json, b.json\); name one with --set vidic.checklist_file",
    ):
        _load(tmp_path)
    with pytest.raises(DatasetError, match=r"no checklist file 'c.json' \(vidic.checklist_file\)"):
        _load(tmp_path, vidic=VidicConfig(checklist_file="c.json"))
    assert [s.sample_key for s in _load(tmp_path, vidic=VidicConfig(checklist_file="b.json"))] == ["7"]


def test_repo_layout_finds_checklist_and_resolves_against_the_root(tmp_path: Path) -> None:
    """A clone of the ViDiC repo: checklist/ next to data/ and other JSON files; paths are relative to the root."""
    _write(tmp_path, [_item()], "checklist/checklist.json")
    _write(tmp_path, [_item(index=9)], "checklist/checklist_final.json")
    _write(tmp_path, [], "response/example_response.json")
    assert find_checklist(tmp_path) == tmp_path / "checklist" / "checklist.json"
    dataset = _load(tmp_path)
    assert dataset.samples[0].videos[0].path == str(tmp_path / "data/LongoXC/add_person/7_src.mp4")
    final = _load(tmp_path, vidic=VidicConfig(checklist_file="checklist/checklist_final.json"))
    assert [s.sample_key for s in final] == ["9"]
    elsewhere = _load(tmp_path, video_root=str(tmp_path / "videos"))
    assert elsewhere.root == tmp_path / "videos"
    assert elsewhere.samples[0].videos[1].path == str(tmp_path / "videos/data/LongoXC/add_person/7_tgt.mp4")


# --------------------------------------------------------------------------- filters


def test_limit_and_subset_keep_the_first_pairs(fixture_dir: Path) -> None:
    limited = _load(fixture_dir, limit=2)
    assert [s.sample_key for s in limited] == ["0", "1"] and list(limited.checklists) == ["0", "1"]
    assert [s.sample_key for s in _load(fixture_dir, subset_per_action=3)] == ["0", "1", "2"]
    assert [s.sample_key for s in _load(fixture_dir, subset_per_action=3, limit=1)] == ["0"]


def test_splits_are_refused(fixture_dir: Path) -> None:
    with pytest.raises(DatasetError, match=r"ViDiC-1K has no splits \(got --split easy\); drop --split"):
        load_vidic(DataConfig(benchmark="vidic", dataset=str(fixture_dir)), VidicConfig(), splits=["easy"])


# --------------------------------------------------------------------------- overlap with VidDiffBench


def test_overlap_from_source_fields_and_relative_paths(tmp_path: Path) -> None:
    items = [
        _item(index=0),  # data/LongoXC/...
        _item(index=1, source="VidDiffBench"),
        _item(index=2, video1_path="data/VidDiffBench/fitness/a.mp4", video2_path="data/VidDiffBench/fitness/b.mp4"),
        _item(index=3, video1_path="x.mp4", video2_path="data/viddiff_bench/y.mp4"),
        _item(index=4, video1_path="/home/me/viddiff/a.mp4", video2_path="/home/me/viddiff/b.mp4"),
        _item(index=5, video1_path="a.mp4", video2_path="b.mp4"),
        _item(index=6, source_dataset="Ego-Exo4D", video1_path="data/VidDiffBench/a.mp4"),
        _item(
            index=7, video1_path="data/IF Vidcap benchmark/cut/1.mp4", video2_path="data/IF Vidcap benchmark/cut/2.mp4"
        ),
    ]
    dataset = _load(_write(tmp_path, items), allow_paths_outside_root=True)  # item 4's absolute paths
    sources = [s.source_dataset for s in dataset]
    assert sources == [
        "LongoXC",
        "viddiffbench",
        "viddiffbench",
        "viddiffbench",
        "vidic",
        "vidic",
        "Ego-Exo4D",
        "IF Vidcap benchmark",
    ]
    assert overlap_with_viddiffbench(dataset) == ["1", "2", "3"]


# --------------------------------------------------------------------------- Hugging Face


def test_hf_offline_without_a_cache_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DatasetError) as info:
        load_vidic(DataConfig(benchmark="vidic", dataset="hf", hf_cache_dir=str(tmp_path)), VidicConfig())
    message = str(info.value)
    assert (
        "could not get the ViDiC-1K checklist from Hugging Face dataset 'NJU-LINK/ViDiC-1K' (revision main)" in message
    )
    assert "HF_HUB_OFFLINE is set and the local cache has no copy" in message
    assert "pass --dataset PATH (a directory holding checklist.json, or the checklist JSON file itself)" in message


class FakeHub:
    """Stands in for ``huggingface_hub.snapshot_download``: a fixed snapshot directory, files appear on request."""

    def __init__(self, snapshot: Path, fail_videos: bool = False):
        self.snapshot = snapshot
        self.fail_videos = fail_videos
        self.calls: list[dict[str, Any]] = []

    def __call__(self, **kwargs: Any) -> str:
        self.calls.append(kwargs)
        if len(self.calls) > 1:
            if self.fail_videos:
                raise OSError("connection reset")
            for pattern in kwargs["allow_patterns"]:
                path = self.snapshot / pattern.replace("[[]", "[")
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(b"video")
        return str(self.snapshot)


@pytest.fixture()
def fake_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeHub:
    import huggingface_hub

    snapshot = tmp_path / "snapshots" / "0123abcd"
    items = [_item(index=0), _item(index=1, video1_path="data/x/[1].mp4", video2_path="data/x/2.mp4")]
    _write(snapshot, items, "checklist/checklist.json")
    present = snapshot / "data/LongoXC/add_person/7_tgt.mp4"
    present.parent.mkdir(parents=True)
    present.write_bytes(b"video")
    hub = FakeHub(snapshot)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", hub)
    return hub


def _hf(**data: Any) -> DataConfig:
    return DataConfig(benchmark="vidic", dataset="hf", hf_cache_dir="/cache", **data)


def test_hf_downloads_the_checklist_then_only_missing_videos_of_selected_pairs(fake_hub: FakeHub) -> None:
    dataset = load_vidic(_hf(limit=1), VidicConfig(hf_revision="v1"))
    assert dataset.source == "hf:NJU-LINK/ViDiC-1K@0123abcd" and dataset.revision == "0123abcd"
    assert dataset.root == fake_hub.snapshot and [s.sample_key for s in dataset] == ["0"]
    checklist_call, video_call = fake_hub.calls
    assert checklist_call["repo_id"] == "NJU-LINK/ViDiC-1K" and checklist_call["repo_type"] == "dataset"
    assert checklist_call["revision"] == "v1" and checklist_call["cache_dir"] == "/cache"
    assert checklist_call["allow_patterns"] == ["*.json", "*.jsonl"]
    assert video_call["revision"] == "0123abcd"  # the videos come from the checklist's commit
    assert video_call["allow_patterns"] == ["data/LongoXC/add_person/7_src.mp4"]  # _tgt is already there
    assert all(Path(v.path).is_file() for v in dataset.samples[0].videos)


def test_hf_escapes_patterns_and_can_skip_videos(fake_hub: FakeHub) -> None:
    dataset = load_vidic(_hf(), VidicConfig(checklist_file="checklist/checklist.json"))
    assert fake_hub.calls[0]["allow_patterns"] == ["checklist/checklist.json"]
    assert fake_hub.calls[1]["allow_patterns"] == [
        "data/LongoXC/add_person/7_src.mp4",
        "data/x/2.mp4",
        "data/x/[[]1].mp4",
    ]
    assert Path(dataset.samples[1].videos[0].path).is_file()
    Path(dataset.samples[1].videos[1].path).unlink()
    fake_hub.calls.clear()
    load_vidic(_hf(), VidicConfig(), fetch_videos=False)
    load_vidic(_hf(video_root="/videos"), VidicConfig())
    assert len(fake_hub.calls) == 2  # one checklist call each, no video download
    load_vidic(_hf(), VidicConfig())
    assert fake_hub.calls[-1]["allow_patterns"] == ["data/x/2.mp4"]


def test_hf_video_download_failure_is_a_warning(fake_hub: FakeHub, caplog: pytest.LogCaptureFixture) -> None:
    fake_hub.fail_videos = True
    with caplog.at_level(logging.WARNING, logger="viddiff.benchmarks.vidic.data"):
        dataset = load_vidic(_hf(), VidicConfig())
    assert len(dataset) == 2
    assert "could not download 3 ViDiC-1K videos from NJU-LINK/ViDiC-1K: OSError: connection reset" in caplog.text
    assert "viddiff data check --benchmark vidic" in caplog.text


# --------------------------------------------------------------------------- data check and the CLI


def test_check_reports_a_deleted_video_with_advice(fixture_dir: Path, tmp_path: Path) -> None:
    copy_dir = shutil.copytree(fixture_dir, tmp_path / "copy")
    deleted = copy_dir / "videos" / "pair_0002_b.mp4"
    deleted.unlink()
    problems = _check(_load(copy_dir))
    assert [(p.sample_key, p.video, p.problem, p.path) for p in problems] == [("2", "B", "missing", str(deleted))]
    assert f"viddiff data synth --benchmark vidic --out {copy_dir}" in problems[0].advice


def test_advice_for_real_vidic_videos_names_repo_licence_and_commands(tmp_path: Path) -> None:
    path = _write(tmp_path, [_item()])
    dataset = _load(path)
    advice = VIDIC.video_advice(dataset.samples[0], dataset, Config())
    for part in (
        "NJU-LINK/ViDiC-1K",
        "CC-BY-NC-SA-4.0",
        "--dataset hf",
        "hf download NJU-LINK/ViDiC-1K --repo-type dataset --local-dir DIR",
        "--set data.video_root=DIR",
    ):
        assert part in advice
    problems = _check(_load(path))
    assert {p.video for p in problems} == {"A", "B"} and all("NJU-LINK/ViDiC-1K" in p.advice for p in problems)


def test_cli_synth_then_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench"
    assert main(["data", "synth", "--benchmark", "vidic", "--out", str(out), "--pairs", "2", "--seed", "1"]) == 0
    text = capsys.readouterr().out
    assert str(out / "checklist.json") in text and "2 pairs (4 videos)" in text and "--benchmark vidic" in text
    assert main(["data", "check", "--benchmark", "vidic", "--dataset", str(out)]) == 0
    text = capsys.readouterr().out
    assert "all 4 videos readable" in text and "0 of 2 pairs overlap VidDiffBench" in text
    (out / "videos" / "pair_0000_a.mp4").unlink()
    assert main(["data", "check", "--benchmark", "vidic", "--dataset", str(out)]) == 1
    text = capsys.readouterr().out
    line = next(line for line in text.splitlines() if line.startswith("0 video A"))
    assert "missing" in line and "viddiff data synth --benchmark vidic" in line
    assert "1 of 4 videos cannot be used" in text
    assert main(["data", "check", "--benchmark", "vidic", "--dataset", str(out), "--split", "easy"]) == 2
    assert "ViDiC-1K has no splits" in capsys.readouterr().err


def test_cli_check_lists_overlap(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, [_item(index=0), _item(index=1, source="VidDiffBench")])
    assert main(["data", "check", "--benchmark", "vidic", "--dataset", str(path)]) == 1  # no videos here
    assert "1 of 2 pairs overlap VidDiffBench: 1" in capsys.readouterr().out


def test_cli_synth_refuses_foreign_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["data", "synth", "--benchmark", "vidic", "--out", str(tmp_path)]) == 2
    assert "not a synthetic ViDiC benchmark" in capsys.readouterr().err
