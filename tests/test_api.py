"""The Python API (`viddiff.compare`, `VidDiff`) and `viddiff compare`, offline."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import viddiff
from viddiff.api import VidDiff
from viddiff.cli import main
from viddiff.config import load_config
from viddiff.data.viddiffbench import load_dataset
from viddiff.config import DataConfig
from viddiff.errors import ViddiffError
from viddiff.video import probe_video


@pytest.fixture
def pair(synth_dir: Path) -> tuple[str, str]:
    """Two video files of one synthetic sample (the plain, untrimmed pair)."""
    sample = load_dataset(DataConfig(dataset=str(synth_dir)))[2]
    return sample.videos[0].path, sample.videos[1].path


@pytest.fixture
def offline_config(offline_sets):
    return load_config(None, offline_sets[1::2])


def test_compare_closed_returns_verdicts_and_keyframes(pair, offline_config):
    statements = ["the squat is deeper", "the stance is wider"]
    result = viddiff.compare(*pair, action="barbell back squat", differences=statements, config=offline_config)
    assert result.mode == "closed"
    assert [d.description for d in result.differences] == statements
    n_a, n_b = (probe_video(p).n_frames for p in pair)
    for d in result.differences:
        assert d.prediction in ("a", "b", "c")
        assert d.keyframes_a and d.keyframes_b and d.stages
        assert all(0 <= f < n_a for f in d.keyframes_a) and all(0 <= f < n_b for f in d.keyframes_b)
        assert d.keyframes_a == sorted(d.keyframes_a) and len(d.times_a) == len(d.keyframes_a)
    assert json.loads(result.model_dump_json())["differences"][0]["description"] == statements[0]
    assert result.usage["differencer"].calls + result.usage["differencer"].cache_hits == len(statements)


def test_vidiff_object_reuses_models_across_async_calls(pair, offline_config):
    async def go():
        vd = VidDiff(offline_config)
        try:
            first = await vd.acompare(*pair, action="barbell back squat", n_differences=3)
            second = await vd.acompare(*pair, action="barbell back squat", n_differences=3)
            return vd, first, second
        finally:
            await vd.aclose()

    vd, first, second = asyncio.run(go())
    assert first.mode == "open" and 1 <= len(first.differences) <= 3
    assert first.differences == second.differences
    stats = vd.clip_stats()
    # Second comparison: every frame and string came from the cache, not the model.
    assert stats["image_cache_hits"] >= stats["image_forward"] > 0


def test_cli_compare_json_and_table(pair, offline_sets, capsys):
    assert main(["compare", *pair, "--action", "squat", "--difference", "the squat is deeper", "--json", *offline_sets]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["differences"][0]["prediction"] in ("a", "b", "c")
    assert main(["compare", *pair, "--action", "squat", "--n-differences", "2", *offline_sets]) == 0
    out = capsys.readouterr().out
    assert "more true of" in out and "model calls" in out


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"action": "", "differences": ["x"]}, "action description is empty"),
        ({"action": "x" * 5000, "differences": ["x"]}, "characters"),
        ({"action": "squat"}, "give differences"),
        ({"action": "squat", "differences": []}, "differences list is empty"),
        ({"action": "squat", "differences": ["x"], "n_differences": 2}, "not both"),
        ({"action": "squat", "n_differences": 0}, "at least 1"),
        ({"action": "squat", "differences": ["  "]}, "difference 0 is empty"),
    ],
)
def test_compare_rejects_bad_arguments(pair, offline_config, kwargs, message):
    with pytest.raises(ViddiffError, match=message):
        viddiff.compare(*pair, config=offline_config, **kwargs)


def test_cli_compare_missing_video_is_one_line_error(pair, tmp_path, offline_sets, capsys):
    code = main(["compare", pair[0], str(tmp_path / "missing.mp4"), "--action", "squat", "--difference", "x", *offline_sets])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "missing.mp4" in err[0] and "Traceback" not in err[0]


def test_large_clip_model_on_cpu_warns_once_with_the_presets(pair, offline_config, caplog):
    """The warning reads the configured model (ViT-bigG-14); the frames go through the tiny test model."""
    from viddiff.backends.clip import ClipEmbedder

    bigg = offline_config.model_copy(deep=True)
    bigg.localizer.clip = bigg.localizer.clip.model_copy(update={"model": "ViT-bigG-14", "arch_config": None})
    tiny = ClipEmbedder(offline_config.localizer.clip)

    async def go():
        vd = VidDiff(bigg, embedder=tiny)
        try:
            for _ in range(2):
                await vd.acompare(*pair, action="barbell back squat", differences=["the squat is deeper"], fps=30)
        finally:
            await vd.aclose()

    with caplog.at_level("WARNING", logger="viddiff.methods.viddiff"):
        asyncio.run(go())
    warnings = [r.getMessage() for r in caplog.records if "CLIP ViT-bigG-14 on the CPU" in r.getMessage()]
    assert len(warnings) == 1
    assert "--config cpu-balanced (" in warnings[0] and " or cpu-fast (" in warnings[0]
