"""The text a VLM judges: the description by default, in the VidDiff differencer and the LMM baseline alike."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from viddiff.api import VidDiff
from viddiff.methods.lmm.baseline import LMMBaseline
from viddiff.config import DataConfig, load_config
from viddiff.data.viddiffbench import load_dataset
from viddiff.schema import Difference
from viddiff.differencer.statements import statement_text
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel


def test_statement_text_picks_the_description_unless_asked_otherwise() -> None:
    diff = Difference(key="0", name="depth", description="the squat is deeper", query_string=" the hips go lower ")
    assert statement_text(diff, "description") == "the squat is deeper"
    assert statement_text(diff, "query_string") == "the hips go lower"
    for missing in (None, "  "):
        blank = diff.model_copy(update={"query_string": missing})
        assert statement_text(blank, "query_string") == "the squat is deeper"


def _asked(server: FakeOpenAIServer, cfg, sample) -> tuple[set[str], set[str]]:
    """Statements the differencer asked about, and statements the closed baseline listed, for one sample."""

    async def go():
        for method in (VidDiff(cfg), LMMBaseline(cfg)):
            try:
                await method.aprocess(sample, "closed")
            finally:
                await method.aclose()

    asyncio.run(go())
    differencer = {m.group(1) for r in server.requests for m in re.finditer(r'Statement: "(.*)"', r.text)}
    baseline = {
        m.group(1).strip()
        for r in server.requests
        if "mapping each id" in r.text
        for m in re.finditer(r'^"[^"]+": (.*)$', r.text, flags=re.M)
    }
    return differencer, baseline


@pytest.mark.parametrize("which", ["description", "query_string"])
def test_method_and_baseline_ask_about_the_same_text(synth_dir: Path, tmp_path: Path, monkeypatch, which) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    sample = load_dataset(DataConfig(dataset=str(synth_dir)))[2]
    expected = {statement_text(d, which) for d in sample.closed_differences()}
    assert expected and {d.description for d in sample.closed_differences()} != {
        d.query_string for d in sample.closed_differences()
    }, "the fixture must tell the two texts apart"
    with FakeOpenAIServer(ScriptedModel()) as server:
        overrides = offline_overrides(server.base_url, str(tmp_path / "cache.sqlite"))
        cfg = load_config(None, [*overrides, f"differencer.statement={which}", f"baseline.statement={which}"])
        differencer, baseline = _asked(server, cfg, sample)
    assert differencer == expected and baseline == expected


def test_baseline_samples_frames_at_its_own_released_fps(synth_dir: Path, tmp_path: Path) -> None:
    # fitness: the method runs at 8 fps (every frame of the benchmark's 8 fps videos), the LMM baselines at 4
    cfg = load_config(None, offline_overrides("http://127.0.0.1:9/v1", str(tmp_path / "cache.sqlite")))
    sample = next(s for s in load_dataset(DataConfig(dataset=str(synth_dir))) if s.domain == "fitness")
    assert cfg.baseline.fps_by_domain["fitness"] == 4 and cfg.data.fps_for("fitness") == 8

    async def fps_of(method) -> tuple[float, float]:
        try:
            a, b = await method.load_videos(sample)
            return a.fps, b.fps
        finally:
            await method.aclose()

    source = sample.videos[0].fps_original  # 8 fps synthetic source: stride 2 -> 4 fps, stride 1 -> 8 fps
    assert asyncio.run(fps_of(LMMBaseline(cfg))) == (source / 2, source / 2)
    assert asyncio.run(fps_of(VidDiff(cfg))) == (source, source)
