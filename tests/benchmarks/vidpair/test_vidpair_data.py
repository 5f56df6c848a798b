"""Loading the published layout: fields the release leaves unnamed are detected (or named in config), every
missing piece is a clear error, pairs link the rows, and a Hub copy loads through the local Hub server."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from viddiff.benchmarks.vidpair.data import load_vidpair
from viddiff.benchmarks.vidpair.prompts import GRID_NOTE, PAIR_FRAMES_NOTE, QUESTION_MARK
from viddiff.errors import DatasetError


def test_the_synthetic_copy_loads_with_its_fields_detected(vidpair_dir: Path, config_for) -> None:
    data = load_vidpair(config_for(vidpair_dir))
    assert len(data) == 4 * 2 * 4 and len(data.pairs) == 4  # per video: 2 binary, 1 multiple choice, 1 open
    assert data.fields_used["qa/hf/binary.jsonl"]["answer"] == "field 'answer'"
    assert data.fields_used["qa/hf/binary.jsonl"]["aspect"] == "the video folder's story id"
    questions = list(data.questions.values())
    assert {q.aspect for q in questions} == {"color", "number", "location", "sequence"}
    assert {q.dimension for q in questions if q.aspect == "sequence"} == {"temporal"}
    assert all(q.dimension_assumed for q in questions)
    assert any("ASSUMED" in a for a in data.assumptions)
    q = data.questions["b-color_0001-adv-1"]
    assert (q.pair_id, q.role, q.entry) == ("P0001", "adversarial", "P0001/color")
    assert q.group == data.questions["b-color_0001-pos-1"].group  # the same question on both videos
    sample = data[list(data.questions).index("b-color_0001-adv-1")]
    assert sample.split == "binary" and len(sample.videos) == 1 and sample.source_dataset == "synthetic"
    assert sample.videos[0].path.endswith("VidPair-Halluc/color_0001/R_color_0001_002.mp4")
    assert sample.task.prompt.endswith(QUESTION_MARK + q.question) and sample.task.system_prompt is None


def test_options_are_listed_after_the_question_and_choices_parsed(vidpair_dir: Path, config_for) -> None:
    data = load_vidpair(config_for(vidpair_dir))
    q = data.questions["m-color_0001-pos-1"]
    assert q.choices == [("A", "red"), ("B", "green"), ("C", "blue"), ("D", "yellow")]
    sample = next(s for s in data if s.sample_key == q.key)
    assert sample.task.prompt.endswith("What colour is the disc?\nA. red\nB. green\nC. blue\nD. yellow")


def test_pair_aware_samples_hold_the_partner_and_grid_prompts_say_grid(vidpair_dir: Path, config_for) -> None:
    data = load_vidpair(config_for(vidpair_dir, "vidpair.pair_aware=true", "baseline.task_frames.layout=grid"))
    sample = next(s for s in data if s.sample_key == "b-number_0002-pos-1")
    assert sample.task.pair_aware and sample.task.video == 0
    assert [Path(v.path).name for v in sample.videos] == ["M_number_0002_001.mp4", "R_number_0002_002.mp4"]
    assert "in a grid" in sample.task.prompt and "Answer about Video 1 only" in sample.task.prompt
    single = load_vidpair(config_for(vidpair_dir, "baseline.task_frames.layout=grid"))
    assert GRID_NOTE in single[0].task.prompt and PAIR_FRAMES_NOTE not in single[0].task.prompt


def test_limit_keeps_whole_pairs_and_question_types_select_files(vidpair_dir: Path, config_for) -> None:
    data = load_vidpair(config_for(vidpair_dir, "data.limit=2", "vidpair.question_types=[binary]"))
    assert {q.pair_id for q in data.questions.values()} == {"P0001", "P0002"} and len(data) == 8
    per_aspect = load_vidpair(config_for(vidpair_dir, "data.subset_per_action=1"))
    assert len({q.pair_id for q in per_aspect.questions.values()}) == 4


def test_a_missing_answer_field_is_named_with_what_was_looked_for(vidpair_copy, config_for) -> None:
    def rename(rows):
        for items in rows.values():
            for row in items:
                row["gold"] = row.pop("answer")

    path = vidpair_copy(rename)
    with pytest.raises(DatasetError, match=r"qa/hf/binary.jsonl: no answer field: looked for answer, gt_answer.*gold"):
        load_vidpair(config_for(path))
    data = load_vidpair(config_for(path, "vidpair.fields.answer=gold"))
    assert data.questions["b-color_0001-pos-1"].answer in ("yes", "no")
    assert data.fields_used["qa/hf/binary.jsonl"]["answer"] == "field 'gold'"


def test_a_field_in_some_rows_only_is_an_error_not_a_guess(vidpair_copy, config_for) -> None:
    def partial(rows):
        rows["binary"][3]["aspect"] = "color"

    with pytest.raises(DatasetError, match=r"field 'aspect' .* is in 1 of 16 rows but not at line 1"):
        load_vidpair(config_for(vidpair_copy(partial)))


def test_fields_present_in_the_rows_are_used(vidpair_copy, config_for) -> None:
    def enrich(rows):
        for kind, items in rows.items():
            for row in items:
                row["aspect"] = "Temporal Sequence" if "sequence" in row["repo_video_path"] else "Object"
                row["spatial_temporal"] = "temporal" if "sequence" in row["repo_video_path"] else "spatial"

    data = load_vidpair(config_for(vidpair_copy(enrich)))
    assert {q.aspect for q in data.questions.values()} == {"object", "sequence"}
    assert not any(q.dimension_assumed for q in data.questions.values())
    assert not any("ASSUMED" in a for a in data.assumptions)


def test_all_qa_serves_types_whose_file_is_missing(vidpair_copy, config_for) -> None:
    path = vidpair_copy(drop=("qa/hf/multiple_choice.jsonl",))
    data = load_vidpair(config_for(path))
    assert sum(q.question_type == "multiple_choice" for q in data.questions.values()) == 8
    (path / "qa/hf/all_qa.jsonl").unlink()
    with pytest.raises(DatasetError, match="no qa/hf/multiple_choice.jsonl and no qa/hf/all_qa.jsonl"):
        load_vidpair(config_for(path))


def test_pairs_file_is_required_and_validated(vidpair_copy, config_for) -> None:
    path = vidpair_copy(drop=("pairs/pairs.json",))
    with pytest.raises(DatasetError, match="no pairs/pairs.json; VidPair-Halluc's pair metrics need it"):
        load_vidpair(config_for(path))
    (path / "pairs/pairs.json").write_text(json.dumps([{"pair_id": "X", "positive_video": "a.mp4"}]))
    with pytest.raises(DatasetError, match=r"pairs/pairs.json\[0\]: missing adversarial_video"):
        load_vidpair(config_for(path))


def test_rows_that_cannot_be_read_name_the_row(vidpair_copy, config_for) -> None:
    def bad_answer(rows):
        rows["binary"][1]["answer"] = "perhaps"

    with pytest.raises(DatasetError, match=r"qa/hf/binary.jsonl:2: field 'answer': a binary answer must read as yes or no"):
        load_vidpair(config_for(vidpair_copy(bad_answer, name="a")))

    def no_video(rows):
        rows["open_ended"][0].pop("repo_video_path")

    with pytest.raises(DatasetError, match=r"qa/hf/open_ended.jsonl:1: no video path \(fields repo_video_path or video_path"):
        load_vidpair(config_for(vidpair_copy(no_video, name="b")))

    def wrong_pair(rows):
        rows["binary"][0]["pair_id"] = "P0002"
        for row in rows["binary"][1:]:
            row["pair_id"] = "P0001" if "color" in row["repo_video_path"] else row["repo_video_path"].split("/")[1]

    with pytest.raises(DatasetError, match="says pair 'P0002', but VidPair-Halluc/color_0001/M_color_0001_001.mp4 belongs to pair 'P0001'"):
        load_vidpair(config_for(vidpair_copy(wrong_pair, name="c")))


def test_video_path_falls_back_to_video_path_relative_to_the_video_folder(vidpair_copy, config_for) -> None:
    def relative(rows):
        for items in rows.values():
            for row in items:
                row["video_path"] = row.pop("repo_video_path").removeprefix("VidPair-Halluc/")

    data = load_vidpair(config_for(vidpair_copy(relative)))
    assert data.questions["b-color_0001-pos-1"].video == "VidPair-Halluc/color_0001/M_color_0001_001.mp4"
    assert data.questions["b-color_0001-pos-1"].role == "positive"


def test_the_hub_layout_loads_through_the_local_hub_and_fetches_only_selected_videos(vidpair_dir: Path, tmp_path: Path, monkeypatch, config_for) -> None:
    from viddiff.testing.fake_hf import FakeHubServer

    with FakeHubServer({"Jethro37/VidPair-Halluc": {"main": vidpair_dir}}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        cfg = config_for(Path("hf"), "data.dataset=hf", f"data.hf_cache_dir={tmp_path / 'hf'}", "data.limit=1")
        data = load_vidpair(cfg)
        fetched = sorted(p.name for p in (tmp_path / "hf").rglob("*.mp4"))
    assert data.source.startswith("hf:Jethro37/VidPair-Halluc@") and len(data) == 8
    assert fetched == ["M_color_0001_001.mp4", "R_color_0001_002.mp4"]
    assert all(os.path.exists(ref.path) for s in data for ref in s.videos)
