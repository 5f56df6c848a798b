"""Per-sample isolation in `viddiff run` (issue 11, items 1-3), through the real local HTTP server.

A sample's failure is recorded for it alone (errors.json with sample, stage and the server's message,
null predictions, exit 1, metrics saying how many failed); only an error every sample would hit stops
the run, with one line; `--resume` retries failed samples, keeps finished ones, and the calls failed
attempts made stay in usage.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from viddiff.cli import main
from viddiff.data.synthetic import write_synthetic_benchmark
from viddiff.store import ResultsStore
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer, FaultPlan, HTTPFault
from viddiff.testing.responders import FailingWhen, ScriptedModel

POISON = "POISONED"
CONTEXT_LENGTH = "This model's maximum context length is 128000 tokens; your messages resulted in 950000 tokens"
STAGES_PROMPT = "Break the action into its sub-action stages"


def _sets(server: FakeOpenAIServer, cache: Path, *extra: str) -> list[str]:
    items = [*offline_overrides(server.base_url, str(cache)), "endpoints.backoff_max_s=0.05", *extra]
    return [x for item in items for x in ("--set", item)]


def _run(dataset: Path, out: Path, sets: list[str], *extra: str, mode: str = "closed", command: str = "run") -> int:
    model = ["--model", "fake-vlm"] if command == "baseline" else []
    return main(["-q", command, *model, "--dataset", str(dataset), "--mode", mode, "--output", str(out), *sets, *extra])


def _error_line(code: int, err: str) -> str:
    assert code == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("viddiff:")]
    assert len(lines) == 1, err
    return lines[0]


def _json(path: Path):
    return json.loads(path.read_text())


def _poison_row(index: int):
    def edit(rows: list[dict]) -> None:
        rows[index]["action_description"] = f"{POISON} {rows[index]['action_description']}"

    return edit


def _refuse_poisoned(req: ChatRequest):
    raise HTTPFault(400, CONTEXT_LENGTH, code="context_length_exceeded")


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")


def test_http_400_fails_only_its_sample_and_resume_completes_it(env, copy_dataset, tmp_path, capsys):
    dataset = copy_dataset(_poison_row(1))
    responder = FailingWhen(ScriptedModel(), lambda r: POISON in r.text, _refuse_poisoned)
    out, clean = tmp_path / "run", tmp_path / "clean"
    with FakeOpenAIServer(responder) as server:
        sets = _sets(server, tmp_path / "cache.sqlite")
        assert _run(dataset, out, sets) == 1
        captured = capsys.readouterr()
        assert "Traceback" not in captured.err and "1 of 3 samples failed" in captured.out

        samples = [json.loads(line) for line in (dataset / "dataset.jsonl").read_text().splitlines()]
        [error] = _json(out / "errors.json")
        assert error["sample_key"] == samples[1]["sample_key"] and error["index"] == 1
        assert (error["stage"], error["kind"], error["status"]) == ("proposer", "endpoint", 400)
        assert CONTEXT_LENGTH in error["server_message"] and "HTTP 400" in error["error"]
        predictions = _json(out / "predictions.json")
        labels = json.loads(samples[1]["differences_gt"])
        assert predictions[1] == {k: None for k, v in labels.items() if v in ("a", "b")}
        assert None not in predictions[0].values() and None not in predictions[2].values()
        metrics = _json(out / "metrics.json")
        assert metrics["counts"]["failed_samples"] == 1 and metrics["failed_samples"] == [samples[1]["sample_key"]]
        assert "1 of 3 samples failed" in (out / "report.md").read_text()
        assert len(ResultsStore(out).load()) == 2

        responder.active = False  # the endpoint (or the data) is fixed
        assert _run(dataset, out, sets, "--resume") == 0
        assert _run(dataset, clean, _sets(server, tmp_path / "clean.sqlite")) == 0
    assert not (out / "errors.json").exists()
    assert _json(out / "predictions.json") == _json(clean / "predictions.json")
    assert len((out / "samples.jsonl").read_bytes().splitlines()) == 3
    assert "failed_samples" not in _json(out / "metrics.json")["counts"]


def test_calls_of_failed_samples_stay_in_usage_across_resume(env, synth_dir, tmp_path, capsys):
    """Every sample fails (invalid answers after the re-asks): the run still ends with metrics, exit 1, and
    usage.json counts exactly the calls the server answered, before and after a resume."""
    responder = FailingWhen(ScriptedModel(), lambda r: STAGES_PROMPT in r.text, lambda r: '{"stages": "none"}')
    out = tmp_path / "run"
    with FakeOpenAIServer(responder) as server:
        sets = _sets(server, tmp_path / "cache.sqlite")
        assert _run(synth_dir, out, sets) == 1
        errors = _json(out / "errors.json")
        assert len(errors) == 3 and {e["kind"] for e in errors} == {"invalid_answer"}
        assert {e["stage"] for e in errors} == {"proposer"} and all('"none"' in e["last_answer"] for e in errors)
        assert _json(out / "metrics.json")["counts"]["failed_samples"] == 3
        usage = _json(out / "usage.json")
        assert usage["by_stage"]["proposer"]["calls"] == len(server.requests) > 0
        assert usage["n_samples"] == 0 and usage["failed_attempts"] == 3

        responder.active = False
        assert _run(synth_dir, out, sets, "--resume") == 0
        usage = _json(out / "usage.json")
        total_calls = sum(stage["calls"] for stage in usage["by_stage"].values())
        assert total_calls == len(server.requests)
    assert usage["n_samples"] == 3 and usage["failed_attempts"] == 3
    assert not (out / "errors.json").exists()


def test_unknown_model_stops_the_run_at_once_and_resume_finishes_it(env, synth_dir, tmp_path, capsys):
    """A 404 from a model that never answered will fail every sample: one line, exit 2, paid calls kept."""
    missing = lambda r: r.model == "missing-vlm"  # noqa: E731
    responder = FailingWhen(ScriptedModel(), missing, lambda r: _raise(HTTPFault(404, "The model `missing-vlm` does not exist")))
    out = tmp_path / "run"
    with FakeOpenAIServer(responder) as server:
        sets = _sets(server, tmp_path / "cache.sqlite", "differencer.model=missing-vlm")
        line = _error_line(_run(synth_dir, out, sets), capsys.readouterr().err)
        assert "'missing-vlm' not found" in line and server.base_url in line
        assert sum(missing(r) for r in server.requests) <= 8  # not one per difference of every sample
        assert not (out / "predictions.json").exists() and not ResultsStore(out).load()
        proposer_calls = sum(not missing(r) for r in server.requests)
        assert _json(out / "usage.json")["by_stage"]["proposer"]["calls"] == proposer_calls

        responder.active = False  # the server now serves the model
        assert _run(synth_dir, out, sets, "--resume") == 0
    assert len(ResultsStore(out).load()) == 3


def test_404_for_a_model_that_answered_before_fails_one_sample(env, copy_dataset, tmp_path, capsys):
    dataset = copy_dataset(_poison_row(2))
    responder = FailingWhen(
        ScriptedModel(),
        lambda r: POISON in r.text and "Statement:" in r.text,  # the differencer's requests of sample 2
        lambda r: _raise(HTTPFault(404, "deployment is not available for this request")),
    )
    out = tmp_path / "run"
    with FakeOpenAIServer(responder) as server:
        sets = _sets(server, tmp_path / "cache.sqlite", "run.max_samples_in_flight=1")
        assert _run(dataset, out, sets) == 1
    [error] = _json(out / "errors.json")
    assert (error["index"], error["stage"], error["status"]) == (2, "differencer", 404)
    assert len(ResultsStore(out).load()) == 2


def _raise(exc: Exception):
    raise exc


@pytest.mark.parametrize(
    "fault, needle",
    [
        ("html", "did not answer like an OpenAI-compatible API (check base_url)"),
        ("401", "refused the API key from OPENAI_API_KEY"),
        ("403", "refused the API key from OPENAI_API_KEY"),
    ],
)
def test_errors_every_sample_would_hit_stop_with_one_line(fault, needle, env, synth_dir, tmp_path, capsys):
    with FakeOpenAIServer(ScriptedModel(), faults=FaultPlan(rate=1.0, kinds=(fault,))) as server:
        line = _error_line(_run(synth_dir, tmp_path / "run", _sets(server, tmp_path / "c.sqlite")), capsys.readouterr().err)
    assert needle in line and server.base_url in line
    assert len(server.requests) <= 3  # the samples in flight, no retries


def test_unreachable_endpoint_stops_with_one_line(env, synth_dir, tmp_path, capsys):
    with FakeOpenAIServer(ScriptedModel()) as server:
        sets = _sets(server, tmp_path / "c.sqlite", "endpoints.max_retries=1")
    # The server is gone: its port on this machine now refuses connections, which no retry changes.
    line = _error_line(_run(synth_dir, tmp_path / "run", sets), capsys.readouterr().err)
    assert f"cannot reach {server.base_url}: nothing is listening there" in line and "start the model server first" in line


def test_closed_sample_without_ab_labels_gets_an_empty_prediction(env, tmp_path, capsys):
    """`viddiff data synth --pairs 10 --seed 5` makes a pair whose differences are all c/null."""
    data = tmp_path / "synth"
    assert main(["-q", "data", "synth", "--out", str(data), "--pairs", "10", "--seed", "5"]) == 0
    rows = [json.loads(line) for line in (data / "dataset.jsonl").read_text().splitlines()]
    empty = [i for i, r in enumerate(rows) if not {"a", "b"} & set(json.loads(r["differences_gt"]).values())]
    assert empty, "the generator no longer makes such a pair; pick another seed"
    with FakeOpenAIServer(ScriptedModel()) as server:
        sets = _sets(server, tmp_path / "c.sqlite", "localizer.method=uniform")
        for command in ("run", "baseline"):
            out = tmp_path / command
            assert _run(data, out, sets, command=command) == 0, capsys.readouterr().err
            assert "Traceback" not in capsys.readouterr().err
            predictions = _json(out / "predictions.json")
            results = ResultsStore(out).load()
            for i in empty:
                assert predictions[i] == {}
                assert results[rows[i]["sample_key"]].usage == {} and "nothing to" in results[rows[i]["sample_key"]].notes[0]
            records = _json(out / "metrics.json")["metrics"]["overall"]
            assert records["n"] == sum(
                1 for r in rows for v in json.loads(r["differences_gt"]).values() if v in ("a", "b")
            )


@pytest.fixture(scope="module")
def six_pairs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("six-pairs")
    write_synthetic_benchmark(out, pairs=6, seed=1)
    return out


def _costly(inner):
    """Every answer bills 20,000 prompt tokens (gpt-4o prices: $0.05 a call), so costs are easy to read."""
    from viddiff.testing.fake_openai import Reply

    return lambda req: Reply(content=inner(req), prompt_tokens=20_000, completion_tokens=100)


def test_cost_projection_stops_the_run_and_resume_with_a_higher_budget_finishes(env, six_pairs, tmp_path, capsys):
    out, clean = tmp_path / "run", tmp_path / "clean"
    with FakeOpenAIServer(_costly(ScriptedModel())) as server:
        assert _run(six_pairs, clean, _sets(server, tmp_path / "clean.sqlite", "run.max_samples_in_flight=1")) == 0
        clean_cost = sum(s["cost_usd"] for s in _json(clean / "usage.json")["by_stage"].values())
        budget = round(0.75 * clean_cost, 2)
        sets = _sets(server, tmp_path / "cache.sqlite", "run.max_samples_in_flight=1")
        line = _error_line(_run(six_pairs, out, sets, "--set", f"run.max_cost_usd={budget}"), capsys.readouterr().err)
        assert "project to $" in line and f"run.max_cost_usd=${budget:.2f}" in line and "--resume" in line
        done = len(ResultsStore(out).load())
        assert 3 <= done < 6
        spent = sum(s["cost_usd"] for s in _json(out / "usage.json")["by_stage"].values())
        assert spent <= budget

        assert _run(six_pairs, out, sets, "--resume", "--set", f"run.max_cost_usd={2 * clean_cost:.2f}") == 0
    assert _json(out / "predictions.json") == _json(clean / "predictions.json")


def test_a_budget_needs_prices_for_the_method_models(env, synth_dir, tmp_path, capsys):
    with FakeOpenAIServer(ScriptedModel()) as server:
        sets = _sets(server, tmp_path / "c.sqlite", "run.max_cost_usd=1", "proposer.model=local-llm")
        line = _error_line(_run(synth_dir, tmp_path / "run", sets), capsys.readouterr().err)
    assert "'local-llm' (proposer) has no price" in line and "endpoints.prices.local-llm.input_per_mtok" in line
    assert not server.requests


def test_answers_that_stay_invalid_are_said_counted_and_exit_1(env, synth_dir, tmp_path, capsys):
    """A differencer that never answers validly (issue 22): each verdict is recorded as invalid (null, counted
    wrong, never guessed), and the run says so at the end, counts them in metrics.json and report.md, exits 1."""
    responder = FailingWhen(ScriptedModel(), lambda r: "Statement:" in r.text, lambda r: '{"verdict": "unsure"}')
    out = tmp_path / "run"
    with FakeOpenAIServer(responder) as server:
        code = _run(synth_dir, out, _sets(server, tmp_path / "c.sqlite", "endpoints.max_reasks=1"))
    captured = capsys.readouterr()
    assert code == 1, captured.err
    predictions = _json(out / "predictions.json")
    n = sum(len(p) for p in predictions)
    assert n > 3 and all(v is None for p in predictions for v in p.values())
    assert not (out / "errors.json").exists()  # every sample finished: nothing for --resume to retry
    counts = _json(out / "metrics.json")["counts"]
    assert counts["invalid_answers"] == n and counts["samples_with_invalid_answers"] == 3
    assert f"{n} answers stayed invalid" in (out / "report.md").read_text()
    assert captured.out.rstrip().splitlines()[-1] == (
        f"viddiff: {n} of {n} answers in 3 of 3 samples stayed invalid after the re-asks; their predictions "
        f"are null and count as wrong (the answers are under raw_answers in {out}/samples.jsonl)"
    )


def test_open_run_whose_judge_never_answers_validly_exits_1(env, synth_dir, tmp_path, capsys):
    """The method's answers are fine, the evaluation's judge is not: the run says its scores are incomplete."""
    responder = FailingWhen(ScriptedModel(), lambda r: "G (ground truth)" in r.text, lambda r: '{"matches": "all"}')
    out = tmp_path / "run"
    with FakeOpenAIServer(responder) as server:
        code = _run(synth_dir, out, _sets(server, tmp_path / "c.sqlite", "eval.max_reasks=0"), mode="open")
    last = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert code == 1
    assert last.startswith("viddiff: the scores are incomplete: the judge's answers stayed invalid for 3 of 3 samples")
    assert f"see judge_issues in {out / 'metrics.json'}" in last
    assert _json(out / "metrics.json")["counts"]["judge_issues"] == 3
