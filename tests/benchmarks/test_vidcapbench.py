"""VidCapBench: loading (file-name join, the dimension table), caption files, the two grade readings, the four rates
by hand with all four grades, judge runs averaged with their own seeds, the Conciseness tokenizer (a real
SentencePiece model, from a file and from a local Hub server, and the labelled substitute)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Callable

import pytest

from viddiff.benchmarks.vidcapbench.captions import load_captions
from viddiff.benchmarks.vidcapbench.data import DIMENSION_OF, load_vidcapbench
from viddiff.benchmarks.vidcapbench.prompts import read_grade_substring
from viddiff.benchmarks.vidcapbench.scoring import Counts, evaluate_vidcapbench
from viddiff.benchmarks.vidcapbench.synthetic import QA_FILE, write_synthetic_vidcapbench
from viddiff.benchmarks.vidcapbench.tokens import token_counter
from viddiff.config import Config, DataConfig, VidcapbenchConfig
from viddiff.errors import DatasetError, PredictionFormatError
from viddiff.testing.fake_hf import FakeHubServer
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("vidcapbench")
    write_synthetic_vidcapbench(out, videos=3, seed=1)
    return out


def _load(dataset: str, **data: object):
    return load_vidcapbench(DataConfig(benchmark="vidcapbench", dataset=dataset, **data), VidcapbenchConfig())


def test_loading_joins_videos_by_file_name_and_keeps_videos_without_questions(synth: Path) -> None:
    dataset = _load(str(synth))
    assert [s.sample_key for s in dataset] == ["video_main_0.mp4", "Tarsier_1.mp4", "videos_qa_2.mp4"]
    assert all(Path(s.videos[0].path) == synth / "videos" / s.sample_key for s in dataset)
    assert dataset[0].task.prompt == "Describe the video in detail." and dataset[0].task.system_prompt is None
    assert [len(dataset.qa[s.sample_key]) for s in dataset] == [6, 6, 0]
    assert {qa.dimension for qa in dataset.qa["Tarsier_1.mp4"]} == {"Video Aesthetics", "Video Content", "Video Motion", "Physical Laws"}
    assert _load(str(synth / QA_FILE)).source == dataset.source


def test_the_dimension_table_has_the_sixteen_published_sub_categories() -> None:
    assert len(DIMENSION_OF) == 16
    assert DIMENSION_OF["cinematography"] == "Video Aesthetics" and DIMENSION_OF["events"] == "Video Content"
    assert DIMENSION_OF["body movements"] == "Video Motion" and DIMENSION_OF["counter intuitive"] == "Physical Laws"


def test_bad_qa_files_say_what_is_wrong(tmp_path: Path) -> None:
    line = {"video_dir": "/x/a.mp4", "QA_pairs": [{"question": "q", "answer": "a", "sub_category": "smell"}]}
    (tmp_path / QA_FILE).write_text(json.dumps(line) + "\n")
    with pytest.raises(DatasetError, match=r"line 1 QA 0: unknown sub_category 'smell'"):
        _load(str(tmp_path))
    line["QA_pairs"] = []
    (tmp_path / QA_FILE).write_text(json.dumps(line) + "\n" + json.dumps({**line, "video_dir": "a.mp4"}) + "\n")
    with pytest.raises(DatasetError, match=r"line 2: video 'a.mp4' appears twice"):
        _load(str(tmp_path))


def test_captions_accept_video_or_video_dir_and_refuse_mistakes(synth: Path) -> None:
    dataset = _load(str(synth))
    rows = [
        {"question": "Describe the video in detail.", "video": "video_main_0.mp4", "model_generation": "one"},
        {"video_dir": "/somewhere/else/Tarsier_1.mp4", "model_generation": "two"},
    ]
    assert load_captions(rows, dataset) == {"video_main_0.mp4": "one", "Tarsier_1.mp4": "two"}  # videos_qa_2: missing
    with pytest.raises(PredictionFormatError, match=r"(?s)a second caption for 'Tarsier_1.mp4'.*'nope.mp4' is not in the dataset"):
        load_captions([*rows, rows[1], {"video": "nope.mp4", "model_generation": "x"}], dataset)
    with pytest.raises(PredictionFormatError, match="'model_generation' must be the caption text"):
        load_captions([{"video": "video_main_0.mp4", "caption": "x"}], dataset)


@pytest.mark.parametrize(
    "reply, grade",
    [
        ('{"score": 2, "analysis": "complete"}', "A"),
        ('{"score": -1, "analysis": "it contradicts"}', "D"),
        ('{"score": 1, "analysis": "partial"}', "B"),
        ('{"score": 0, "analysis": "absent"}', "C"),
        ('{"score": 1, "analysis": "it names 2 people"}', "A"),  # a digit in the analysis flips the grade
        ('{"score": 0, "analysis": "mentions 10 cars"}', "B"),
        ('{"score": -1}', "D"),
        ("no digits at all", None),
    ],
)
def test_the_released_substring_reading(reply: str, grade: str) -> None:
    assert read_grade_substring(reply) == grade


def test_rates_as_published_from_counts() -> None:
    rates = Counts(A=3, B=2, C=4, D=1).rates(mean_tokens=50.0)
    assert rates["accuracy"] == pytest.approx(30.0)
    assert rates["precision"] == pytest.approx(100 * 5 / 6)  # C (not mentioned) left out
    assert rates["coverage"] == pytest.approx(60.0)
    assert rates["conciseness"] == pytest.approx(100 * 30.0 / 50.0)
    assert Counts(C=2).rates(10.0)["precision"] is None and Counts().rates(10.0)["accuracy"] is None


def _grading_server(grade_of: Callable[[ChatRequest], str]) -> Callable[[ChatRequest], str]:
    def respond(req: ChatRequest) -> str:
        if "Predicted Answer:" in req.text:
            return grade_of(req)
        return "the answer from the caption"

    return respond


def _evaluate(tmp_path: Path, responder, dataset, captions, *sets: str):
    with FakeOpenAIServer(responder) as server:
        cfg = Config().with_overrides([f"endpoints.default.base_url={server.base_url}", f"cache.path={tmp_path / 'c.sqlite'}",
                                       "vidcapbench.tokenizer=words", *sets])
        return evaluate_vidcapbench(dataset, captions, cfg), list(server.requests)


def test_all_four_grades_by_hand_per_dimension_and_the_empty_caption(synth: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    scores = {"colour": 2, "moves in": 1, "direction": -1, "starts": 0, "sound": 2, "shape": 2}

    def grade(req: ChatRequest) -> str:
        question = req.text.split("Question: ", 1)[1].split("\n", 1)[0]
        score = next(v for k, v in scores.items() if k in question)
        return json.dumps({"score": score, "analysis": "graded"})

    dataset = _load(str(synth))
    captions = [{"video": "video_main_0.mp4", "model_generation": "A square on red."},
                {"video": "Tarsier_1.mp4", "model_generation": ""},
                {"video": "videos_qa_2.mp4", "model_generation": "No questions for this one."}]
    metrics, requests = _evaluate(tmp_path, _grading_server(grade), dataset, captions, "vidcapbench.judge_runs=1")
    assert len(requests) == 12  # 6 answers + 6 grades for the one non-empty caption with questions
    (run,) = metrics.runs
    # video 0: A colour, sound, shape; B subject; D direction; C position. Video 1 (empty caption): six C.
    assert run.overall.model_dump() == {"A": 3, "B": 1, "C": 7, "D": 1}
    assert metrics.empty_captions == ["Tarsier_1.mp4"]
    mean_tokens = (6 + 1 + 7) / 3  # words substitute: words and marks plus one end token, over every caption
    assert metrics.mean_tokens == pytest.approx(mean_tokens)
    overall = metrics.overall.rates
    assert overall.accuracy == pytest.approx(100 * 3 / 12) and overall.precision == pytest.approx(100 * 4 / 5)
    assert overall.coverage == pytest.approx(100 * 5 / 12) and overall.conciseness == pytest.approx(2500 / mean_tokens)
    by_name = {d.name: d for d in metrics.dimensions}
    content = by_name["Video Content"]  # subject B + shape A, and two C from the empty caption
    assert content.n_qa == 4 and content.rates.accuracy == pytest.approx(25.0) and content.rates.precision == pytest.approx(100.0)
    assert content.rates.coverage == pytest.approx(50.0)
    motion = by_name["Video Motion"]
    assert motion.rates.precision == pytest.approx(0.0) and motion.rates.coverage == pytest.approx(50.0)
    assert motion.rates.conciseness == pytest.approx(0.0)  # the same mean length for every dimension


def test_judge_runs_use_their_own_seeds_and_are_averaged(synth: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    dataset = _load(str(synth), limit=1)

    def grade(req: ChatRequest) -> str:  # run r sends seed r: the grader is right only in run 0
        return json.dumps({"score": 2 if req.body.get("seed") == 0 else 0, "analysis": "seeded"})

    metrics, requests = _evaluate(tmp_path, _grading_server(grade), dataset,
                                  [{"video": "video_main_0.mp4", "model_generation": "Caption."}])
    assert metrics.judge_runs == 3 and len(requests) == 3 * 12
    assert sorted({r.body["seed"] for r in requests}) == [0, 1, 2]
    assert [r.overall.A for r in metrics.runs] == [6, 0, 0]
    assert metrics.overall.rates.accuracy == pytest.approx(100 / 3)
    assert metrics.overall.accuracy_std == pytest.approx(57.735, abs=1e-3)


def test_substring_reading_and_ungraded_replies(synth: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    dataset = _load(str(synth), limit=1)

    def grade(req: ChatRequest) -> str:
        assert req.response_format is None  # free text, read as released
        if "sound" in req.text:
            return "I cannot say."
        return "{'score': 1, 'analysis': 'it gets 2 of 3 details'}"

    metrics, _ = _evaluate(tmp_path, _grading_server(grade), dataset, [{"video": "video_main_0.mp4", "model_generation": "C."}],
                           "vidcapbench.judge_runs=1", "vidcapbench.grade_reading=substring")
    assert metrics.runs[0].overall.model_dump() == {"A": 5, "B": 0, "C": 0, "D": 0}  # every "1" read as A
    assert metrics.runs[0].ungraded == 1 and len(metrics.ungraded) == 1


def _sentencepiece_model(tmp_path: Path) -> Path:
    import sentencepiece

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(f"a white square moves from left to right across a {c} background number {i}"
                                for i in range(200) for c in ("red", "green", "blue")))
    sentencepiece.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(tmp_path / "spiece"), vocab_size=60,
                                             minloglevel=2)
    return tmp_path / "spiece.model"


def test_sentencepiece_counts_add_the_end_token_from_a_file_or_the_hub(tmp_path: Path, monkeypatch) -> None:
    import sentencepiece

    model = _sentencepiece_model(tmp_path)
    pieces = len(sentencepiece.SentencePieceProcessor(model_file=str(model)).encode("a red square"))
    local = token_counter(str(model), DataConfig(), fallback=False)
    assert local.count("a red square") == pieces + 1 and local.name == f"sentencepiece:{model}"
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "spiece.model").write_bytes(model.read_bytes())
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with FakeHubServer({"google/flan-t5-base": {"main": repo}}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        hubbed = token_counter("google/flan-t5-base", DataConfig(hf_cache_dir=str(tmp_path / "cache")), fallback=False)
    assert hubbed.count("a red square") == pieces + 1 and hubbed.name == "sentencepiece:google/flan-t5-base"


def test_without_the_model_the_substitute_is_labelled_or_refused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    data = DataConfig(hf_cache_dir=str(tmp_path / "empty"))
    substitute = token_counter("google/flan-t5-base", data, fallback=True)
    assert substitute.name.startswith("words (substitute: google/flan-t5-base unavailable")
    assert substitute.count("A red square, moving.") == 6 + 1
    with pytest.raises(DatasetError, match="vidcapbench.tokenizer: google/flan-t5-base unavailable"):
        token_counter("google/flan-t5-base", data, fallback=False)
    with pytest.raises(DatasetError, match="no SentencePiece model file"):
        token_counter(str(tmp_path / "missing.model"), data, fallback=False)


@pytest.mark.parametrize("endpoint", ["http://127.0.0.1:9", "http://hub.invalid"])  # refused; a name that resolves nowhere
def test_an_unreachable_hub_is_asked_once_and_said_in_one_complete_line(
    tmp_path: Path, monkeypatch, caplog: pytest.LogCaptureFixture, endpoint: str
) -> None:
    """huggingface_hub alone retried for 23 s (five backoff rounds), then gave a message cut mid-word."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    data = DataConfig(hf_cache_dir=str(tmp_path / "empty"))
    with caplog.at_level(logging.INFO):
        with pytest.raises(DatasetError) as err:
            token_counter("google/flan-t5-base", data, fallback=False)
        substitute = token_counter("google/flan-t5-base", data, fallback=True)
    assert not [r for r in caplog.records if "Retrying" in r.getMessage()]  # no backoff rounds
    message = str(err.value)
    assert "\n" not in message and message.startswith(
        f"vidcapbench.tokenizer: google/flan-t5-base unavailable: could not reach the Hugging Face hub at {endpoint} "
        "for google/flan-t5-base/spiece.model: "
    )
    assert message.endswith("set vidcapbench.tokenizer=DIR/spiece.model, or set vidcapbench.tokenizer_fallback=true "
                            "to count with the labelled 'words' substitute")
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warning.startswith("Conciseness: google/flan-t5-base unavailable: could not reach the Hugging Face hub")
    assert warning.endswith("set vidcapbench.tokenizer=DIR/spiece.model") and "\n" not in warning
    assert substitute.name.startswith("words (substitute: google/flan-t5-base unavailable: could not reach")


def test_a_captions_file_that_is_not_utf8_is_named(synth: Path, tmp_path: Path) -> None:
    path = tmp_path / "captions.jsonl"
    path.write_bytes(b'{"video": "video_main_0.mp4", "model_generation": "caf\xe9"}\n')
    with pytest.raises(PredictionFormatError, match=r"captions.jsonl: cannot read the captions file"):
        load_captions(path, _load(str(synth)))
