"""`--resume` refuses only config changes that change results (issue 11, item 6)."""

from __future__ import annotations

import json

import pytest
import yaml

from viddiff.cli import main
from viddiff.config import Config
from viddiff.runs.resume import MAY_CHANGE_ON_RESUME, may_change, result_changing_differences


def _old(cfg: Config) -> dict:
    return yaml.safe_load(cfg.to_yaml())


@pytest.mark.parametrize(
    "override",
    [
        "endpoints.timeout_s=600",
        "endpoints.max_retries=10",
        "endpoints.max_concurrency=2",
        "endpoints.backoff_max_s=5",
        "endpoints.max_reasks=5",
        "endpoints.prices.gpt-4o.input_per_mtok=3",
        "endpoints.default.api_key_env=OTHER_KEY",
        "cache.path=/elsewhere/cache.sqlite",
        "cache.enabled=false",
        "run.max_samples_in_flight=1",
        "run.max_cost_usd=5",
        "data.limit=10",
        "eval.max_reasks=4",
    ],
)
def test_settings_that_do_not_change_results_may_change(override):
    assert result_changing_differences(_old(Config()), Config().with_overrides([override]).model_dump(mode="json")) == []


@pytest.mark.parametrize(
    "override, key",
    [
        ("proposer.model=other", "proposer.model"),
        ("differencer.temperature=0.7", "differencer.temperature"),
        ("differencer.options=abc", "differencer.options"),
        ("localizer.method=uniform", "localizer.method"),
        ("data.fps_by_domain.fitness=4", "data.fps_by_domain.fitness"),
        ("endpoints.default.base_url=http://other:8000/v1", "endpoints.default.base_url"),
        ("endpoints.response_format=json_object", "endpoints.response_format"),
        ("run.seed=3", "run.seed"),
        ("eval.judge.model=other", "eval.judge.model"),
        ("differencer.image.max_side=256", "differencer.image.max_side"),
    ],
)
def test_settings_that_change_results_are_refused(override, key):
    changed = result_changing_differences(_old(Config()), Config().with_overrides([override]).model_dump(mode="json"))
    assert [k for k, _, _ in changed] == [key]


def test_settings_added_since_the_run_count_as_their_defaults():
    old = _old(Config())
    del old["run"]["max_cost_usd"], old["endpoints"]["max_answer_chars"]
    assert result_changing_differences(old, Config().model_dump(mode="json")) == []


def _leaf_keys(node: dict, prefix: str = "") -> set[str]:
    keys: set[str] = set()
    for name, value in node.items():
        keys |= _leaf_keys(value, f"{prefix}{name}.") if isinstance(value, dict) and value else {prefix + name}
    return keys


def test_every_listed_key_exists_in_the_config():
    keys = _leaf_keys(Config().model_dump(mode="json"))
    for allowed in MAY_CHANGE_ON_RESUME:
        if "*" not in allowed:
            assert any(k == allowed or k.startswith(allowed + ".") for k in keys | {"endpoints.prices"}), allowed
    assert may_change("baseline.endpoint.api_key_env") and not may_change("baseline.endpoint.base_url")


def test_resume_accepts_the_advised_changes_and_refuses_the_rest(synth_dir, tmp_path, offline_sets, capsys):
    out = tmp_path / "run"
    base = ["-q", "run", "--dataset", str(synth_dir), "--mode", "closed", "--output", str(out), "--split", "easy"]
    assert main([*base, *offline_sets]) == 0
    before = (out / "samples.jsonl").read_bytes()
    # What error messages advise ("raise endpoints.timeout_s", "raise run.max_cost_usd", a new cache) is accepted.
    tuned = ["--set", "endpoints.timeout_s=600", "--set", "endpoints.max_concurrency=2", "--set", "run.max_cost_usd=9"]
    assert main([*base, *offline_sets, *tuned, "--set", f"cache.path={tmp_path / 'other.sqlite'}", "--resume"]) == 0
    assert yaml.safe_load((out / "config.yaml").read_text())["endpoints"]["timeout_s"] == 600
    capsys.readouterr()
    assert main([*base, *offline_sets, "--set", "differencer.model=gpt-4o-mini", "--resume"]) == 2
    [line] = [x for x in capsys.readouterr().err.splitlines() if x.startswith("viddiff:")]
    assert 'differencer.model ("gpt-4o-2024-05-13" → "gpt-4o-mini")' in line and "new --output" in line
    assert (out / "samples.jsonl").read_bytes() == before
    assert json.loads((out / "run.json").read_text())["method"] == "viddiff"
