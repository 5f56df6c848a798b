"""Differencer through the real openai client against the fake VLM server: request layout, answers, votes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

from viddiff.cache import Cache
from viddiff.config import DifferencerConfig, EndpointsConfig, ImageConfig
from viddiff.errors import ViddiffError
from viddiff.schema import Difference
from viddiff.testing.fake_openai import ChatRequest

MAX_ATTEMPTS = EndpointsConfig().max_reasks + 1
A_COLOURS = [(220, 30, 30), (30, 200, 30), (30, 30, 220)]
B_COLOURS = [(230, 230, 40), (40, 220, 220), (210, 40, 210), (128, 128, 128)]


def solid(rgb: tuple[int, int, int], size: int = 24) -> np.ndarray:
    """A frame of one colour, so its position among the decoded images can be told by its colour."""
    return np.full((size, size, 3), rgb, dtype=np.uint8)


def _answer(letter: str, why: str = "") -> str:
    return json.dumps({"answer_detailed": why or f"the frames show {letter}", "answer": letter})


def _sequence(*answers: str):
    """Responder giving ``answers`` in order, then repeating the last."""
    queue: Iterator[str] = iter(answers)
    last = [answers[-1]]

    def respond(req: ChatRequest) -> str:
        last[0] = next(queue, last[0])
        return last[0]

    return respond


def _by_seed(letters: dict[int, str]):
    return lambda req: _answer(letters[req.body["seed"]], f"vote of seed {req.body['seed']}")


def _mean_colour(req: ChatRequest, i: int) -> np.ndarray:
    return np.asarray(req.images[i].image.convert("RGB"), dtype=np.float64).reshape(-1, 3).mean(axis=0)


def test_request_carries_frames_of_a_then_b_in_order(vlm) -> None:
    vlm.answer(lambda req: _answer("a"))
    frames_a = [solid(c) for c in A_COLOURS]
    frames_b = [solid(c) for c in B_COLOURS[:3]]
    prediction = vlm.judge(frames_a, frames_b, seconds_between_frames=0.35)

    (req,) = vlm.requests
    assert len(req.images) == 6
    for i, colour in enumerate(A_COLOURS + B_COLOURS[:3]):
        assert np.abs(_mean_colour(req, i) - colour).max() < 8, f"image {i}"
    assert all(p.detail == "high" and p.mime == "image/jpeg" for p in req.images)
    text = req.text
    assert "The first 3 images are frames from video A and the next 3 images are frames from video B" in text
    assert "consecutive frames are 0.35 seconds apart" in text
    assert 'Statement: "the squat is deeper"' in text and '"barbell squat"' in text  # the scored text
    # The question comes before the images, so the model reads which images are which first.
    user_parts = req.messages[-1]["content"]
    assert user_parts[0]["type"] == "text" and [p["type"] for p in user_parts[1:7]] == ["image_url"] * 6
    assert prediction.key == "3" and prediction.prediction == "a"
    assert prediction.description == "the squat is deeper"


@pytest.mark.parametrize(
    "statement, shown",
    [("description", "the squat is deeper"), ("query_string", "the hips go lower")],
)
def test_the_statement_asked_is_the_description_unless_query_string_is_chosen(vlm, statement, shown) -> None:
    # The description is what open mode scores and what the LMM baselines are shown; query_string is opt-in.
    vlm.answer(lambda req: _answer("a"))
    prediction = vlm.judge(cfg=DifferencerConfig(model="fake-vlm", statement=statement))
    (req,) = vlm.requests
    assert f'Statement: "{shown}"' in req.text
    assert prediction.description == "the squat is deeper"  # the prediction always carries the scored text


def test_released_answer_options_are_a_or_b(vlm) -> None:
    # the authors' released differencer prompt (prompt_key 4) only allows a/b; "c" is re-asked
    vlm.answer(_sequence(_answer("c"), _answer("b")))
    prediction = vlm.judge()
    first, second = vlm.requests
    assert '"answer": "a" or "b"' in first.text and "You must choose one of them." in first.text
    assert prediction.prediction == "b" and len(vlm.requests) == 2


def test_single_frame_layout(vlm) -> None:
    vlm.answer(lambda req: _answer("b"))
    diff = Difference(key="0", name="grip", description="the grip is wider")
    prediction = vlm.judge([solid(A_COLOURS[0])], [solid(B_COLOURS[0])], seconds_between_frames=0.5, difference=diff)

    (req,) = vlm.requests
    assert "The first image is a frame from video A and the second image is a frame from video B." in req.text
    assert "seconds apart" not in req.text
    assert 'Statement: "the grip is wider"' in req.text  # no query string: the description is asked
    assert np.abs(_mean_colour(req, 0) - A_COLOURS[0]).max() < 8
    assert np.abs(_mean_colour(req, 1) - B_COLOURS[0]).max() < 8
    assert prediction.prediction == "b"


def test_unequal_frame_counts_are_described(vlm) -> None:
    vlm.answer(lambda req: _answer("b"))
    cfg = DifferencerConfig(model="fake-vlm", image=ImageConfig(format="png", detail="low"))
    vlm.judge([solid(A_COLOURS[0])], [solid(c) for c in B_COLOURS], cfg=cfg, seconds_between_frames=None)

    (req,) = vlm.requests
    assert "The first image is a frame from video A and the next 4 images are frames from video B" in req.text
    assert "seconds apart" not in req.text
    # PNG is lossless: the colours arrive exactly, in order.
    colours = [tuple(int(v) for v in _mean_colour(req, i)) for i in range(5)]
    assert colours == [A_COLOURS[0], *B_COLOURS]
    assert all(p.detail == "low" and p.mime == "image/png" for p in req.images)


def test_ab_mode_rejects_c_and_reasks(vlm) -> None:
    vlm.answer(_sequence(_answer("c"), _answer("b")))
    prediction = vlm.judge(cfg=DifferencerConfig(model="fake-vlm", options="ab"))

    first, second = vlm.requests
    assert first.json_schema["properties"]["answer"]["enum"] == ["a", "b"]
    assert '"answer": "a" or "b"' in first.text and "(c)" not in first.text
    assert "not valid" in second.text
    assert prediction.prediction == "b" and prediction.votes == ["b"]


def test_abc_mode_accepts_c(vlm) -> None:
    vlm.answer(_sequence(_answer("c"), _answer("b")))
    prediction = vlm.judge(cfg=DifferencerConfig(model="fake-vlm", options="abc"))

    (req,) = vlm.requests
    assert req.json_schema["properties"]["answer"]["enum"] == ["a", "b", "c"]
    assert '"answer": "a", "b" or "c"' in req.text and "(c)" in req.text
    assert prediction.prediction == "c"


@pytest.mark.parametrize("written, letter", [("A", "a"), (" (b) ", "b"), ("C.", "c")])
def test_letter_spelling_variants_are_accepted(vlm, written: str, letter: str) -> None:
    vlm.answer(lambda req: json.dumps({"answer_detailed": "x", "answer": written}))
    assert vlm.judge(cfg=DifferencerConfig(model="fake-vlm", options="abc")).prediction == letter
    assert len(vlm.requests) == 1


def test_model_that_never_answers_validly_gives_no_prediction(vlm) -> None:
    vlm.answer(_sequence("Video A, clearly.", '{"answer": "video A"}', '{"answer_detailed": "unsure", "answer": "d"}'))
    prediction = vlm.judge()

    assert len(vlm.requests) == MAX_ATTEMPTS
    assert prediction.prediction is None  # never guessed
    assert prediction.votes == [] and prediction.rationale == ""
    assert prediction.raw_answers == ['{"answer_detailed": "unsure", "answer": "d"}']


def test_votes_use_distinct_seeds_and_the_majority_wins(vlm) -> None:
    vlm.answer(_by_seed({0: "a", 1: "b", 2: "a"}))
    prediction = vlm.judge(cfg=DifferencerConfig(model="fake-vlm", n_votes=3, temperature=0.7))

    assert sorted(r.body["seed"] for r in vlm.requests) == [0, 1, 2]
    assert all(r.body["temperature"] == 0.7 for r in vlm.requests)
    assert prediction.votes == ["a", "b", "a"]
    assert prediction.prediction == "a"
    assert prediction.rationale in ("vote of seed 0", "vote of seed 2")  # a rationale that agrees with the verdict
    assert len(prediction.raw_answers) == 3


def test_vote_seeds_start_at_the_configured_seed(vlm) -> None:
    vlm.answer(lambda req: _answer("b"))
    vlm.judge(cfg=DifferencerConfig(model="fake-vlm", n_votes=3, temperature=1.0, seed=10))
    assert sorted(r.body["seed"] for r in vlm.requests) == [10, 11, 12]


def test_tie_is_c_in_abc_mode(vlm) -> None:
    vlm.answer(_by_seed({0: "a", 1: "b", 2: "c"}))
    prediction = vlm.judge(cfg=DifferencerConfig(model="fake-vlm", n_votes=3, temperature=0.7, options="abc"))
    assert prediction.prediction == "c"
    assert prediction.rationale == "vote of seed 2"


def test_tie_in_ab_mode_has_no_prediction_and_invalid_votes_are_skipped(vlm) -> None:
    # Seed 2 keeps answering "c", invalid in ab mode: its vote is dropped, leaving a 1-1 tie.
    vlm.answer(_by_seed({0: "a", 1: "b", 2: "c"}))
    prediction = vlm.judge(cfg=DifferencerConfig(model="fake-vlm", n_votes=3, temperature=0.7, options="ab"))

    assert sorted(r.body["seed"] for r in vlm.requests) == [0, 1] + [2] * MAX_ATTEMPTS
    assert prediction.votes == ["a", "b"]
    assert prediction.prediction is None
    assert len(prediction.raw_answers) == 3 and '"c"' in prediction.raw_answers[2]


def test_cached_votes_are_reused(vlm, tmp_path: Path) -> None:
    vlm.answer(_by_seed({0: "b", 1: "b", 2: "a"}))
    cfg = DifferencerConfig(model="fake-vlm", n_votes=3, temperature=0.7)
    with Cache(tmp_path / "cache.sqlite") as cache:
        first = vlm.judge(cfg=cfg, cache=cache)
        second = vlm.judge(cfg=cfg, cache=cache)
    assert len(vlm.requests) == 3
    assert first.prediction == second.prediction == "b"
    assert first.votes == second.votes == ["b", "b", "a"]


@pytest.mark.parametrize("n_a, n_b", [(0, 1), (2, 0)])
def test_missing_frames_raise_before_any_call(vlm, n_a: int, n_b: int) -> None:
    vlm.answer(lambda req: _answer("a"))
    with pytest.raises(ViddiffError, match="at least one frame of each video"):
        vlm.judge([solid(A_COLOURS[0])] * n_a, [solid(B_COLOURS[0])] * n_b)
    assert vlm.requests == []
