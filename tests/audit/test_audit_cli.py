"""``viddiff audit`` end to end through the real local HTTP server: exact numbers on known answers.

A position-biased VLM (always ``a``) and the scripted VLM (answers by comparing the brightness of the two
videos' images, so its answers follow the videos) bound every number the audit reports.
"""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from viddiff.config import DataConfig
from viddiff.data.viddiffbench import load_dataset
from viddiff.store import ResultsStore
from viddiff.testing.fake_openai import FakeOpenAIServer, HTTPFault
from viddiff.testing.responders import FailingWhen, ScriptedModel


STAND_IN_HEAD = "NOTE: stand-ins, not models, produced these results"


def load_json(path):
    return json.loads(path.read_text())


def _labels(synth_dir) -> list[str]:
    """Ground truth of the closed task's statements, in dataset order."""
    samples = load_dataset(DataConfig(dataset=str(synth_dir)))
    return [s.labels[d.key] for s in samples for d in s.closed_differences()]


def _overall(out) -> dict:
    return load_json(out / "metrics.json")["metrics"]["overall"]


@pytest.mark.slow
def test_always_a_is_caught_and_a_second_audit_on_the_same_cache_calls_nothing(
    audit, always_a_server, synth_dir, tmp_path, capsys
):
    out = tmp_path / "audit"
    start = len(always_a_server.requests)
    assert audit(always_a_server, out, "--mode", "closed") == 0
    assert len(always_a_server.requests) > start
    printed = capsys.readouterr().out

    gt = _labels(synth_dir)
    overall = _overall(out)
    assert overall["n_differences"] == len(gt) == 8
    assert (overall["swap_flip_rate"]["value"], overall["swap_flip_rate"]["n"]) == (0.0, 8)
    assert (overall["same_video_decisive_rate"]["value"], overall["same_video_decisive_rate"]["n"]) == (1.0, 8)
    assert overall["a_share"]["value"] == 1.0 and overall["same_video_a_share"]["value"] == 1.0
    share_a = gt.count("a") / len(gt)
    assert overall["gt_a_share"] == share_a and overall["a_share_diff"]["value"] == pytest.approx(1 - share_a)
    # always "a" scores the ground truth's share of a, and the flipped truth's share in the swapped order
    assert overall["accuracy_original"]["value"] == share_a
    assert overall["accuracy_swapped"]["value"] == 1 - share_a
    assert overall["accuracy_debiased"]["value"] == 0.5 and overall["pair_accuracy"]["value"] == 0.0

    # the released differencer options are a/b: the report says the same-video rate is 1.0 by construction
    summary = load_json(out / "metrics.json")
    assert summary["same_video_forced_choice"] is True and summary["method"] == "viddiff"
    assert any("differencer.options=abc" in note for note in summary["notes"])
    assert "by construction" in (out / "report.md").read_text() and "by construction" in printed
    assert "Answer-consistency audit (closed)" in printed and "worst first" in printed

    # each variant is an ordinary run with its own files and its sanity flag in its config
    for variant, flags in {"original": (False, False), "swapped": (True, False), "same": (False, True)}.items():
        config = (out / variant / "config.yaml").read_text()
        assert f"swap_videos: {str(flags[0]).lower()}" in config and f"same_video: {str(flags[1]).lower()}" in config
        assert (out / variant / "predictions.json").exists() and (out / variant / "metrics.json").exists()
    rows = list(csv.DictReader((out / "differences.csv").open()))
    assert [r["gt"] for r in rows] == gt
    assert {(r["original"], r["swapped"], r["swapped_flipped_back"], r["same"], r["flipped"]) for r in rows} == {
        ("a", "a", "b", "a", "False")
    }

    # a fresh output directory on the same cache: not one model call, CLIP included, and the same numbers
    again = len(always_a_server.requests)
    assert audit(always_a_server, tmp_path / "again", "--mode", "closed") == 0
    assert len(always_a_server.requests) == again
    assert load_json(tmp_path / "again" / "original" / "usage.json")["clip"]["image_forward"] == 0
    assert _overall(tmp_path / "again") == overall
    # resuming the finished audit calls nothing either; without --resume it is refused and left as it was
    assert audit(always_a_server, out, "--mode", "closed", "--resume") == 0
    assert len(always_a_server.requests) == again
    before = {p: p.read_bytes() for p in out.rglob("*.jsonl")}
    capsys.readouterr()
    assert audit(always_a_server, out, "--mode", "closed") == 2
    err = capsys.readouterr().err
    assert "already holds an audit" in err and "--resume" in err and len(err.strip().splitlines()) == 1
    assert {p: p.read_bytes() for p in out.rglob("*.jsonl")} == before


@pytest.mark.slow
def test_answers_that_follow_the_videos_flip_every_time_and_see_no_difference_in_identical_videos(
    audit, scripted_server, synth_dir, tmp_path, capsys
):
    out = tmp_path / "audit"
    start = len(scripted_server.requests)
    assert audit(scripted_server, out, "--mode", "closed", "--set", "differencer.options=abc") == 0
    # stand-ins produced these numbers: said once under the table, in report.md and in metrics.json (issue 32)
    printed = capsys.readouterr().out
    assert printed.count(STAND_IN_HEAD) == 1 and printed.index("swap") < printed.index(STAND_IN_HEAD)
    assert "  - CLIP (viddiff-test-tiny-clip): random weights" in printed
    assert STAND_IN_HEAD in (out / "report.md").read_text()
    assert any(line.startswith("stand-in: CLIP (viddiff-test-tiny-clip)") for line in load_json(out / "metrics.json")["stand_ins"])
    overall = _overall(out)
    assert (overall["swap_flip_rate"]["value"], overall["swap_flip_rate"]["n"]) == (1.0, 8)
    assert (overall["same_video_decisive_rate"]["value"], overall["same_video_decisive_rate"]["n"]) == (0.0, 8)
    assert overall["same_video_a_share"]["n"] == 0
    # consistent answers are right or wrong in both orders alike
    accuracy = overall["accuracy_original"]["value"]
    assert overall["accuracy_swapped"]["value"] == overall["pair_accuracy"]["value"] == accuracy
    summary = load_json(out / "metrics.json")
    assert summary["same_video_forced_choice"] is False and summary["notes"] == []
    # the three runs shared their proposals: one stage plan (stages, refinement) per sample, asked once
    stage_plans = [r for r in scripted_server.requests[start:] if (r.json_schema or {}).get("title") == "StagesAnswer"]
    assert len(stage_plans) == 2 * 3
    for variant in ("swapped", "same"):
        assert all(r.usage["proposer"].calls == 0 for r in ResultsStore(out / variant).load().values())


def test_the_lmm_baseline_flips_with_the_videos_and_is_forced_to_choose(
    audit, scripted_server, always_a_server, tmp_path
):
    out = tmp_path / "scripted"
    assert audit(scripted_server, out, "--mode", "closed", "--method", "baseline", "--model", "fake-vlm") == 0
    overall = _overall(out)
    assert (overall["swap_flip_rate"]["value"], overall["swap_flip_rate"]["n"]) == (1.0, 8)
    # no "c" in its schema: identical videos always get a or b (the scripted model picks a when it sees none)
    assert overall["same_video_decisive_rate"]["value"] == 1.0 and overall["same_video_a_share"]["value"] == 1.0
    summary = load_json(out / "metrics.json")
    assert summary["method"] == "lmm:fake-vlm" and summary["same_video_forced_choice"] is True
    assert any("LMM baseline answers a or b only" in note for note in summary["notes"])

    biased = tmp_path / "biased"
    assert audit(always_a_server, biased, "--mode", "closed", "--method", "baseline", "--model", "fake-vlm",
                 cache="biased.sqlite") == 0
    overall = _overall(biased)
    assert overall["swap_flip_rate"]["value"] == 0.0 and overall["a_share"]["value"] == 1.0
    assert overall["same_video_decisive_rate"]["value"] == 1.0 and overall["pair_accuracy"]["value"] == 0.0


@pytest.mark.slow
def test_open_mode_asks_about_the_original_runs_own_statements(audit, scripted_server, synth_dir, tmp_path):
    out = tmp_path / "audit"
    assert audit(scripted_server, out, "--mode", "open", "--set", "differencer.options=abc") == 0
    original = ResultsStore(out / "original").load()
    statements = {k: [(p.key, p.description) for p in r.predictions] for k, r in original.items()}
    assert all(r.mode == "open" for r in original.values()) and sum(map(len, statements.values())) > 0
    for variant in ("swapped", "same"):
        results = ResultsStore(out / variant).load()
        assert {k: [(p.key, p.description) for p in r.predictions] for k, r in results.items()} == statements
        assert all(r.mode == "closed" for r in results.values())
        # the closed-mode runs re-derived the same stage plan and links from the cache
        assert all(r.usage["proposer"].calls == 0 and r.proposal == original[k].proposal for k, r in results.items())
    overall = _overall(out)
    n = sum(map(len, statements.values()))
    assert (overall["swap_flip_rate"]["value"], overall["swap_flip_rate"]["n"]) == (1.0, n)
    assert (overall["same_video_decisive_rate"]["value"], overall["same_video_decisive_rate"]["n"]) == (0.0, n)
    # proposed statements have no ground truth
    assert overall["gt_a_share"] is None and overall["accuracy_original"]["n"] == overall["pair_accuracy"]["n"] == 0
    assert any("Open mode" in note for note in load_json(out / "metrics.json")["notes"])


def test_open_mode_baseline_that_always_says_a(audit, always_a_server, tmp_path):
    out = tmp_path / "audit"
    assert audit(always_a_server, out, "--mode", "open", "--method", "baseline", "--model", "fake-vlm") == 0
    overall = _overall(out)
    assert overall["n_differences"] > 0 and overall["swap_flip_rate"]["value"] == 0.0
    assert overall["a_share"]["value"] == 1.0 and overall["same_video_decisive_rate"]["value"] == 1.0


@pytest.mark.parametrize(
    "args, message",
    [
        (["--mode", "closed", "--benchmark", "vidic"], "not vidic"),
        (["--mode", "closed", "--model", "gpt-4o"], "--method baseline"),
        (["--mode", "closed", "--set", "run.swap_videos=true"], "remove run.swap_videos"),
        (["--mode", "closed", "--set", "cache.enabled=false"], "through the cache"),
    ],
)
def test_bad_requests_are_one_line_and_call_nothing(audit, scripted_server, tmp_path, capsys, args, message):
    start = len(scripted_server.requests)
    assert audit(scripted_server, tmp_path / "audit", *args) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert len(scripted_server.requests) == start and not (tmp_path / "audit" / "original").exists()


def _identical_halves(req) -> bool:
    """A baseline request about a video and itself: A's frames and B's are the same images."""
    pixels = [np.asarray(p.image) for p in req.images]
    half = len(pixels) // 2
    return half > 0 and all(np.array_equal(a, b) for a, b in zip(pixels[:half], pixels[half:]))


def test_a_failed_sample_is_left_unanswered_reported_and_resumed(audit, tmp_path, capsys):
    """The identical-video request of one sample fails (HTTP 400): the audit still scores the rest, says
    so, exits 1; once the endpoint is fixed, --resume completes it with the remaining calls only."""
    responder = FailingWhen(
        ScriptedModel(),
        lambda r: "basketball free throw" in r.text and _identical_halves(r),
        lambda r: _raise(HTTPFault(400, "context length exceeded", code="context_length_exceeded")),
    )
    out = tmp_path / "audit"
    args = ("--mode", "closed", "--method", "baseline", "--model", "fake-vlm")
    with FakeOpenAIServer(responder) as server:
        assert audit(server, out, *args) == 1
        printed = capsys.readouterr().out
        assert "1 failed sample in the audit's runs" in printed and "--resume" in printed
        summary = load_json(out / "metrics.json")
        assert summary["runs"]["same"]["failed_samples"] == 1 and summary["runs"]["swapped"]["failed_samples"] == 0
        assert any("Failed samples: 1 in same/" in note for note in summary["notes"])
        overall = summary["metrics"]["overall"]
        # the failed sample's 3 statements have no same-video answer: left out of that rate, and counted
        assert overall["unanswered"] == {"original": 0, "swapped": 0, "same": 3}
        assert overall["same_video_decisive_rate"]["n"] == 5 and overall["swap_flip_rate"]["n"] == 8
        assert [r["same"] for r in csv.DictReader((out / "differences.csv").open())].count("") == 3

        responder.active = False
        calls = len(server.requests)
        assert audit(server, out, *args, "--resume") == 0
        assert len(server.requests) == calls + 1  # only the failed sample is asked again
    overall = _overall(out)
    assert overall["unanswered"]["same"] == 0 and overall["same_video_decisive_rate"]["n"] == 8
    assert not any("Failed" in note for note in load_json(out / "metrics.json")["notes"])


def _raise(exc: Exception):
    raise exc


def test_answers_that_stay_invalid_make_the_audit_say_so_and_exit_1(audit, tmp_path, capsys):
    """As ``viddiff run`` does (issue 22): a differencer that never answers validly is not a clean audit."""
    responder = FailingWhen(ScriptedModel(), lambda r: "Statement:" in r.text, lambda r: '{"verdict": "unsure"}')
    with FakeOpenAIServer(responder) as server:
        code = audit(server, tmp_path / "audit", "--mode", "closed", "--set", "endpoints.max_reasks=0")
    last = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert code == 1
    assert last.startswith("viddiff: answers stayed invalid in the audit's runs: ") and "original: " in last
    assert "their predictions are null" in last
