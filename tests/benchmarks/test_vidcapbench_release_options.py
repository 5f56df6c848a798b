"""VidCapBench edge cases where the released scorer differs from our defaults, each a named option: a blank
caption (``vidcapbench.empty_caption``) and a video the caption file lacks (``vidcapbench.missing_caption``).
The synthetic benchmark on disk, a captions JSONL file on disk, the answerer and grader over a real local chat
server; every number worked out by hand below."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from viddiff.benchmarks.vidcapbench.data import load_vidcapbench
from viddiff.benchmarks.vidcapbench.scoring import VidcapbenchMetrics, evaluate_vidcapbench
from viddiff.benchmarks.vidcapbench.synthetic import write_synthetic_vidcapbench
from viddiff.config import Config, DataConfig, VidcapbenchConfig, load_config
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer

REPO = Path(__file__).resolve().parents[2]
CAPTION = "A square on red."
"""Graded by question (below): colour A, what moves B, direction D, start C, sound A, shape A."""
GRADES = {"colour": 2, "moves in": 1, "direction": -1, "starts": 0, "sound": 2, "shape": 2}
GUESS = "A white square."
"""What the answerer makes up from a blank caption: right for "what moves" (A), wrong for the shape (D), the
rest not mentioned (C)."""


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("vidcapbench")
    write_synthetic_vidcapbench(out, videos=3, seed=1)  # video_main_0 and Tarsier_1: 6 QA each; videos_qa_2: none
    return out


def _respond(req: ChatRequest) -> str:
    if "Predicted Answer:" not in req.text:  # the answerer
        caption = req.text.split("Description:\n", 1)[1].split("\n\nQuestion:", 1)[0]
        return GUESS if not caption.strip() else "the answer from the caption"
    question = req.text.split("Question: ", 1)[1].split("\n", 1)[0]
    if req.text.split("Predicted Answer: ", 1)[1].startswith(GUESS):
        score = 2 if "moves in" in question else -1 if "shape" in question else 0
    else:
        score = next(v for k, v in GRADES.items() if k in question)
    return json.dumps({"score": score, "analysis": "scripted"})


def _score(synth: Path, tmp_path: Path, captions: list[dict[str, str]], *sets: str) -> tuple[VidcapbenchMetrics, int]:
    path = tmp_path / "captions.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in captions), encoding="utf-8")
    dataset = load_vidcapbench(DataConfig(benchmark="vidcapbench", dataset=str(synth)), VidcapbenchConfig())
    with FakeOpenAIServer(_respond) as server:
        cfg = Config().with_overrides([f"endpoints.default.base_url={server.base_url}", "cache.enabled=false",
                                       "vidcapbench.tokenizer=words", "vidcapbench.judge_runs=1", *sets])
        return evaluate_vidcapbench(dataset, path, cfg), len(server.requests)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")


def test_a_blank_caption_is_graded_c_unless_judged_as_released(synth: Path, tmp_path: Path) -> None:
    captions = [{"video": "video_main_0.mp4", "model_generation": CAPTION}, {"video": "Tarsier_1.mp4", "model_generation": ""},
                {"video": "videos_qa_2.mp4", "model_generation": "No questions."}]
    ours, calls = _score(synth, tmp_path, captions)
    # video 0: A3 B1 C1 D1; the blank caption: six C without a call
    assert ours.runs[0].overall.model_dump() == {"A": 3, "B": 1, "C": 7, "D": 1} and calls == 12
    assert ours.overall.rates.accuracy == pytest.approx(100 * 3 / 12)
    released, calls = _score(synth, tmp_path, captions, "vidcapbench.empty_caption=judge")
    # the blank caption is answered (a guess) and graded: A for what moves, D for the shape, four C
    assert released.runs[0].overall.model_dump() == {"A": 4, "B": 1, "C": 5, "D": 2} and calls == 24
    rates = released.overall.rates
    assert rates.accuracy == pytest.approx(100 * 4 / 12) and rates.precision == pytest.approx(100 * 5 / 7)
    assert rates.coverage == pytest.approx(100 * 7 / 12)
    assert released.empty_captions == ["Tarsier_1.mp4"] and released.empty_caption == "judge"


def test_a_video_without_a_caption_is_graded_c_unless_left_out_as_released(synth: Path, tmp_path: Path) -> None:
    captions = [{"video": "video_main_0.mp4", "model_generation": CAPTION}, {"video": "videos_qa_2.mp4", "model_generation": "No questions."}]
    ours, _ = _score(synth, tmp_path, captions)
    # Tarsier_1 counts as a blank caption: six C; mean length (6 + 1 + 4) / 3 words-substitute tokens
    assert ours.runs[0].overall.model_dump() == {"A": 3, "B": 1, "C": 7, "D": 1} and ours.n_qa == 12
    assert ours.overall.rates.accuracy == pytest.approx(25.0) and ours.mean_tokens == pytest.approx(11 / 3)
    assert ours.overall.rates.coverage == pytest.approx(100 * 5 / 12) and ours.left_out == []
    released, calls = _score(synth, tmp_path, captions, "vidcapbench.missing_caption=leave_out")
    # its questions leave every denominator, its caption the mean length: (6 + 4) / 2
    assert released.runs[0].overall.model_dump() == {"A": 3, "B": 1, "C": 1, "D": 1} and released.n_qa == 6
    rates = released.overall.rates
    assert rates.accuracy == pytest.approx(50.0) and rates.coverage == pytest.approx(100 * 5 / 6)
    assert released.mean_tokens == pytest.approx(5.0) and rates.conciseness == pytest.approx(100 * 50 / 5)
    assert released.left_out == ["Tarsier_1.mp4"] and calls == 12
    by_name = {d.name: d for d in released.dimensions}
    assert by_name["Video Content"].n_qa == 2  # what moves (B) and the shape (A) of video 0 only


def test_the_release_config_switches_both_on() -> None:
    paper, ours = load_config(REPO / "configs" / "paper.yaml").vidcapbench, Config().vidcapbench
    assert (paper.empty_caption, paper.missing_caption) == ("judge", "leave_out")
    assert (ours.empty_caption, ours.missing_caption) == ("not_mentioned", "not_mentioned")
