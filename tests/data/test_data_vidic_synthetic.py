"""Synthetic ViDiC-1K fixture: determinism, and a checklist that agrees with what was rendered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from viddiff.data.synth_actions import SQUAT
from viddiff.data.synthetic import render_performance
from viddiff.benchmarks.vidic.synthetic import (
    BACKGROUNDS,
    DEPTHS,
    FACTORS,
    PIXEL_SIZES,
    X_SHIFTS,
    apply_look,
    render_video,
    write_synthetic_vidic,
)
from viddiff.errors import DatasetError
from viddiff.video import read_video

PAIRS = 4
SEED = 11
FACTOR_BY_CATEGORY = {f.category: f for f in FACTORS}


@pytest.fixture(scope="module")
def checklist_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_synthetic_vidic(tmp_path_factory.mktemp("vidic_synth"), pairs=PAIRS, seed=SEED)


@pytest.fixture(scope="module")
def items(checklist_file: Path) -> list[dict[str, Any]]:
    return json.loads(checklist_file.read_text())


def test_same_seed_same_bytes_and_fewer_pairs_give_a_prefix(
    tmp_path: Path, checklist_file: Path, items: list[dict[str, Any]]
) -> None:
    again = write_synthetic_vidic(tmp_path / "again", pairs=PAIRS, seed=SEED)
    assert again.read_bytes() == checklist_file.read_bytes()
    first = read_video(checklist_file.parent / items[0]["video1_path"]).frames
    assert np.array_equal(read_video(again.parent / items[0]["video1_path"]).frames, first)
    prefix = json.loads(write_synthetic_vidic(tmp_path / "prefix", pairs=2, seed=SEED).read_text())
    assert prefix == items[:2]
    other = json.loads(write_synthetic_vidic(tmp_path / "other", pairs=2, seed=SEED + 1).read_text())
    assert [i["synthetic"] for i in other] != [i["synthetic"] for i in items[:2]]


def test_items_use_the_vidic_format(items: list[dict[str, Any]], checklist_file: Path) -> None:
    assert [item["index"] for item in items] == list(range(PAIRS))
    for item in items:
        assert set(item["structured_analysis"]) == {"Similarities", "Differences"}
        for key in ("video1_path", "video2_path"):
            assert not Path(item[key]).is_absolute() and (checklist_file.parent / item[key]).is_file()
        for q in item["structured_analysis"]["Similarities"] + item["structured_analysis"]["Differences"]:
            assert {"class", "question", "correct_answer"} <= set(q)


def test_checklist_agrees_with_the_stored_looks(items: list[dict[str, Any]]) -> None:
    for item in items:
        a, b = item["synthetic"]["a"], item["synthetic"]["b"]
        analysis = item["structured_analysis"]
        seen = set()
        for section, answer in (("Similarities", "no"), ("Differences", "yes")):
            for q in analysis[section]:
                factor = FACTOR_BY_CATEGORY[q["class"]]
                seen.add(factor.name)
                assert q["correct_answer"] == answer
                same = a[factor.name] == b[factor.name]
                assert same == (section == "Similarities"), (item["index"], factor.name)
                if not same:  # the question names A's value before B's
                    question = q["question"]
                    assert a[factor.name] in question and b[factor.name] in question
                    assert question.index(a[factor.name]) < question.rindex(b[factor.name])
        assert seen == {f.name for f in FACTORS}  # one question per factor
        differing = [f for f in FACTORS if a[f.name] != b[f.name]]
        assert {f.scope for f in differing} == {"global", "local"}
        assert a["subject"] == b["subject"]


def test_all_seven_categories_appear(items: list[dict[str, Any]]) -> None:
    classes = {q["class"] for item in items for section in item["structured_analysis"].values() for q in section}
    assert classes == {"subject", "style", "background", "camera", "motion", "position", "playback technique"}


def test_performance_parameters_follow_the_looks(items: list[dict[str, Any]]) -> None:
    for item in items:
        looks, params = item["synthetic"], item["synthetic"]["params"]
        for letter in "ab":
            low, high = DEPTHS[looks[letter]["motion"]]
            assert low <= params[letter]["depth"] <= high
            assert params[letter]["x_shift"] == X_SHIFTS[looks[letter]["position"]]
        shared = {k for k in params["a"] if k not in ("depth", "x_shift")}
        assert all(params["a"][k] == params["b"][k] for k in shared)
        if looks["a"]["motion"] == looks["b"]["motion"]:
            assert params["a"]["depth"] == params["b"]["depth"]


def test_videos_show_what_the_item_says(items: list[dict[str, Any]], checklist_file: Path) -> None:
    for item in items[:2]:
        for letter, key in (("a", "video1_path"), ("b", "video2_path")):
            look, params = item["synthetic"][letter], item["synthetic"]["params"][letter]
            decoded = read_video(checklist_file.parent / item[key]).frames.astype(np.int16)
            expected = np.stack(render_video(params, look)).astype(np.int16)
            assert decoded.shape == expected.shape
            assert np.abs(decoded - expected).mean() < 3.0  # lossy encoding only
            corner = decoded[0, :3, :3].reshape(-1, 3).mean(axis=0)
            assert np.abs(corner - BACKGROUNDS[look["background"]]).max() < 10


def _look(**changes: str) -> dict[str, str]:
    base = {f.name: f.values[0] for f in FACTORS}
    return {**base, **changes}


def _figure_column(frame: np.ndarray, background: tuple[int, int, int]) -> float:
    body = (np.abs(frame.astype(int) - background).sum(axis=2) > 60)[:100]  # above the floor line
    return float(np.nonzero(body)[1].mean())


def test_position_and_style_are_visible() -> None:
    bg = BACKGROUNDS["beige"]
    params = {p.name: (p.low + p.high) / 2 for p in SQUAT.params}
    columns = []
    for position, shift in X_SHIFTS.items():
        frame = next(render_performance(SQUAT, {**params, "x_shift": shift}))
        columns.append(_figure_column(apply_look(frame, _look(position=position)), bg))
    assert columns == sorted(columns) and columns[-1] - columns[0] > 40
    frame = next(render_performance(SQUAT, params))
    pixel = PIXEL_SIZES["pixelated"]
    blocky = apply_look(frame, _look(style="pixelated"))
    assert (blocky[::pixel, ::pixel].repeat(pixel, 0).repeat(pixel, 1) == blocky).all()
    assert not (frame[::pixel, ::pixel].repeat(pixel, 0).repeat(pixel, 1) == frame).all()


def test_refuses_foreign_directory_and_bad_pair_count(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(DatasetError, match="not a synthetic ViDiC benchmark"):
        write_synthetic_vidic(tmp_path, pairs=1)
    assert (tmp_path / "notes.txt").read_text() == "mine"
    with pytest.raises(DatasetError, match="at least 1"):
        write_synthetic_vidic(tmp_path / "new", pairs=0)


def test_rewrites_an_earlier_fixture_and_drops_stale_videos(tmp_path: Path) -> None:
    out = tmp_path / "fixture"
    write_synthetic_vidic(out, pairs=2, seed=0)
    (out / "videos" / "stale.mp4").write_bytes(b"")
    write_synthetic_vidic(out, pairs=1, seed=0)
    assert not (out / "videos" / "stale.mp4").exists()
    assert len(json.loads((out / "checklist.json").read_text())) == 1
