"""LMM baseline in describe mode (ViDiC-1K): both videos' frames, a 7-dimension comparison prompt, free text back."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from viddiff.methods.lmm import LMMBaseline, prompts
from viddiff.config import Config, load_config
from viddiff.benchmarks.vidic.data import CATEGORIES, CATEGORY_NAMES
from viddiff.errors import InvalidAnswerError
from viddiff.schema import Sample, SampleResult, VideoRef
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel


def vidic_sample(sample: Sample, action: str = "") -> Sample:
    """A ViDiC-style pair (no action text, domain ``vidic``) over a synthetic sample's two videos."""
    return Sample(
        sample_key="pair",
        action="vidic",
        action_name=action,
        action_description=action,
        split="vidic",
        domain="vidic",
        videos=(VideoRef(path=sample.videos[0].path), VideoRef(path=sample.videos[1].path)),
        n_differences_open=10,
    )


def run(server: FakeOpenAIServer, tmp_path: Path, sample: Sample, *overrides: str) -> SampleResult:
    offline = offline_overrides(server.base_url, str(tmp_path / "cache.sqlite"))
    cfg: Config = load_config(None, [*offline, "baseline.model=fake-vlm", *overrides])
    method = LMMBaseline(cfg)

    async def go() -> SampleResult:
        try:
            return await method.aprocess(sample, "describe")
        finally:
            await method.aclose()

    return asyncio.run(go())


def test_prompt_covers_the_seven_dimensions_and_the_rules() -> None:
    text = prompts.describe_prompt("", "LAYOUT.")
    assert text.startswith("LAYOUT.\n\n")  # no action sentence when there is no action
    names = [name.lower() for name, _ in prompts.DIMENSIONS]
    assert names == [CATEGORY_NAMES[c] for c in CATEGORIES]
    for i, name in enumerate(names, start=1):
        assert f"\n{i}. {name.capitalize()}: " in text
    for rule in ("similarities: short", "differences: in detail", "Do not speculate", "do not invent", "image noise"):
        assert rule in text
    with_action = prompts.describe_prompt("juggling", "LAYOUT.")
    assert with_action.startswith('Both videos show people performing this action: "juggling".\nLAYOUT.')


def test_describe_sends_both_videos_within_budget_and_keeps_the_text(baseline_samples, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    with FakeOpenAIServer(ScriptedModel()) as server:
        result = run(server, tmp_path, vidic_sample(baseline_samples[2]), "baseline.max_images=10")
        (req,) = server.requests
    assert req.response_format is None  # free text, not JSON
    assert req.messages[0]["content"] == prompts.SYSTEM_DESCRIBE
    assert 2 <= len(req.images) <= 10
    assert "Compare video A and video B along these seven dimensions" in req.text
    assert result.mode == "describe" and result.method == "lmm:fake-vlm" and result.predictions == []
    lines = result.description.splitlines()
    assert [line.split(":")[0] for line in lines] == [name for name, _ in prompts.DIMENSIONS]
    assert "brighter" in result.description  # the scripted model saw two different videos
    assert any(n.startswith("frames sent: A ") for n in result.notes)


def test_an_empty_answer_is_an_invalid_answer(baseline_samples, monkeypatch, tmp_path) -> None:
    def blank(req: ChatRequest) -> str:
        return "   \n"

    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    with FakeOpenAIServer(blank) as server, pytest.raises(InvalidAnswerError, match="empty text"):
        run(server, tmp_path, vidic_sample(baseline_samples[2]))
