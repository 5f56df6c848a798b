"""``viddiff ablate``: every localizer variant on one selection, shared proposals, one table beside the paper's."""

from __future__ import annotations

import json

import numpy as np
import pytest

from viddiff.runs.ablate import all_variants, check_ablatable, variants_named
from viddiff.cli import main
from viddiff.config import DataConfig, load_config
from viddiff.data.viddiffbench import load_dataset
from viddiff.errors import ViddiffError
from viddiff.localizer.oracle import nearest_positions
from viddiff.localizer.segmenters import segmenter_names


def test_variants_are_every_localizer_method_with_the_papers_numbers_first() -> None:
    VARIANTS = all_variants()
    assert sorted(v.method for v in VARIANTS) == sorted(segmenter_names())
    assert all(v.paper_easy is not None for v in VARIANTS[:4]) and all(v.paper_easy is None for v in VARIANTS[4:])
    paper = {v.method: v.paper_easy for v in VARIANTS if v.paper_easy is not None}
    assert paper == {"oracle": 78.6, "random": 50.1, "no_viterbi": 57.4, "viterbi": 65.8}
    assert [v.method for v in variants_named(["viterbi", "oracle"])] == ["oracle", "viterbi"]  # table order
    with pytest.raises(ViddiffError, match="unknown --variant best"):
        variants_named(["best"])


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

    # one stage plan (stages, then refinement) per sample, asked once: the other six variants read the same
    # proposals from the cache
    assert _stage_plan_requests(scripted_server.requests[start:]) == 2 * len(samples)
    proposals = {
        v.method: [json.loads(line)["proposal"] for line in (out / v.method / "samples.jsonl").read_text().splitlines()]
        for v in all_variants()
    }
    assert all(sorted(p, key=str) == sorted(proposals["viterbi"], key=str) for p in proposals.values())

    table = json.loads((out / "ablation.json").read_text())["rows"]
    splits = sorted({s.split for s in samples})
    assert [(r["variant"], r["split"]) for r in table] == [(v.method, s) for v in all_variants() for s in splits]
    for row in table:
        metrics = json.loads((out / row["variant"] / "metrics.json").read_text())["metrics"]["splits"][row["split"]]
        assert (row["n"], row["correct"], row["ci_low"]) == (metrics["n"], metrics["correct"], metrics["ci_low"])
        assert row["paper"] == ({"oracle": 78.6, "random": 50.1, "no_viterbi": 57.4, "viterbi": 65.8}.get(row["variant"])
                                if row["split"] == "easy" else None)
        # the synthetic benchmark annotates every difference, so the oracle never falls back
        assert row["annotated"] == (row["n"] if row["variant"] == "oracle" else None)
    assert "Localisation ablation" in printed and "78.6" in printed and "oracle" in printed
    assert "78.6" in (out / "ablation.md").read_text()

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


def test_ablate_refuses_vidic(tmp_path, offline_sets, capsys) -> None:
    assert main(["ablate", "--benchmark", "vidic", "--dataset", str(tmp_path), *offline_sets]) == 2
    assert "VidDiffBench" in capsys.readouterr().err
