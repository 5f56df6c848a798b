"""Synthetic benchmark: determinism, label/parameter consistency, layout coverage, readability."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from viddiff.cli import main
from viddiff.config import Config, DataConfig
from viddiff.data.synth_actions import ACTIONS, HEIGHT, WIDTH
from viddiff.data.synth_figure import BACKGROUND, render
from viddiff.data.synthetic import render_performance, stage_frame_counts, write_synthetic_benchmark
from viddiff.data.dataset import Dataset
from viddiff.data.viddiffbench import load_dataset
from viddiff.errors import DatasetError
from viddiff.video import read_video, read_video_ref

SPECS = {spec.action: spec for spec in ACTIONS}


@pytest.fixture(scope="module")
def dataset(synth_file: Path) -> Dataset:
    return load_dataset(DataConfig(dataset=str(synth_file.parent)))


def decoded_videos(row: dict[str, Any]) -> list[dict[str, Any]]:
    return json.loads(row["videos"])


# --------------------------------------------------------------------------- action definitions


@pytest.mark.parametrize("spec", ACTIONS, ids=lambda s: s.action)
def test_action_specs_are_rich_and_consistent(spec: Any) -> None:
    assert len(spec.stages) >= 3
    assert len(spec.differences) >= 4
    assert {d.num_frames for d in spec.differences} == {"1", "gt_1"}
    names = {p.name for p in spec.params}
    for d in spec.differences:
        assert d.param in names and 0 <= d.stage < len(spec.stages) and d.sign in (1, -1)
    for p in spec.params:
        assert p.low < p.high
        if not p.nuisance:
            assert p.high - p.low >= 4 * p.threshold > 0  # room to move a parameter clearly past its threshold


@pytest.mark.parametrize("spec", ACTIONS, ids=lambda s: s.action)
def test_stages_are_visually_distinct(spec: Any) -> None:
    """At least 3 stages look different from each other at their middle frame (a stage indicator is meaningful)."""
    rng = np.random.default_rng(0)
    for _ in range(3):
        params = {p.name: float(rng.uniform(p.low, p.high)) for p in spec.params}
        middles = [render(spec.pose(params, s, 0.5), WIDTH, HEIGHT, spec.floor_y).astype(float) for s in range(len(spec.stages))]
        distinct = [i for i in range(len(middles)) if all(np.abs(middles[i] - middles[j]).mean() > 0.5 for j in range(i))]
        assert len(distinct) >= 3


def test_render_performance_matches_stage_counts() -> None:
    spec = ACTIONS[0]
    params = {p.name: p.low for p in spec.params}
    frames = list(render_performance(spec, params))
    assert len(frames) == sum(stage_frame_counts(spec, params))
    assert frames[0].shape == (HEIGHT, WIDTH, 3) and frames[0].dtype == np.uint8


# --------------------------------------------------------------------------- determinism


def test_same_seed_same_bytes_and_frames(tmp_path: Path, synth_file: Path) -> None:
    first = write_synthetic_benchmark(tmp_path / "one", pairs=2, seed=11)
    second = write_synthetic_benchmark(tmp_path / "two", pairs=2, seed=11)
    assert first.read_bytes() == second.read_bytes()
    for rel in ("videos/pair_0000_a.mp4", "videos/pair_0001_b.mp4"):
        a = read_video(first.parent / rel, backend="pyav").frames
        b = read_video(second.parent / rel, backend="pyav").frames
        assert np.array_equal(a, b)
    assert (first.parent / "videos/pair_0000_b/00003.png").read_bytes() == (second.parent / "videos/pair_0000_b/00003.png").read_bytes()
    other = write_synthetic_benchmark(tmp_path / "three", pairs=2, seed=12)
    assert other.read_bytes() != first.read_bytes()


def test_fewer_pairs_give_a_prefix(tmp_path: Path, synth_file: Path, synth_seed: int) -> None:
    short = write_synthetic_benchmark(tmp_path / "short", pairs=1, seed=synth_seed)
    assert synth_file.read_text().splitlines()[0] == short.read_text().splitlines()[0]


# --------------------------------------------------------------------------- ground truth


def test_labels_agree_with_parameters(synth_rows: list[dict[str, Any]]) -> None:
    for row in synth_rows:
        spec = SPECS[row["action"]]
        a, b = row["synthetic"]["params"]["a"], row["synthetic"]["params"]["b"]
        labels = json.loads(row["differences_gt"])
        annotated = json.loads(row["differences_annotated"])
        assert set(labels) == set(annotated) == {str(k) for k in range(len(spec.differences))}
        assert sum(v is None for v in labels.values()) <= 1
        for key, label in labels.items():
            d = spec.differences[int(key)]
            assert annotated[key]["description"] == d.description
            if label is None:
                continue
            threshold = next(p.threshold for p in spec.params if p.name == d.param)
            gap = a[d.param] - b[d.param]
            if abs(gap) < threshold:
                assert label == "c"
            else:
                more_true_of_a = gap > 0 if d.sign > 0 else gap < 0
                assert label == ("a" if more_true_of_a else "b")


def test_pairs_differ_clearly_in_some_parameters(synth_rows: list[dict[str, Any]]) -> None:
    for row in synth_rows:
        spec = SPECS[row["action"]]
        a, b = row["synthetic"]["params"]["a"], row["synthetic"]["params"]["b"]
        gaps = [abs(a[p.name] - b[p.name]) for p in spec.params if not p.nuisance]
        assert any(g > 0 for g in gaps)
        for gap, p in zip(gaps, [p for p in spec.params if not p.nuisance]):
            assert gap == 0 or gap >= p.threshold


def test_n_differences_open_prediction_formula(synth_rows: list[dict[str, Any]]) -> None:
    for row in synth_rows:
        labelled = sum(v is not None for v in json.loads(row["differences_gt"]).values())
        assert row["n_differences_open_prediction"] == math.ceil(1.5 * labelled)


def test_columns_are_json_strings_like_on_hf(synth_rows: list[dict[str, Any]]) -> None:
    for row in synth_rows:
        for column in ("videos", "differences_annotated", "differences_gt", "retrieval_frames"):
            assert isinstance(row[column], str)
        assert row["source_dataset"] == "synthetic"


# --------------------------------------------------------------------------- coverage of the loader's cases


def test_covers_actions_splits_domains_and_fps(dataset: Dataset) -> None:
    assert len({s.action for s in dataset}) >= 2
    assert len({s.split for s in dataset}) >= 2
    assert len({s.domain for s in dataset}) >= 2
    assert {s.domain for s in dataset} <= set(DataConfig().fps_by_domain)
    assert {v.fps_original for s in dataset for v in s.videos} == {8.0, 20.0}


def test_every_inference_rate_is_a_whole_stride_of_the_synthetic_clips(dataset: Dataset) -> None:
    """Issue 42: the demo data warned 'target fps 8 is not an integer divisor of 12 fps' on every run. Each clip's
    rate is a whole multiple of the rates it is read at: the method's and the baselines' for its domain, and
    compare's default."""
    cfg = Config()
    for sample in dataset:
        rates = (cfg.data.fps_for(sample.domain), cfg.baseline.fps_by_domain[sample.domain], cfg.data.default_fps)
        for video in sample.videos:
            assert all(video.fps_original % rate == 0 for rate in rates), (sample.sample_key, video.fps_original, rates)
    assert {s.action for s in dataset} == {"synth_0", "synth_1"}


def test_has_an_image_directory_and_a_trimmed_video(dataset: Dataset) -> None:
    refs = [v for s in dataset for v in s.videos]
    image_dirs = [v for v in refs if Path(v.path).is_dir()]
    assert image_dirs and all(sorted(p.name for p in Path(v.path).iterdir())[0] == "00000.png" for v in image_dirs)
    trimmed = [v for v in refs if v.frames_trim is not None]
    assert trimmed and all(v.frames_trim[0] > 0 for v in trimmed)


def test_every_video_reads_through_the_loader(dataset: Dataset) -> None:
    for sample in dataset:
        assert sample.retrieval_frames is not None and sample.retrieval_frames.stages is not None
        for ref, stages in zip(sample.videos, sample.retrieval_frames.stages):
            video = read_video_ref(ref, target_fps=None)
            assert video.frames.shape[1:] == (HEIGHT, WIDTH, 3)
            assert video.fps_original == ref.fps_original
            assert (video.start, video.end) == (stages.starts[0], stages.end)
            assert len(video.frames) == stages.end - stages.starts[0]


def test_stage_starts_increase_inside_the_trim(dataset: Dataset) -> None:
    for sample in dataset:
        frames = sample.retrieval_frames
        assert frames is not None and frames.stages is not None
        n_stages = len(SPECS[sample.action].stages)
        for ref, stages in zip(sample.videos, frames.stages):
            start, end = ref.frames_trim or (0, stages.end)
            assert len(stages.starts) == n_stages
            assert all(b - a >= 2 for a, b in zip(stages.starts, stages.starts[1:] + [stages.end]))
            assert stages.starts[0] == start and stages.end == end
        for key, (in_a, in_b) in frames.keyframes.items():
            d = SPECS[sample.action].differences[int(key)]
            assert len(in_a) == len(in_b) == (3 if d.num_frames == "gt_1" else 1)
            for kf, stages in zip((in_a, in_b), frames.stages):
                bounds = stages.starts + [stages.end]
                assert all(bounds[d.stage] <= f < bounds[d.stage + 1] for f in kf)


def test_trim_cuts_off_empty_padding(dataset: Dataset) -> None:
    ref = next(v for s in dataset for v in s.videos if v.frames_trim is not None)
    whole = read_video(ref.path, backend="pyav").frames.astype(int)
    start, end = ref.frames_trim
    background = np.array(BACKGROUND)
    figure_pixels = [(np.abs(f - background).sum(axis=-1) > 120).sum() for f in whole]
    assert start > 0 and end < len(whole)
    assert max(figure_pixels[:start] + figure_pixels[end:]) < 300  # floor line only
    assert min(figure_pixels[start:end]) > 600  # the figure is in every trimmed frame


# --------------------------------------------------------------------------- CLI


def test_cli_synth_writes_and_summarises(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench"
    assert main(["data", "synth", "--out", str(out), "--pairs", "2", "--seed", "1"]) == 0
    text = capsys.readouterr().out
    assert str(out / "dataset.jsonl") in text and "2 pairs" in text and "barbell back squat" in text
    # an earlier synthetic benchmark may be replaced; stale videos go
    (out / "videos" / "stale.mp4").write_bytes(b"")
    assert main(["data", "synth", "--out", str(out), "--pairs", "1"]) == 0
    assert not (out / "videos" / "stale.mp4").exists()
    assert len((out / "dataset.jsonl").read_text().splitlines()) == 1


def test_cli_synth_refuses_foreign_directory_and_bad_pairs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["data", "synth", "--out", str(tmp_path)]) == 2
    assert "not a synthetic benchmark" in capsys.readouterr().err
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert main(["data", "synth", "--out", str(tmp_path / "new"), "--pairs", "0"]) == 2
    with pytest.raises(DatasetError, match="at least 1"):
        write_synthetic_benchmark(tmp_path / "x", pairs=0)
