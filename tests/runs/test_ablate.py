"""``viddiff ablate``: every localizer variant on one selection, shared proposals, one table beside the paper's."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from viddiff.runs.ablate import all_variants, check_ablatable, paper_comparison, variants_named
from viddiff.cli import main
from viddiff.config import DataConfig, load_config
from viddiff.data.viddiffbench import load_dataset
from viddiff.errors import ViddiffError
from viddiff.localizer.oracle import nearest_positions
from viddiff.localizer.segmenters import segmenter_names


PAPER = {"oracle": 78.6, "random": 50.1, "no_viterbi": 57.4, "viterbi": 65.8}


def test_variants_are_the_papers_rows_as_run_then_named_extras_then_every_other_method() -> None:
    variants = all_variants()
    assert [v.name for v in variants[:6]] == ["oracle", "random", "no_viterbi", "viterbi", "oracle_ab", "no_viterbi_frames"]
    assert {v.method for v in variants} == set(segmenter_names())
    assert {v.name: v.paper_easy for v in variants if v.paper_easy is not None} == PAPER
    by_name = {v.name: v for v in variants}
    # the paper's oracle asked 3-way questions; its no-Viterbi row used the window the release shipped
    assert by_name["oracle"].settings == ["localizer.method=oracle", "differencer.options=abc"]
    assert by_name["no_viterbi"].settings == ["localizer.method=no_viterbi", "localizer.no_viterbi_window=as_released"]
    # this project's versions of both are named extras without a paper number
    assert by_name["oracle_ab"].settings == ["localizer.method=oracle", "differencer.options=ab"]
    assert by_name["no_viterbi_frames"].settings == ["localizer.method=no_viterbi", "localizer.no_viterbi_window=frames"]
    assert by_name["oracle_ab"].paper_easy is None and by_name["no_viterbi_frames"].paper_easy is None
    assert [v.name for v in variants_named(["viterbi", "oracle_ab", "oracle"])] == ["oracle", "viterbi", "oracle_ab"]
    with pytest.raises(ViddiffError, match="unknown --variant best"):
        variants_named(["best"])


def test_a_row_run_otherwise_than_the_papers_gets_no_paper_number() -> None:
    by_name = {v.name: v for v in all_variants()}
    as_paper = load_config(None, by_name["viterbi"].settings)
    assert paper_comparison(by_name["viterbi"], as_paper, n=10, annotated=None) is None
    abc = load_config(None, [*by_name["viterbi"].settings, "differencer.options=abc"])
    assert "differencer.options=abc (the paper's row: ab)" in paper_comparison(by_name["viterbi"], abc, 10, None)
    oracle = load_config(None, by_name["oracle"].settings)
    assert paper_comparison(by_name["oracle"], oracle, n=10, annotated=10) is None
    assert "3 of 10 differences had no annotated keyframes" in paper_comparison(by_name["oracle"], oracle, 10, 7)
    frames = load_config(None, [*by_name["no_viterbi"].settings, "localizer.no_viterbi_window=frames"])
    assert "localizer.no_viterbi_window=frames" in paper_comparison(by_name["no_viterbi"], frames, 10, None)
    assert paper_comparison(by_name["argmax"], load_config(None, ["localizer.method=argmax"]), 10, None) is None


@pytest.mark.parametrize(
    "overrides, message",
    [(["cache.enabled=false"], "through the cache"), (["cache.cache_nonzero_temperature=false"], "temperature > 0")],
)
def test_variants_must_share_proposals_through_the_cache(overrides, message) -> None:
    with pytest.raises(ViddiffError, match=message) as raised:
        check_ablatable(load_config(None, overrides))
    assert "viddiff ablate" in str(raised.value)


def _stage_plan_requests(requests) -> int:
    return sum((r.json_schema or {}).get("title") == "StagesAnswer" for r in requests)


@pytest.mark.slow
def test_ablate_runs_every_variant_on_shared_proposals(synth_dir, scripted_server, offline_sets, tmp_path, capsys):
    out = tmp_path / "ablate"
    start = len(scripted_server.requests)
    assert main(["ablate", "--dataset", str(synth_dir), "--output", str(out), *offline_sets]) == 0
    printed = capsys.readouterr().out
    samples = list(load_dataset(DataConfig(dataset=str(synth_dir))))
    variants = all_variants()

    # one stage plan (stages, then refinement) per sample, asked once: the other variants read the same
    # proposals from the cache
    assert _stage_plan_requests(scripted_server.requests[start:]) == 2 * len(samples)
    proposals = {
        v.name: [json.loads(line)["proposal"] for line in (out / v.name / "samples.jsonl").read_text().splitlines()]
        for v in variants
    }
    assert all(sorted(p, key=str) == sorted(proposals["viterbi"], key=str) for p in proposals.values())

    table = json.loads((out / "ablation.json").read_text())["rows"]
    splits = sorted({s.split for s in samples})
    assert [(r["variant"], r["split"]) for r in table] == [(v.name, s) for v in variants for s in splits]
    for row in table:
        metrics = json.loads((out / row["variant"] / "metrics.json").read_text())["metrics"]["splits"][row["split"]]
        assert (row["n"], row["correct"], row["ci_low"]) == (metrics["n"], metrics["correct"], metrics["ci_low"])
        assert row["paper"] == (PAPER.get(row["variant"]) if row["split"] == "easy" else None)
        assert row["not_comparable"] is None
        # the synthetic benchmark annotates every difference, so the oracle never falls back
        assert row["annotated"] == (row["n"] if row["method"] == "oracle" else None)
    # the oracle row was asked a/b/c, its extra a/b; the no-Viterbi rows used their own windows
    saved = {v.name: yaml.safe_load((out / v.name / "config.yaml").read_text()) for v in variants}
    assert saved["oracle"]["differencer"]["options"] == "abc" and saved["oracle_ab"]["differencer"]["options"] == "ab"
    assert saved["no_viterbi"]["localizer"]["no_viterbi_window"] == "as_released"
    assert saved["no_viterbi_frames"]["localizer"]["no_viterbi_window"] == "frames"
    oracle_questions = [r for r in scripted_server.requests[start:] if '"a", "b" or "c"' in r.text]
    assert oracle_questions  # 3-way questions were asked (only by the oracle row)

    # the console: one labelled line per variant as it starts, no variant's own tables, then the summary
    # table in blocks, each labelled, and the paper's numbers only beside the paper's rows
    assert "Closed accuracy" not in printed and "Per action" not in printed and "est. cost" not in printed
    for i, v in enumerate(variants, start=1):
        assert f"ablate [{i}/{len(variants)}] {v.label}: {' '.join(v.settings)} -> {out / v.name}" in printed
    summary = printed.split("Localisation ablation (closed accuracy; chance = 50%)\n", 1)[1]
    lines = summary.splitlines()[2 : 2 + len(table)]
    labelled = [line for line in lines if line.strip() and not line.startswith(" ")]
    assert [line.split("  ")[0] for line in labelled] == [v.label for v in variants]
    for line, row in zip(lines, table):
        assert ("78.6" in line) == (row["variant"] == "oracle" and row["split"] == "easy")
    assert "78.6" in (out / "ablation.md").read_text() and "oracle (3-way)" in (out / "ablation.md").read_text()
    # the paper's numbers sit beside stand-in accuracies: the notice follows the table, and the files say it too
    assert summary.index("78.6") < summary.index("NOTE: stand-ins, not models, produced these results")
    assert "  - CLIP (viddiff-test-tiny-clip): random weights" in summary
    assert "NOTE: stand-ins, not models" in (out / "ablation.md").read_text()
    saved = json.loads((out / "ablation.json").read_text())
    assert any(line.startswith("stand-in: CLIP (viddiff-test-tiny-clip)") for line in saved["stand_ins"])
    assert all(row["stand_ins"] for row in table)

    # the oracle's keyframes are the sampled frames nearest the benchmark's annotations
    by_key = {s.sample_key: s for s in samples}
    for line in (out / "oracle" / "samples.jsonl").read_text().splitlines():
        result = json.loads(line)
        sample = by_key[result["sample_key"]]
        for kf in result["keyframes"]:
            for side, (seg, truth) in enumerate(zip(result["segmentations"], sample.retrieval_frames.keyframes[kf["key"]])):
                expected = [seg["frame_indices"][p] for p in nearest_positions(np.array(seg["frame_indices"]), truth)]
                assert kf["ab"[side]]["frame_indices"] == expected

    # a finished ablation resumes without a single model call
    again = len(scripted_server.requests)
    assert main(["ablate", "--dataset", str(synth_dir), "--output", str(out), "--resume", *offline_sets]) == 0
    assert len(scripted_server.requests) == again
    assert json.loads((out / "ablation.json").read_text())["rows"] == table


@pytest.mark.slow
def test_ablate_withholds_the_papers_numbers_from_rows_run_otherwise(synth_dir, offline_sets, tmp_path, capsys):
    out = tmp_path / "abc"
    args = ["ablate", "--dataset", str(synth_dir), "--output", str(out), "--variant", "viterbi", "--variant", "oracle"]
    assert main([*args, "--set", "differencer.options=abc", *offline_sets]) == 0
    rows = {(r["variant"], r["split"]): r for r in json.loads((out / "ablation.json").read_text())["rows"]}
    full, oracle = rows[("viterbi", "easy")], rows[("oracle", "easy")]
    assert full["paper"] is None and "differencer.options=abc (the paper's row: ab)" in full["not_comparable"]
    assert oracle["paper"] == 78.6  # the oracle's row is asked a/b/c anyway
    printed = capsys.readouterr().out
    assert "65.8" not in printed and "not the paper's row: differencer.options=abc" in printed


def test_ablate_refuses_vidic(tmp_path, offline_sets, capsys) -> None:
    """--help lists only VidDiffBench (it listed every benchmark, then refused the others); a config naming another
    is refused with the reason."""
    with pytest.raises(SystemExit) as exited:
        main(["ablate", "--benchmark", "vidic", "--dataset", str(tmp_path), *offline_sets])
    assert exited.value.code == 2 and "invalid choice: 'vidic' (choose from 'viddiffbench')" in capsys.readouterr().err
    assert main(["ablate", "--set", "data.benchmark=vidic", "--dataset", str(tmp_path), *offline_sets]) == 2
    assert "VidDiffBench" in capsys.readouterr().err


def test_answers_that_stay_invalid_make_the_ablation_say_so_and_exit_1(synth_dir, tmp_path, monkeypatch, capsys):
    from viddiff.testing import offline_overrides
    from viddiff.testing.fake_openai import FakeOpenAIServer
    from viddiff.testing.responders import FailingWhen, ScriptedModel

    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    responder = FailingWhen(ScriptedModel(), lambda r: "Statement:" in r.text, lambda r: '{"verdict": "unsure"}')
    with FakeOpenAIServer(responder) as server:
        sets = [a for item in offline_overrides(server.base_url, str(tmp_path / "c.sqlite")) for a in ("--set", item)]
        code = main(["ablate", "--dataset", str(synth_dir), "--output", str(tmp_path / "ablate"), "--variant",
                     "viterbi", "--set", "endpoints.max_reasks=0", *sets])
    last = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert code == 1
    assert last.startswith("viddiff: answers stayed invalid in the ablation's runs: viterbi: ")
