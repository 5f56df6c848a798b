"""VidPair-Halluc end to end, offline: `viddiff data synth` in the published layout, then `viddiff run` with the
LMM baseline against the local chat server (scripted answers), `viddiff eval` on its predictions, the HTML
report's pair pages, the release's GPT-4o setting, and `viddiff audit` single vs pair-aware."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from viddiff.benchmarks.vidpair.layout import ALL_QA_FILE, METADATA_FILE, PAIRS_FILE, QA_FILES
from viddiff.benchmarks.vidpair.prompts import GRID_NOTE
from viddiff.cli import main
from viddiff.store import ResultsStore
from viddiff.testing.htmldoc import parse_html

REPO_ROOT = Path(__file__).resolve().parents[3]
RUN_FILES = ("config.yaml", "run.json", "samples.jsonl", "predictions.json", "metrics.json", "report.md", "questions.csv")


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("vidpair-e2e") / "data"
    assert main(["-q", "data", "synth", "--benchmark", "vidpair-halluc", "--out", str(out), "--pairs", "2", "--seed", "1"]) == 0
    return out


def test_synth_writes_the_published_layout(synth: Path) -> None:
    for relative in [*QA_FILES.values(), ALL_QA_FILE, PAIRS_FILE, METADATA_FILE, "DATA_LAYOUT.md"]:
        assert (synth / relative).is_file(), relative
    videos = sorted(synth.glob("VidPair-Halluc/*/*.mp4"))  # one folder level, as the release's validator globs
    assert len(videos) == 4 and all(b"ftyp" in v.read_bytes()[:16] for v in videos)
    pairs = json.loads((synth / PAIRS_FILE).read_text())
    assert set(pairs[0]) == {"pair_id", "positive_video", "adversarial_video"}
    row = json.loads((synth / QA_FILES["multiple_choice"]).read_text().splitlines()[0])
    assert row["repo_video_path"].startswith("VidPair-Halluc/") and isinstance(row["choices_json"], str)
    assert isinstance(json.loads(row["choices_json"]), list) and "question" in row


@pytest.fixture(scope="module")
def run_dir(synth: Path, tmp_path_factory: pytest.TempPathFactory, scripted_server) -> Path:
    from viddiff.testing import offline_overrides

    out = tmp_path_factory.mktemp("vidpair-run") / "run"
    sets = [a for item in offline_overrides(scripted_server.base_url, str(out.parent / "cache.sqlite")) for a in ("--set", item)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "dummy-key")
        code = main(["-q", "run", "--benchmark", "vidpair-halluc", "--dataset", str(synth), "--output", str(out), "--report", *sets])
    assert code == 0
    return out


def test_the_baseline_answers_every_question_through_the_chat_server(run_dir: Path) -> None:
    for name in RUN_FILES:
        assert (run_dir / name).is_file(), name
    predictions = json.loads((run_dir / "predictions.json").read_text())
    assert len(predictions) == 16 and all(p["response"].strip() for p in predictions)
    results = ResultsStore(run_dir).load()
    assert {r.method for r in results.values()} == {"lmm:gpt-4o-2024-08-06"} and {r.mode for r in results.values()} == {"qa"}
    saved = json.loads((run_dir / "metrics.json").read_text())
    metrics = saved["metrics"]
    assert (saved["benchmark"], metrics["binary_scorer"], metrics["pair_aware"]) == ("vidpair-halluc", "videoqa", False)
    binary = metrics["overall"]["binary"]
    units = binary["counts"]["vid_pair_total"] + binary["counts"]["text_pair_total"]
    assert units > 0 and 0.0 <= binary["weighted_acc"] <= 1.0
    assert metrics["overall"]["open"]["n"] == 4 and metrics["judge_model"]  # our judge, through the same server
    report = (run_dir / "report.md").read_text()
    assert "## Ours, not the paper's" in report and "not the paper's \"Open Desc.\"" in report


def test_eval_rescores_the_predictions_to_the_same_numbers(run_dir: Path, synth: Path, tmp_path: Path, offline_sets) -> None:
    out = tmp_path / "eval"
    args = ["-q", "eval", "--benchmark", "vidpair-halluc", "--dataset", str(synth), "--predictions", str(run_dir / "predictions.json")]
    assert main([*args, "--output", str(out), *offline_sets]) == 0
    again = json.loads((out / "metrics.json").read_text())["metrics"]
    first = json.loads((run_dir / "metrics.json").read_text())["metrics"]
    assert again["overall"]["binary"] == first["overall"]["binary"] and again["overall"]["mcq"] == first["overall"]["mcq"]
    assert again["consistency"] == first["consistency"]


def test_eval_whose_judge_answers_stay_invalid_exits_1_and_says_so(run_dir: Path, synth: Path, tmp_path: Path, capsys) -> None:
    """Open-ended questions the judge could not grade are left out of our open score: the score is incomplete,
    as it is for ViDiC-1K and VidDiffBench, and the command says so instead of exiting 0."""
    from viddiff.testing import offline_overrides
    from viddiff.testing.fake_openai import FakeOpenAIServer

    out = tmp_path / "eval"
    with FakeOpenAIServer(lambda req: "no idea") as server, pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "dummy-key")
        sets = [a for item in offline_overrides(server.base_url, str(tmp_path / "c.sqlite")) for a in ("--set", item)]
        args = ["-q", "eval", "--benchmark", "vidpair-halluc", "--dataset", str(synth), "--predictions", str(run_dir / "predictions.json")]
        code = main([*args, "--output", str(out), *sets, "--set", "eval.max_reasks=0"])
    last = capsys.readouterr().out.strip().splitlines()[-1]
    failures = json.loads((out / "metrics.json").read_text())["metrics"]["judge_failures"]
    assert code == 1 and len(failures) == 4
    assert last.startswith("viddiff: the scores are incomplete: the judge's answers stayed invalid for 4 open-ended questions")
    assert str(out / "metrics.json") in last and "vidpair.judge.model" in last


def test_the_report_shows_both_videos_of_a_pair_with_each_question_and_answer(run_dir: Path) -> None:
    pages = sorted((run_dir / "report").glob("0000-*.html"))
    assert len(pages) == 1
    page = parse_html(pages[0].read_text())
    sources = [v.attrs["src"] for v in page.find_all("video")]
    assert len(sources) == 2 and sources[0].endswith("_001.mp4") and sources[1].endswith("_002.mp4")
    captions = [f.text() for f in page.find_all("figcaption")]
    assert "positive" in captions[0] and "adversarial" in captions[1]
    table = page.find("table", cls="task-answers")
    rows = table.find_all("tr")[1:]
    predictions = {p["id"]: p["response"] for p in json.loads((run_dir / "predictions.json").read_text())}
    first_pair = [key for key in predictions if "_0001-" in key]
    assert len(rows) == len(first_pair) // 2  # each question once, its two answers side by side
    shown = table.text()
    for key in first_pair:
        assert predictions[key].strip().split("\n")[0] in shown and key in shown
    index = parse_html((run_dir / "report" / "index.html").read_text())
    assert "group" in index.find("section", id="samples").text() and len(index.find_all("a", href=pages[0].name)) == 1


def test_a_method_that_cannot_answer_questions_is_refused(synth: Path, tmp_path: Path, offline_sets, capsys) -> None:
    code = main(["run", "--benchmark", "vidpair-halluc", "--dataset", str(synth), "--method", "viddiff", "--output", str(tmp_path / "x"), *offline_sets])
    assert code == 2
    assert "--method baseline can" in capsys.readouterr().err


def test_the_release_gpt4o_setting_sends_one_png_grid_per_question(synth: Path, tmp_path: Path, offline_sets, scripted_server) -> None:
    before = len(scripted_server.requests)
    config = str(REPO_ROOT / "configs" / "vidpair-gpt4o.yaml")
    args = ["-q", "run", "--dataset", str(synth), "--config", config, "--output", str(tmp_path / "gpt4o"), "--limit", "1"]
    assert main([*args, "--set", "vidpair.question_types=[binary]", *offline_sets]) == 0
    sent = [r for r in scripted_server.requests[before:] if r.model == "gpt-4o"]
    assert len(sent) == 4
    for req in sent:
        (image,) = req.images
        assert image.mime == "image/png" and [m["role"] for m in req.messages] == ["user"]
        assert GRID_NOTE in req.texts[0] and req.body["temperature"] == 0.2 and req.body["max_tokens"] == 512


def test_audit_answers_single_and_pair_aware_and_compares(synth: Path, tmp_path: Path, offline_sets, scripted_server) -> None:
    out = tmp_path / "audit"
    before = len(scripted_server.requests)
    args = ["-q", "audit", "--benchmark", "vidpair-halluc", "--dataset", str(synth), "--output", str(out)]
    assert main([*args, "--set", "vidpair.question_types=[binary]", *offline_sets]) == 0
    for variant in ("single", "pair-aware"):
        assert (out / variant / "metrics.json").is_file()
    aware = ResultsStore(out / "pair-aware").load()
    assert all(any("pair-aware" in n for n in r.notes) for r in aware.values())
    assert not any(any("pair-aware" in n for n in r.notes) for r in ResultsStore(out / "single").load().values())
    requests = scripted_server.requests[before:]
    assert sum("Answer about Video 1 only" in r.text for r in requests) == 8  # the pair-aware run's questions
    summary = json.loads((out / "metrics.json").read_text())
    rows = {r["metric"]: r for r in summary["rows"]}
    wacc = rows["binary weighted accuracy (wAcc)"]
    assert wacc["single_video"] == summary["single_video"]["overall"]["binary"]["weighted_acc"]
    assert wacc["pair_aware"] == summary["pair_aware"]["overall"]["binary"]["weighted_acc"]
    assert summary["pair_aware"]["pair_aware"] is True and "beyond the paper" in (out / "report.md").read_text()


def test_a_failed_question_is_left_out_counted_and_shown_on_its_pair_page(synth: Path, tmp_path: Path, offline_sets) -> None:
    """One question's request is refused by the server: its sample fails (exit 1, errors.json), it has no answer
    in predictions.json, the metrics count it as unanswered, and the report says so beside the other answers."""
    from viddiff.testing.fake_openai import FakeOpenAIServer, HTTPFault
    from viddiff.testing.responders import FailingWhen, ScriptedModel

    def refuse(req):
        raise HTTPFault(400, "this question is refused")

    model = FailingWhen(ScriptedModel(), lambda req: "exactly one disc" in req.text and "Question:" in req.text, refuse)
    with FakeOpenAIServer(model) as server:
        sets = [s if not s.startswith("endpoints.default.base_url=") else f"endpoints.default.base_url={server.base_url}" for s in offline_sets]
        out = tmp_path / "run"
        args = ["-q", "run", "--benchmark", "vidpair-halluc", "--dataset", str(synth), "--output", str(out), "--report"]
        assert main([*args, "--set", "vidpair.question_types=[binary]", *sets]) == 1
    failed = {e["sample_key"] for e in json.loads((out / "errors.json").read_text())}
    assert failed == {"b-number_0002-pos-1", "b-number_0002-adv-1"}
    predictions = {p["id"]: p["response"] for p in json.loads((out / "predictions.json").read_text())}
    assert predictions["b-number_0002-pos-1"] is None and predictions["b-color_0001-pos-1"]
    metrics = json.loads((out / "metrics.json").read_text())["metrics"]
    assert metrics["no_response"] == {"binary": 2}
    assert "are null and are left out of the release's metrics" in (out / "report.md").read_text()
    page = parse_html(next((out / "report").glob("0001-*.html")).read_text())
    assert page.text().count("failed:") == 2


def test_swapping_videos_is_refused_for_single_video_questions(synth: Path, tmp_path: Path, offline_sets, capsys) -> None:
    code = main(["run", "--benchmark", "vidpair-halluc", "--dataset", str(synth), "--swap-videos", "--output", str(tmp_path / "s"), *offline_sets])
    assert code == 2 and "asks about one video" in capsys.readouterr().err
