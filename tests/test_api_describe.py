"""VidDiff in describe mode (ViDiC-1K) on hand-made pairs of synthetic videos, against the scripted fake model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Iterator

import pytest

from viddiff.api import VidDiff
from viddiff.config import Config, DataConfig, load_config
from viddiff.data.viddiffbench import load_dataset
from viddiff.benchmarks.vidic.data import CATEGORIES, CATEGORY_NAMES
from viddiff.methods.description import render_description
from viddiff.errors import ViddiffError
from viddiff.proposer.propose import WHOLE_VIDEO
from viddiff.schema import Sample, SampleResult, VideoRef
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel
from viddiff.video import probe_video


@pytest.fixture
def pair(synth_dir: Path) -> tuple[str, str]:
    sample = load_dataset(DataConfig(dataset=str(synth_dir)))[2]
    return sample.videos[0].path, sample.videos[1].path


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    """A scripted server of this test's own, so its request log holds only this test's requests."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    with FakeOpenAIServer(ScriptedModel()) as server:
        yield server
    assert not server.responder_errors, server.responder_errors


def config(server: FakeOpenAIServer, tmp_path: Path, *overrides: str) -> Config:
    return load_config(None, [*offline_overrides(server.base_url, str(tmp_path / "cache.sqlite")), *overrides])


def vidic_sample(video_a: str, video_b: str, n: int, key: str = "pair") -> Sample:
    """A pair as the ViDiC-1K loader makes it: no action text, no differences, ``n`` to propose."""
    return Sample(
        sample_key=key,
        action="vidic",
        action_name="",
        action_description="",
        split="vidic",
        domain="vidic",
        videos=(VideoRef(path=video_a), VideoRef(path=video_b)),
        n_differences_open=n,
    )


def describe(cfg: Config, *samples: Sample) -> tuple[list[SampleResult], VidDiff]:
    async def go() -> list[SampleResult]:
        try:
            return [await vd.aprocess(s, "describe", index=i) for i, s in enumerate(samples)]
        finally:
            await vd.aclose()

    vd = VidDiff(cfg)
    return asyncio.run(go()), vd


def kinds(server: FakeOpenAIServer) -> list[str]:
    return [r.response_format["json_schema"]["name"] for r in server.requests]


def headings(description: str) -> list[str]:
    return [line[:-1] for line in description.splitlines() if line.endswith(":")]


def test_describe_mode_proposes_localises_verifies_and_renders(pair, server, tmp_path):
    (result,), _ = describe(config(server, tmp_path), vidic_sample(*pair, n=9))

    proposal = result.proposal
    assert result.mode == "describe" and len(proposal.differences) == len(result.predictions) == 9
    assert [d.category for d in proposal.differences] == [*CATEGORIES, "subject", "style"]
    assert kinds(server).count("DimensionDifferencesAnswer") == 1 and "LinksAnswer" in kinds(server)
    # describe mode always offers "c": every verdict request is the a/b/c one
    assert kinds(server).count("AnswerABC") == 9
    assert all(p.prediction in ("a", "b", "c") for p in result.predictions)
    n_a = len(result.segmentations[0].frame_indices)
    keyframes = {k.key: k for k in result.keyframes}
    for d in proposal.differences:
        positions = [result.segmentations[0].frame_indices.index(f) for f in keyframes[d.key].a.frame_indices]
        if d.scope == "global":
            assert proposal.links[d.key] == list(range(len(proposal.stages)))
            assert len(positions) == 3 and positions[0] < n_a / 3 and positions[-1] >= 2 * n_a / 3
        else:  # a burst centred on its linked stage, shifted as a whole to fit inside the video
            (stage,) = proposal.links[d.key]
            start, end = result.segmentations[0].spans[stage]
            middle = positions[len(positions) // 2]
            below, above = middle - positions[0], positions[-1] - middle
            assert middle == min(max((start + end - 1) // 2, below), n_a - 1 - above)
    assert result.description == render_description(proposal.differences, result.predictions)
    assert "In Video A, " in result.description  # two different videos: some verdict is a or b
    order = [CATEGORY_NAMES[c].capitalize() for c in CATEGORIES]
    assert headings(result.description) == sorted(headings(result.description), key=order.index)


def test_the_same_video_twice_gives_only_similarities(pair, server, tmp_path):
    (result,), _ = describe(config(server, tmp_path), vidic_sample(pair[0], pair[0], n=7))
    assert {p.prediction for p in result.predictions} == {"c"}
    assert headings(result.description) == [CATEGORY_NAMES[c].capitalize() for c in CATEGORIES]
    assert "In Video" not in result.description and result.description.count("Similar in both videos") == 7


def test_only_global_differences_need_no_stage_plan_and_no_clip(pair, server, tmp_path):
    (result,), vd = describe(config(server, tmp_path), vidic_sample(*pair, n=4))
    assert {d.scope for d in result.proposal.differences} == {"global"}
    assert kinds(server) == ["DimensionDifferencesAnswer"] + ["AnswerABC"] * 4
    assert result.proposal.stages == [WHOLE_VIDEO]
    assert vd.clip_stats() is None


def test_invalid_verdicts_are_left_out_and_noted(pair, monkeypatch, tmp_path):
    scripted = ScriptedModel()

    def responder(req: ChatRequest) -> str:
        if '"the style aspect 1 is more pronounced"' in req.text:
            return "I cannot tell."
        return scripted(req)

    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    with FakeOpenAIServer(responder) as server:
        (result,), _ = describe(config(server, tmp_path), vidic_sample(*pair, n=3))
    by_key = {p.key: p.prediction for p in result.predictions}
    assert by_key["1"] is None and by_key["0"] is not None
    assert "style aspect 1" not in result.description
    assert any(n.startswith("1 difference(s) without a valid verdict") and n.endswith(": 1") for n in result.notes)


def test_ab_differencer_config_is_overridden_with_a_note(pair, server, tmp_path):
    (result,), _ = describe(config(server, tmp_path, "differencer.options=ab"), vidic_sample(*pair, n=2))
    assert kinds(server).count("AnswerABC") == 2 and "AnswerAB" not in kinds(server)
    assert any("differencer.options=ab ignored in describe mode" in n for n in result.notes)


def test_reuse_per_action_proposes_once_for_all_pairs(pair, server, tmp_path):
    cfg = config(server, tmp_path, "proposer.reuse_per_action=true", "cache.enabled=false")
    results, _ = describe(cfg, vidic_sample(*pair, n=6, key="x"), vidic_sample(pair[1], pair[0], n=6, key="y"))
    assert kinds(server).count("DimensionDifferencesAnswer") == 1
    assert kinds(server).count("StagesAnswer") == 2  # one plan, one refinement, shared by both pairs
    assert results[0].proposal.differences == results[1].proposal.differences


def test_describe_api_accepts_an_empty_action(pair, server, tmp_path):
    vd = VidDiff(config(server, tmp_path, "proposer.describe_n_differences=5"))
    result = vd.describe(*pair)
    assert result.mode == "describe" and result.action == "" and len(result.differences) == 5
    assert result.description and headings(result.description)
    n_frames = probe_video(pair[0]).n_frames
    assert all(0 <= f < n_frames and d.stages for d in result.differences for f in d.keyframes_a)
    assert json.loads(result.model_dump_json())["description"] == result.description
    with pytest.raises(ViddiffError, match="at least 1"):
        vd.describe(*pair, n_differences=0)


def test_cli_compare_describe_prints_a_description(synth_dir, offline_sets, capsys):
    from viddiff.cli import main
    from viddiff.config import DataConfig
    from viddiff.data.viddiffbench import load_dataset

    sample = load_dataset(DataConfig(dataset=str(synth_dir)))[2]
    pair = [sample.videos[0].path, sample.videos[1].path]
    assert main(["compare", *pair, "--describe", "--n-differences", "3", *offline_sets]) == 0
    captured = capsys.readouterr()
    text = captured.out.strip()
    assert text and ("Video A" in text or "both videos" in text.lower())
    assert "NOTE" not in text  # stdout is the description itself; the stand-in notice names it, on stderr
    assert "produced these results: the sentences of this description say nothing about the method" in captured.err
    assert main(["compare", *pair, "--describe", "--difference", "x", *offline_sets]) == 2
    assert "drop --difference" in capsys.readouterr().err
