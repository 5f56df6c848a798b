"""``data.frame_size: differencer``: frames kept no larger than the differencer sends them (an opt-in)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from viddiff.config import DataConfig, load_config
from viddiff.data.viddiffbench import load_dataset
from viddiff.methods.viddiff import VidDiffMethod
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel, schema_name


def run(synth_dir: Path, tmp_path: Path, *sets: str):
    sample = load_dataset(DataConfig(dataset=str(synth_dir)))[2]
    with FakeOpenAIServer(ScriptedModel()) as server:
        cfg = load_config(None, [*offline_overrides(server.base_url, str(tmp_path / "c.sqlite")), *sets])

        async def go():
            method = VidDiffMethod(cfg)
            try:
                return await method.arun_pair(sample, "closed")
            finally:
                await method.aclose()

        pair = asyncio.run(go())
    sent = [p.size for r in server.requests if schema_name(r) == "AnswerAB" for p in r.images]
    return pair, sent


@pytest.mark.parametrize("differencer_side", [None, 64])
def test_frames_are_kept_at_the_size_the_differencer_sends(synth_dir, tmp_path, monkeypatch, differencer_side):
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    side = [] if differencer_side is None else [f"differencer.image.max_side={differencer_side}"]
    full, sent_full = run(synth_dir, tmp_path / "full", *side)
    small, sent_small = run(synth_dir, tmp_path / "small", *side, "data.frame_size=differencer")

    for video_full, video_small in zip(full.videos, small.videos):
        w, h = video_full.size
        assert max(h, w) > 64  # the synthetic videos are 160x120
        expected = max(h, w) if differencer_side is None else differencer_side
        assert max(video_small.size) == expected
        assert all(max(still.shape[:2]) == expected for still in video_small.stills.values())
    assert sent_small and sent_small == sent_full  # the differencer gets the size it is configured for
    assert small.result.predictions and all(p.prediction in ("a", "b") for p in small.result.predictions)
