"""CPU time estimates for CLIP, the CPU presets, and the one-line warning that points to them."""

from __future__ import annotations


import open_clip
import pytest

from viddiff.backends.clip_cost import (
    CPU_PRESETS,
    INT8_SPEEDUP,
    cpu_time_warning,
    frames_to_embed,
    seconds_per_frame,
)
from viddiff.config import ClipConfig, CoarseToFineConfig, Config, load_config

OFF = CoarseToFineConfig()
ON = CoarseToFineConfig(enabled=True, coarse_stride=8, refine_radius=1)


def clip(model: str, **kw) -> ClipConfig:
    return ClipConfig(model=model, pretrained=None, **kw)


def test_estimates_follow_the_architecture():
    assert seconds_per_frame(clip("ViT-L-14"), 2) == pytest.approx(1.0)  # the calibration point
    assert seconds_per_frame(clip("ViT-bigG-14"), 2) == pytest.approx(6.09, abs=0.01)  # measured 6.5 s
    assert seconds_per_frame(clip("ViT-B-32"), 2) == pytest.approx(0.055, abs=0.001)  # measured 0.07 s
    assert seconds_per_frame(clip("ViT-L-14"), 4) == pytest.approx(0.5)
    assert seconds_per_frame(clip("ViT-L-14", precision="int8"), 2) == pytest.approx(1.0 / INT8_SPEEDUP)
    assert seconds_per_frame(clip("MobileCLIP-S2"), 2) is None  # a timm tower: no estimate


def test_frames_to_embed():
    assert frames_to_embed(40, 5, OFF) == 40
    assert frames_to_embed(40, 5, ON) == 6 + 4 * 4  # 5 coarse + the last frame, 4 frames per boundary
    assert frames_to_embed(400, 5, ON) == 51 + 16
    assert frames_to_embed(8, 5, ON) == 8


def test_paper_model_on_two_10s_clips_warns_with_the_presets():
    message = cpu_time_warning(ClipConfig(), OFF, [40, 40], 5, threads=2)
    assert message is not None
    assert "ViT-bigG-14" in message and "about 8 min to embed 80 frames" in message
    assert "--config cpu-balanced (" in message and " or cpu-fast (" in message  # by name: it works outside a checkout


@pytest.mark.parametrize(
    "config, frames, threads",
    [
        (clip("ViT-B-32"), [2000, 2000], 2),  # small model: never a warning, however many frames
        (clip("ViT-L-14"), [20, 20], 2),  # large model, few frames: 40 s
        (ClipConfig(), [40, 40], 64),  # a big CPU
    ],
)
def test_no_warning(config, frames, threads):
    assert cpu_time_warning(config, OFF, frames, 5, threads) is None


@pytest.mark.parametrize("preset", CPU_PRESETS, ids=lambda p: p.name)
def test_preset_files_match_the_presets_and_name_downloadable_weights(preset):
    cfg = load_config(preset.name)  # the shipped preset, by the name the CPU warning gives
    assert cfg.localizer.clip == preset.clip
    assert cfg.localizer.coarse_to_fine == preset.coarse_to_fine
    assert open_clip.get_pretrained_cfg(preset.clip.model, preset.clip.pretrained)  # a standard open_clip tag
    assert cfg.proposer.calls == preset.proposer_calls
    defaults = Config().with_overrides([f"proposer.calls={preset.proposer_calls}"]).model_dump()
    assert {k: v for k, v in cfg.model_dump().items() if k != "localizer"} == {k: v for k, v in defaults.items() if k != "localizer"}
    assert cfg.localizer.model_dump(exclude={"clip", "coarse_to_fine"}) == Config().localizer.model_dump(
        exclude={"clip", "coarse_to_fine"}
    )
