"""ViDiC-1K scoring end to end through the fake OpenAI-compatible server (real HTTP, real openai client).

The fixture: four pairs, ten checklist items; pair ``p0`` comes from
VidDiffBench, ``p3`` has an empty response. The scripted judge answers each
question from a fixed table, so every score below is computed by hand.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Callable, Optional

import pytest

from viddiff.config import Config
from viddiff.data.dataset import Dataset
from viddiff.benchmarks import evaluate_dataset
from viddiff.benchmarks.vidic import VIDIC
from viddiff.benchmarks.vidic.scoring import VidicMetrics, evaluate_vidic
from viddiff.benchmarks.vidic.prompts import PROMPT_VERSION, vidic_templates
from viddiff.benchmarks.vidic.data import ChecklistItem, VidicDataset
from viddiff.schema import Sample, VideoRef
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel

REASK = "Your previous answer was not valid"

# (sample key, source, [(item key, category, judge answer)]); s* = similarity (correct "no"), d* = difference ("yes")
PAIRS = [
    ("p0", "viddiffbench", [("s0", "background", "no"), ("d0", "motion", "yes"), ("d1", "camera", "no")]),
    ("p1", "vidic", [("s0", "style", "yes"), ("s1", "camera", "no"), ("d0", "subject", "yes")]),
    ("p2", "vidic", [("d0", "playback", "yes"), ("s0", "motion", "yes")]),
    ("p3", "vidic", [("s0", "background", "no"), ("d0", "position", "yes")]),
]
RESPONSES = {"p0": "Response zero.", "p1": "Response one.", "p2": "Response two.", "p3": "  "}
ANSWERS = {f"Question {key}-{item}?": answer for key, _, items in PAIRS for item, _, answer in items}


def question_of(req: ChatRequest) -> str:
    return re.search(r"<question>\n(.*?)\n</question>", req.text, flags=re.S).group(1)


def fixed_judge(req: ChatRequest) -> str:
    question = question_of(req)
    return json.dumps({"answer": ANSWERS[question], "explanation": f"table answer for {question}"})


def build_dataset() -> Dataset:
    samples, checklists = [], {}
    for key, source, items in PAIRS:
        samples.append(
            Sample(
                sample_key=key,
                action="vidic",
                action_name="",
                action_description="",
                split="vidic",
                domain="vidic",
                source_dataset=source,
                videos=(VideoRef(path=f"/data/{key}/a.mp4"), VideoRef(path=f"/data/{key}/b.mp4")),
            )
        )
        checklists[key] = [
            ChecklistItem(
                key=item,
                kind="similarity" if item.startswith("s") else "difference",
                category=category,
                question=f"Question {key}-{item}?",
                correct_answer="no" if item.startswith("s") else "yes",
            )
            for item, category, _ in items
        ]
    return VidicDataset(samples=samples, source="fixture", revision=None, root=Path("/data"), checklists=checklists)


@pytest.fixture
def dataset() -> Dataset:
    return build_dataset()


@pytest.fixture
def responses(dataset: Dataset) -> list[dict]:
    return [{"id": s.sample_key, "response": RESPONSES[s.sample_key]} for s in dataset]


@pytest.fixture
def make_cfg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Config]:
    monkeypatch.setenv("VIDDIFF_TEST_KEY", "dummy")

    def make(server: FakeOpenAIServer, *extra: str) -> Config:
        return Config().with_overrides(
            [
                f"endpoints.default.base_url={server.base_url}",
                "endpoints.default.api_key_env=VIDDIFF_TEST_KEY",
                "endpoints.backoff_base_s=0",
                "data.benchmark=vidic",
                "vidic.judge.model=judge-model",
                f"cache.path={tmp_path / 'cache.sqlite'}",
                *extra,
            ]
        )

    return make


def acc(stats) -> tuple[int, int]:
    return stats.correct, stats.n


def test_scores_by_hand(dataset, responses, make_cfg) -> None:
    with FakeOpenAIServer(fixed_judge) as server:
        m = evaluate_dataset(dataset, responses, "describe", make_cfg(server))
    assert isinstance(m, VidicMetrics)
    o = m.overall
    assert (acc(o.avg), acc(o.diff), acc(o.sim)) == ((5, 10), (3, 5), (2, 5))
    assert o.avg.accuracy == pytest.approx(0.5) and o.sim.accuracy == pytest.approx(0.4)
    assert o.avg.ci_low < 0.5 < o.avg.ci_high
    cats = {c.category: c for c in o.by_category}
    assert [c.category for c in o.by_category] == ["subject", "style", "background", "camera", "motion", "position", "playback"]
    assert {k: acc(c.avg) for k, c in cats.items()} == {
        "subject": (1, 1),
        "style": (0, 1),
        "background": (1, 2),
        "camera": (1, 2),
        "motion": (1, 2),
        "position": (0, 1),
        "playback": (1, 1),
    }
    assert (acc(cats["camera"].diff), acc(cats["camera"].sim)) == ((0, 1), (1, 1))
    assert (acc(cats["motion"].diff), acc(cats["motion"].sim)) == ((1, 1), (0, 1))
    assert cats["style"].diff.n == 0 and cats["style"].diff.accuracy is None
    assert cats["playback"].name == "playback technique"
    # without the VidDiffBench pair p0
    w = m.without_overlap
    assert m.overlap_samples == ["p0"] and w.n_samples == 3 and o.n_samples == 4
    assert (acc(w.avg), acc(w.diff), acc(w.sim)) == ((3, 7), (2, 3), (1, 4))
    assert {c.category: acc(c.avg) for c in w.by_category}["background"] == (0, 1)
    # the empty response is not judged: both its items wrong, no request
    assert m.empty_responses == ["p3"]
    rec = {(r.sample_key, r.key): r for r in m.records}
    assert rec["p3", "s0"].status == "no_response" and rec["p3", "s0"].judge_answer is None and not rec["p3", "s0"].correct
    assert rec["p0", "d1"].judge_answer == "no" and not rec["p0", "d1"].correct and rec["p0", "d1"].overlap
    assert rec["p1", "d0"].explanation == "table answer for Question p1-d0?"
    assert (m.n_samples, m.n_items, m.judge_failures) == (4, 10, [])
    assert len(server.requests) == 8
    assert m.usage["vidic_judge"].calls == 8


def test_judge_sees_only_the_description_and_question(dataset, responses, make_cfg) -> None:
    with FakeOpenAIServer(fixed_judge) as server:
        evaluate_dataset(dataset, responses, "describe", make_cfg(server))
    req = next(r for r in server.requests if question_of(r) == "Question p1-s0?")
    assert "Response one." in req.text and "Response zero." not in req.text
    assert "(similarity)" in req.text and "default" in req.text.lower()
    assert not req.images and not req.videos
    assert req.model == "judge-model"
    assert req.response_format["json_schema"]["name"] == "ChecklistJudgeAnswer"
    d = next(r for r in server.requests if question_of(r) == "Question p1-d0?")
    assert "(difference)" in d.text


def test_temperature_sent_only_when_configured(dataset, responses, make_cfg) -> None:
    with FakeOpenAIServer(fixed_judge) as server:
        evaluate_dataset(dataset, responses, "describe", make_cfg(server))
        default = list(server.requests)
        evaluate_dataset(dataset, responses, "describe", make_cfg(server, "vidic.judge.temperature=0", "cache.enabled=false"))
        set_zero = server.requests[len(default) :]
    assert default and all("temperature" not in r.body for r in default)
    assert len(set_zero) == 8 and all(r.body["temperature"] == 0 for r in set_zero)


def test_rerun_is_served_from_cache(dataset, responses, make_cfg) -> None:
    with FakeOpenAIServer(fixed_judge) as server:
        cfg = make_cfg(server)
        first = evaluate_dataset(dataset, responses, "describe", cfg)
        calls = len(server.requests)
        second = evaluate_dataset(dataset, responses, "describe", cfg)
    assert calls == 8 and len(server.requests) == calls
    assert second.records == first.records and second.overall == first.overall
    assert second.usage["vidic_judge"].cache_hits == 8 and second.usage["vidic_judge"].calls == 0


def test_items_are_judged_concurrently(dataset, responses, make_cfg) -> None:
    with FakeOpenAIServer(fixed_judge, latency_s=0.2) as server:
        evaluate_dataset(dataset, responses, "describe", make_cfg(server, "endpoints.max_concurrency=4"))
    assert 1 < server.max_in_flight <= 4


def _malformed_then(bad: Callable[[str], Optional[str]]) -> Callable[[ChatRequest], str]:
    """The fixed judge, except where ``bad(question)`` (seeing whether this is a re-ask) gives another answer."""

    def respond(req: ChatRequest) -> str:
        override = bad(question_of(req)) if REASK not in req.text else bad(question_of(req) + " reask")
        return override if override is not None else fixed_judge(req)

    return respond


def test_malformed_answer_is_reasked_then_accepted(dataset, responses, make_cfg) -> None:
    def bad(q: str) -> Optional[str]:
        if q == "Question p1-d0?":
            return "I would say yes."
        if q == "Question p1-s1?":
            return json.dumps({"answer": "maybe", "explanation": "unsure"})
        return None

    with FakeOpenAIServer(_malformed_then(bad)) as server:
        m = evaluate_dataset(dataset, responses, "describe", make_cfg(server))
    for question, problem in (("Question p1-d0?", "Invalid JSON"), ("Question p1-s1?", "answer")):
        asked = [r for r in server.requests if question_of(r) == question]
        assert len(asked) == 2 and REASK in asked[1].text and problem in asked[1].text
    assert m.judge_failures == [] and acc(m.overall.avg) == (5, 10)


def test_answer_case_is_forgiven_without_reask(dataset, responses, make_cfg) -> None:
    def bad(q: str) -> Optional[str]:
        return json.dumps({"answer": " YES ", "explanation": "caps"}) if q == "Question p0-d0?" else None

    with FakeOpenAIServer(_malformed_then(bad)) as server:
        m = evaluate_dataset(dataset, responses, "describe", make_cfg(server))
    assert len(server.requests) == 8
    assert next(r for r in m.records if (r.sample_key, r.key) == ("p0", "d0")).judge_answer == "yes"


def test_invalid_after_reasks_counts_wrong_and_is_reported(dataset, responses, make_cfg, tmp_path) -> None:
    def bad(q: str) -> Optional[str]:
        return "no idea" if q.startswith("Question p1-d0?") else None

    with FakeOpenAIServer(_malformed_then(bad)) as server:
        cfg = make_cfg(server, "eval.max_reasks=1", "endpoints.max_reasks=5")
        m = evaluate_dataset(dataset, responses, "describe", cfg)
    assert len([r for r in server.requests if question_of(r) == "Question p1-d0?"]) == 2  # eval.max_reasks wins
    assert [(f.sample_key, f.key, f.index) for f in m.judge_failures] == [("p1", "d0", 1)]
    assert "no valid ChecklistJudgeAnswer answer in 2 attempts" in m.judge_failures[0].problem
    failed = next(r for r in m.records if (r.sample_key, r.key) == ("p1", "d0"))
    assert (failed.status, failed.judge_answer, failed.correct) == ("judge_failed", None, False)
    assert (acc(m.overall.avg), acc(m.overall.diff)) == ((4, 10), (2, 5))

    out = tmp_path / "report"
    VIDIC.write_report(out, m, cfg=cfg, dataset_source="fixture", dataset_revision=None)
    summary = json.loads((out / "metrics.json").read_text())
    assert summary["counts"]["judge_failures"] == 1
    assert summary["metrics"]["judge_failures"][0]["key"] == "d0"
    report = (out / "report.md").read_text()
    assert "## Judge failures (counted wrong)" in report and "pair 1 (p1), item d0" in report
    assert "1 judge answer(s) stayed invalid" in VIDIC.format_table(m)
    rows = list(csv.DictReader((out / "checklist.csv").open(encoding="utf-8")))
    assert {(r["sample_key"], r["key"]): r["status"] for r in rows}["p1", "d0"] == "judge_failed"
    # what `viddiff eval` and `viddiff run` print last before exiting 1 (issue 22)
    assert VIDIC.incomplete_scores(m, out / "metrics.json") == (
        f"the scores are incomplete: the judge's answers stayed invalid for 1 checklist item in 1 of 4 samples "
        f"(counted wrong); see judge_failures in {out / 'metrics.json'}, then score again with more re-asks "
        "(--set eval.max_reasks=N) or another judge (--set vidic.judge.model=...)"
    )


def test_report_files(dataset, responses, make_cfg, tmp_path) -> None:
    with FakeOpenAIServer(fixed_judge) as server:
        cfg = make_cfg(server)
        m = evaluate_dataset(dataset, responses, "describe", cfg)
    out = tmp_path / "report"
    VIDIC.write_report(out, m, cfg=cfg, dataset_source="fixture", dataset_revision="rev1")
    assert sorted(p.name for p in out.iterdir()) == ["checklist.csv", "metrics.json", "report.md"]
    summary = json.loads((out / "metrics.json").read_text())
    assert (summary["mode"], summary["benchmark"], summary["prompt_version"]) == ("describe", "vidic", PROMPT_VERSION)
    assert summary["judge"]["model"] == "judge-model" and summary["judge"]["temperature"] is None
    assert summary["dataset"] == {"source": "fixture", "revision": "rev1"}
    assert summary["counts"] == {
        "samples": 4,
        "items": 10,
        "difference_items": 5,
        "similarity_items": 5,
        "empty_responses": 1,
        "judge_failures": 0,
        "overlap_samples": 1,
        "items_without_overlap": 7,
    }
    assert summary["metrics"]["without_overlap"]["sim"]["accuracy"] == pytest.approx(0.25)
    assert "records" not in summary["metrics"]
    rows = list(csv.DictReader((out / "checklist.csv").open(encoding="utf-8")))
    assert len(rows) == 10
    assert rows[0]["question"] == "Question p0-s0?" and rows[0]["correct"] == "True" and rows[0]["overlap"] == "True"
    report = (out / "report.md").read_text()
    assert report.startswith("# ViDiC-1K evaluation (describe)")
    assert "| all | 4 | 10 | 50.0 | 60.0 | 40.0 |" in report
    assert "| without VidDiffBench overlap | 3 | 7 | 42.9 | 66.7 | 25.0 |" in report
    assert "| playback technique | 1 | 1 | 0 | 100.0 | 100.0 | - |" in report
    assert "Gemini-2.5-Pro Avg 69.3" in report and "## Empty or missing responses" in report
    table = VIDIC.format_table(m)
    assert table.startswith(f"ViDiC-1K checklist accuracy (judge judge-model, prompt {PROMPT_VERSION})")
    assert "1 pair(s) with an empty or missing response" in table and "Per category (all pairs)" in table


def test_scripted_model_judges_by_stated_differences(dataset, make_cfg) -> None:
    """The shared scripted judge (json_object mode, found by its prompt wording) says yes only to stated differences."""
    items = dataset.checklists
    items["p0"] = [
        ChecklistItem(key="d0", kind="difference", category="background", correct_answer="yes",
                      question="Is the background pink in Video A, whereas it is light blue in Video B?"),
        ChecklistItem(key="s0", kind="similarity", category="camera", correct_answer="no",
                      question="Is the shot scale different between Video A and Video B?"),
        ChecklistItem(key="s1", kind="similarity", category="style", correct_answer="no",
                      question="Is the visual style different between Video A and Video B?"),
    ]
    text = "Background: in Video A the background is pink; in Video B it is light blue. Style: both videos share the same style."
    responses = {"p0": text, "p1": "", "p2": "", "p3": ""}
    with FakeOpenAIServer(ScriptedModel()) as server:
        m = evaluate_vidic(dataset, responses, make_cfg(server, "endpoints.response_format=json_object"))
    got = {r.key: r.judge_answer for r in m.records if r.sample_key == "p0"}
    assert got == {"d0": "yes", "s0": "no", "s1": "no"}
    assert all(r.response_format == {"type": "json_object"} for r in server.requests) and len(server.requests) == 3


def test_cli_eval_on_synthetic_vidic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """``viddiff eval --benchmark vidic`` on the synthetic fixture, responses in the ViDiC-1K repository format.

    Pairs 0 and 1 get a response stating exactly their differences, which the scripted judge credits on every
    item; pairs 2 and 3 get none (every item wrong, never judged).
    """
    import viddiff.benchmarks.vidic as vidic_plugin
    from viddiff.cli import main

    bench = tmp_path / "vidic"
    assert main(["-q", "data", "synth", "--benchmark", "vidic", "--out", str(bench), "--pairs", "4", "--seed", "1"]) == 0
    capsys.readouterr()
    items = json.loads((bench / "checklist.json").read_text())
    responses = [
        {
            "video1_path": it["video1_path"],
            "video2_path": it["video2_path"],
            "response": "\n".join(q["question"].replace("?", ".") for q in it["structured_analysis"]["Differences"]),
        }
        for it in items[:2]
    ]
    path = tmp_path / "responses.json"
    path.write_text(json.dumps(responses))
    out = tmp_path / "report"
    monkeypatch.setenv("VIDDIFF_TEST_KEY", "dummy")
    loads: list[bool] = []
    real_load = vidic_plugin.load_vidic

    def load_vidic(*args, fetch_videos: bool = True, **kwargs):
        loads.append(fetch_videos)
        return real_load(*args, fetch_videos=fetch_videos, **kwargs)

    monkeypatch.setattr(vidic_plugin, "load_vidic", load_vidic)
    with FakeOpenAIServer(ScriptedModel()) as server:
        rc = main(
            [
                "-q", "eval", "--benchmark", "vidic", "--dataset", str(bench), "--predictions", str(path),
                "--output", str(out),
                "--set", f"endpoints.default.base_url={server.base_url}",
                "--set", "endpoints.default.api_key_env=VIDDIFF_TEST_KEY",
                "--set", f"cache.path={tmp_path / 'cache.sqlite'}",
            ]
        )
    assert rc == 0
    assert loads == [False]  # scoring text never downloads the videos
    judged = [q for it in items[:2] for section in ("Similarities", "Differences") for q in it["structured_analysis"][section]]
    assert len(server.requests) == len(judged)
    rows = list(csv.DictReader((out / "checklist.csv").open(encoding="utf-8")))
    assert len(rows) == sum(len(s) for it in items for s in it["structured_analysis"].values())
    # an exact account of the differences is right on every item: differences stated, nothing else claimed
    assert all(r["correct"] == "True" for r in rows if r["index"] in ("0", "1"))
    assert all(r["status"] == "no_response" and r["correct"] == "False" for r in rows if r["index"] in ("2", "3"))
    summary = json.loads((out / "metrics.json").read_text())
    correct = len(judged)
    assert summary["metrics"]["overall"]["avg"]["correct"] == correct
    assert summary["counts"]["empty_responses"] == 2 and summary["judge"]["model"] == "gpt-5-mini"
    assert summary["dataset"]["source"].endswith("checklist.json")
    printed = capsys.readouterr().out
    assert printed.startswith("ViDiC-1K checklist accuracy") and f"{100 * correct / len(rows):.1f}" in printed


# ---------------------------------------------------------------- user templates (vidic.prompt_files)


def test_vidic_judge_uses_the_template_file_and_records_its_hash(dataset, responses, make_cfg, tmp_path) -> None:
    judge = tmp_path / "judge.txt"
    judge.write_text("TEXT<<{description}>> ASK<<{question}>> KIND<<{kind}>>", encoding="utf-8")

    def answer(req: ChatRequest) -> str:
        question = re.search(r"ASK<<(.*?)>>", req.text).group(1)
        return json.dumps({"answer": ANSWERS[question], "explanation": "from the table"})

    with FakeOpenAIServer(answer) as server:
        cfg = make_cfg(server, f"vidic.prompt_files.judge={judge}")
        metrics = evaluate_dataset(dataset, responses, "describe", cfg)
    assert server.requests and all(r.messages[1]["content"].startswith("TEXT<<") for r in server.requests)
    assert metrics.prompt_version == "custom"
    assert metrics.prompt_sha256 == vidic_templates({"judge": str(judge)}).sha256 != vidic_templates().sha256
    VIDIC.write_report(tmp_path / "out", metrics, cfg=cfg, dataset_source="fixture", dataset_revision=None)
    summary = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert summary["prompt_sha256"] == metrics.prompt_sha256 and summary["prompt_sources"]["judge"] == str(judge)


def test_judge_is_told_the_kind_of_an_item_never_the_answer_to_expect() -> None:
    from viddiff.benchmarks.vidic.prompts import judge_prompt

    similarity = judge_prompt("In video A the dog runs left.", "Does the dog run in the same direction?", "similarity")
    difference = judge_prompt("In video A the dog runs left.", "Does the dog run in the same direction?", "difference")
    # the two prompts differ only in the kind's name: nothing hints at "same" for similarity items
    changed = {w for w in set(similarity.split()) ^ set(difference.split())}
    assert changed <= {"(similarity):", "(difference):", "similarity", "difference"}
    assert "expected" not in similarity.lower()
    # vague statements do not earn a difference item: the detail asked about must be given
    assert "specific detail the question asks about" in similarity
    assert "gist" not in similarity and "less specific" not in similarity
