"""Open-mode scoring end to end through the fake OpenAI-compatible server (real HTTP, real openai client).

The fake judge matches statements by their first word (the "property") and
calls a pair opposite when the last words differ ("depth more" vs "depth less").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Optional

import pytest

from viddiff.config import Config
from viddiff.errors import PredictionFormatError
from viddiff.eval import evaluate, write_report
from viddiff.eval.prompts import judge_templates
from viddiff.eval.open import OpenMetrics
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer

REASK = "Your previous answer was not valid"


def _block(text: str, start: str, end: str):
    return json.loads(text[text.index(start) + len(start) : text.index(end)])


def honest_matching(req: ChatRequest) -> dict[str, Optional[str]]:
    """gt key -> first unused pred key with the same first word."""
    text = req.messages[1]["content"]
    gt = _block(text, "G (ground truth):\n", "\n\nP (predicted):")
    pred = _block(text, "P (predicted):\n", "\n\nFor each")
    used: set[str] = set()
    out: dict[str, Optional[str]] = {}
    for gk, gdesc in gt.items():
        hit = next((pk for pk, pdesc in pred.items() if pk not in used and pdesc.split()[0] == gdesc.split()[0]), None)
        if hit:
            used.add(hit)
        out[gk] = hit
    return out


def honest_flips(req: ChatRequest) -> list[int]:
    pairs = _block(req.messages[1]["content"], "Pairs:\n", "\n\nAnswer with")
    return [int(p["first"].split()[-1] != p["second"].split()[-1]) for p in pairs]


def is_match(req: ChatRequest) -> bool:
    return req.model == "judge-model"


def matches_json(m: dict[str, Optional[str]]) -> str:
    return json.dumps({"matches": m})


def make_responder(match_override: Optional[Callable[[ChatRequest, dict], str]] = None,
                   flip_override: Optional[Callable[[ChatRequest, list], str]] = None):
    def respond(req: ChatRequest) -> str:
        if is_match(req):
            m = honest_matching(req)
            return match_override(req, m) if match_override else matches_json(m)
        flips = honest_flips(req)
        return flip_override(req, flips) if flip_override else json.dumps({"results": flips})

    return respond


@pytest.fixture
def run_eval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("VIDDIFF_TEST_KEY", "dummy")

    def run(server: FakeOpenAIServer, samples, predictions, **overrides) -> OpenMetrics:
        sets = [
            f"endpoints.default.base_url={server.base_url}",
            "endpoints.default.api_key_env=VIDDIFF_TEST_KEY",
            "endpoints.backoff_base_s=0",
            "eval.judge.model=judge-model",
            "eval.flip.model=flip-model",
            f"cache.path={tmp_path / 'cache.sqlite'}",
            *[f"{k}={v}" for k, v in overrides.items()],
        ]
        return evaluate(samples, predictions, "open", Config().with_overrides(sets))

    return run


def _pred(desc: str, letter: Optional[str]) -> dict:
    return {"description": desc, "prediction": letter}


@pytest.fixture
def benchmark(make_sample):
    s0 = make_sample(
        "s0",
        {"0": "a", "1": "b", "2": "c", "3": None},
        descriptions={"0": "depth more", "1": "stance more", "2": "speed more", "3": "tempo more"},
        n_open=4,
    )
    s1 = make_sample(
        "s1",
        {"0": "a", "1": "b", "2": "b"},
        split="hard",
        action="diving_0",
        action_name="dive",
        descriptions={"0": "twist more", "1": "splash less", "2": "arch more"},
        n_open=3,
    )
    preds = [
        {
            "0": _pred("depth less", "b"),  # opposite phrasing -> flipped to a -> found
            "1": _pred("stance more", "a"),  # wrong letter
            "2": _pred("speed more", "a"),  # matches a c-labelled difference: not counted
            "3": _pred("elbow more", "a"),  # matches nothing
        },
        {"0": _pred("splash less", "b"), "1": _pred("arch less", "a")},  # twist not matched; arch flipped -> b
    ]
    return [s0, s1], preds


def test_recall_with_flips(run_eval, benchmark) -> None:
    with FakeOpenAIServer(make_responder()) as server:
        m = run_eval(server, *benchmark)
    assert (m.splits["easy"].found, m.splits["easy"].n) == (1, 2)
    assert (m.splits["hard"].found, m.splits["hard"].n) == (2, 3)
    assert m.avg == pytest.approx((1 / 2 + 2 / 3) / 2)
    o = m.overall
    assert (o.n, o.found, o.wrong_letter, o.not_matched, o.flip_unverified) == (5, 3, 1, 1, 0)
    assert o.matched_rate == pytest.approx(4 / 5)
    assert (m.n_predictions, m.unmatched_predictions, m.n_differences) == (6, 1, 6)
    rec = {(r.sample_key, r.key): r for r in m.records}
    assert (rec["s0", "0"].pred_key, rec["s0", "0"].flipped, rec["s0", "0"].final_letter) == ("0", True, "a")
    assert rec["s0", "0"].outcome == "found"
    assert rec["s0", "1"].outcome == "wrong_letter" and rec["s0", "1"].flipped is False
    assert rec["s0", "2"].outcome == "not_counted" and rec["s0", "2"].pred_key == "2"
    assert ("s0", "3") not in rec  # null-labelled differences are not part of open evaluation
    assert rec["s1", "0"].outcome == "not_matched" and rec["s1", "0"].pred_key is None
    assert rec["s1", "2"].final_letter == "b"
    assert {a.action: a.stats.found for a in m.by_action} == {"fitness_0": 1, "diving_0": 2}
    # one matching call per sample, one flip batch per sample; temperature 0 everywhere
    assert sorted(r.model for r in server.requests) == ["flip-model", "flip-model", "judge-model", "judge-model"]
    assert all(r.body["temperature"] == 0 for r in server.requests)
    match_s0 = next(r for r in server.requests if is_match(r) and "depth more" in r.text)
    assert '"3"' not in match_s0.text.split("P (predicted)")[0].split("G (ground truth)")[1]
    assert m.judge_issues == [] and m.usage["eval_match"].calls == 2


def test_rerun_uses_cache_and_is_identical(run_eval, benchmark) -> None:
    with FakeOpenAIServer(make_responder()) as server:
        first = run_eval(server, *benchmark)
        calls = len(server.requests)
        second = run_eval(server, *benchmark)
    assert calls == 4
    assert len(server.requests) == calls  # zero HTTP calls on the re-run
    assert second.records == first.records
    assert second.splits == first.splits and second.avg == first.avg
    assert second.usage["eval_match"].cache_hits == 2 and second.usage["eval_match"].calls == 0


def _dup(req: ChatRequest, m: dict) -> str:
    return matches_json({**m, "1": m["0"]})


def _unknown_pred(req: ChatRequest, m: dict) -> str:
    return matches_json({**m, "0": "9"})


def _missing_gt(req: ChatRequest, m: dict) -> str:
    return matches_json({k: v for k, v in m.items() if k != "1"})


def _extra_gt(req: ChatRequest, m: dict) -> str:
    return matches_json({**m, "7": None})


def _garbage(req: ChatRequest, m: dict) -> str:
    return "I think they match."


BAD_MATCHINGS = [
    (_dup, ["0", "1"], "is matched to 2 ground-truth keys"),
    (_unknown_pred, ["0"], "pred_key '9'"),
    (_missing_gt, ["1"], "gt_key '1' is missing"),
    (_extra_gt, [], "gt_key '7' is not a key of G"),
    (_garbage, ["0", "1", "2"], "Invalid JSON"),
]


@pytest.mark.parametrize(("bad", "offending", "problem"), BAD_MATCHINGS, ids=[b[0].__name__ for b in BAD_MATCHINGS])
def test_invalid_matching_is_reasked_then_fixed(run_eval, benchmark, bad, offending, problem) -> None:
    def once_bad_for_s0(req: ChatRequest, m: dict) -> str:
        return bad(req, m) if "depth more" in req.text and REASK not in req.text else matches_json(m)

    with FakeOpenAIServer(make_responder(match_override=once_bad_for_s0)) as server:
        m = run_eval(server, *benchmark)
    judge_s0 = [r for r in server.requests if is_match(r) and "depth more" in r.text]
    assert len(judge_s0) == 2
    assert problem in judge_s0[1].text and REASK in judge_s0[1].text
    assert m.judge_issues == []
    assert m.overall.found == 3


@pytest.mark.parametrize(("bad", "offending", "problem"), BAD_MATCHINGS, ids=[b[0].__name__ for b in BAD_MATCHINGS])
def test_invalid_matching_after_reasks_leaves_offending_keys_unmatched(run_eval, benchmark, bad, offending, problem) -> None:
    def bad_for_s0(req: ChatRequest, m: dict) -> str:
        return bad(req, m) if "depth more" in req.text else matches_json(m)

    with FakeOpenAIServer(make_responder(match_override=bad_for_s0)) as server:
        m = run_eval(server, *benchmark, **{"eval.max_reasks": 1})
    assert sum(1 for r in server.requests if is_match(r) and "depth more" in r.text) == 2  # 1 + max_reasks
    [issue] = m.judge_issues
    assert (issue.sample_key, issue.stage, issue.gt_keys) == ("s0", "match", offending)
    assert problem in issue.problem
    rec = {r.key: r for r in m.records if r.sample_key == "s0"}
    for key in offending:
        assert rec[key].pred_key is None and "judge answer invalid" in rec[key].note
    honest = {"0": "0", "1": "1", "2": "2"}
    for key in set(honest) - set(offending):
        assert rec[key].pred_key == honest[key]
    s1 = [r for r in m.records if r.sample_key == "s1"]
    assert sum(r.correct for r in s1) == 2


def test_flip_batches_validated_per_batch(run_eval, benchmark) -> None:
    """Batches of 2 for s0's 3 matched pairs; the first answer of each batch is one result short."""

    def short_first(req: ChatRequest, flips: list) -> str:
        return json.dumps({"results": flips if REASK in req.text else flips[:-1]})

    with FakeOpenAIServer(make_responder(flip_override=short_first)) as server:
        m = run_eval(server, *benchmark, **{"eval.flip_batch_size": 2})
    flips = [r for r in server.requests if not is_match(r)]
    sizes = sorted(len(_block(r.messages[1]["content"], "Pairs:\n", "\n\nAnswer with")) for r in flips if REASK not in r.text)
    assert sizes == [1, 2, 2]  # s0: 2 + 1, s1: 2
    reasks = [r.text for r in flips if REASK in r.text]
    assert len(reasks) == 3
    assert any("expected exactly 2 result(s) (one per pair), got 1" in t for t in reasks)
    assert any("expected exactly 1 result(s) (one per pair), got 0" in t for t in reasks)
    assert m.judge_issues == [] and m.overall.found == 3


def test_flip_batch_invalid_after_reasks_is_not_credited(run_eval, benchmark) -> None:
    def always_short_for_depth(req: ChatRequest, flips: list) -> str:
        return json.dumps({"results": flips[:-1] if "depth more" in req.text else flips})

    with FakeOpenAIServer(make_responder(flip_override=always_short_for_depth)) as server:
        m = run_eval(server, *benchmark, **{"eval.flip_batch_size": 2, "eval.max_reasks": 0})
    [issue] = m.judge_issues
    assert (issue.stage, issue.sample_key, issue.gt_keys) == ("flip", "s0", ["0", "1"])
    rec = {(r.sample_key, r.key): r for r in m.records}
    assert rec["s0", "0"].outcome == "flip_unverified" and not rec["s0", "0"].correct
    assert rec["s0", "0"].flipped is None and rec["s0", "0"].final_letter is None
    assert rec["s0", "2"].flipped is False  # the other batch of s0 was fine
    assert (m.overall.found, m.overall.flip_unverified, m.overall.wrong_letter) == (2, 2, 0)


def test_n_diff_violation_is_an_error_listing_samples(run_eval, make_sample) -> None:
    samples = [make_sample(f"s{i}", {"0": "a"}, n_open=1, descriptions={"0": "depth more"}) for i in range(3)]
    preds = [{"0": _pred("depth more", "a")}, {"0": _pred("depth more", "a"), "1": _pred("x y", "b")}, {}]
    with FakeOpenAIServer(make_responder()) as server:
        with pytest.raises(PredictionFormatError) as info:
            run_eval(server, samples, preds)
    assert "item 1 (sample 's1'): 2 differences, N_diff is 1" in str(info.value)
    assert "eval.n_diff_policy=truncate" in str(info.value)
    assert server.requests == []


def test_n_diff_truncation_keeps_first_keys_in_key_order(run_eval, make_sample) -> None:
    samples = [make_sample("s0", {"0": "a", "1": "b"}, n_open=2, descriptions={"0": "depth more", "1": "knee more"})]
    preds = [{"10": _pred("depth more", "a"), "2": _pred("stance more", "a"), "1": _pred("knee more", "b")}]
    with FakeOpenAIServer(make_responder()) as server:
        m = run_eval(server, samples, preds, **{"eval.n_diff_policy": "truncate"})
    [t] = m.truncations
    assert (t.given, t.allowed, t.dropped_keys) == (3, 2, ["10"])
    judge = next(r for r in server.requests if is_match(r))
    assert "depth more" not in judge.text.split("P (predicted)")[1].split("For each")[0]
    assert m.n_predictions == 2
    assert m.overall.found == 1  # "depth" was dropped, "knee" found


def test_sample_without_predictions_makes_no_judge_call(run_eval, make_sample) -> None:
    samples = [make_sample("s0", {"0": "a", "1": None}, descriptions={"0": "depth more"})]
    with FakeOpenAIServer(make_responder()) as server:
        m = run_eval(server, samples, [{}])
    assert server.requests == []
    assert (m.overall.n, m.overall.not_matched, m.overall.recall) == (1, 1, 0.0)


# ---------------------------------------------------------------- user templates (eval.prompt_files)

MATCH = """Action: {action}. Match the experts' differences to the system's ones.
Experts >>>{gt}<<< System >>>{pred}<<< (keys {gt_keys} / {pred_keys})
Answer like { "matches": { "0": null } }."""
FLIP = "Are these opposites? There are {n} pairs >>>{pairs}<<<"
SYSTEM = "You are my own judge."


def _between(text: str, start: str, end: str):
    return json.loads(text[text.index(start) + len(start) : text.index(end, text.index(start) + len(start))])


def my_judge(req: ChatRequest) -> str:
    """The fake judge of test_eval_open, reading the user's template layout instead of the built-in one."""
    text = req.messages[1]["content"]
    if req.model == "judge-model":
        gt, pred = _between(text, "Experts >>>", "<<<"), _between(text, "System >>>", "<<<")
        used, matches = set(), {}
        for gk, gdesc in gt.items():
            hit = next((pk for pk, d in pred.items() if pk not in used and d.split()[0] == gdesc.split()[0]), None)
            used.add(hit)
            matches[gk] = hit
        return json.dumps({"matches": matches})
    pairs = _between(text, "pairs >>>", "<<<")
    return json.dumps({"results": [int(p["first"].split()[-1] != p["second"].split()[-1]) for p in pairs]})


def test_open_judge_uses_the_template_files_and_records_their_hash(run_eval, benchmark, tmp_path: Path) -> None:
    files = {"match": MATCH, "flip": FLIP, "system": SYSTEM}
    for name, text in files.items():
        (tmp_path / f"{name}.txt").write_text(text, encoding="utf-8")
    sets = {f"eval.prompt_files.{name}": str(tmp_path / f"{name}.txt") for name in files}
    with FakeOpenAIServer(my_judge) as server:
        custom = run_eval(server, *benchmark, **sets)
    with FakeOpenAIServer(make_responder()) as server_builtin:
        built_in = run_eval(server_builtin, *benchmark)

    assert all(r.messages[0]["content"] == SYSTEM for r in server.requests)
    match_reqs = [r for r in server.requests if r.model == "judge-model"]  # one per sample, in any order
    assert all("Experts >>>" in r.text and '{ "matches": { "0": null } }' in r.text for r in match_reqs)
    assert any("a person performs a squat" in r.text for r in match_reqs)
    # same judge semantics in other words: the same outcome for every ground-truth difference
    assert [r.outcome for r in custom.records] == [r.outcome for r in built_in.records]
    assert custom.prompt_version == "custom" and built_in.prompt_version == "viddiff-eval-3"
    expected = judge_templates({name: str(tmp_path / f"{name}.txt") for name in files})
    assert custom.prompt_sha256 == expected.sha256 != built_in.prompt_sha256 == judge_templates().sha256
    out = tmp_path / "report"  # metrics.json: the summary carries hash and sources next to the version
    write_report(out, custom, cfg=Config(), dataset_source="fixture", dataset_revision=None)
    summary = json.loads((out / "metrics.json").read_text())
    assert summary["prompt_sha256"] == expected.sha256 and summary["prompt_version"] == "custom"
    assert summary["prompt_sources"]["match"] == str(tmp_path / "match.txt")
