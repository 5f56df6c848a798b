"""Frames kept at CLIP's size as they are decoded embed exactly as the full frames do (issue 32, item 5)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from viddiff.backends.clip import ClipEmbedder
from viddiff.backends.clip_frames import clip_frame_shrink, eval_transform
from viddiff.config import ClipConfig
from viddiff.testing import TINY_CLIP_CONFIG, TINY_CLIP_MODEL
from viddiff.video import read_video
from viddiff.video.write import write_video

TINY = ClipConfig(model=TINY_CLIP_MODEL, arch_config=str(TINY_CLIP_CONFIG), pretrained=None, device="cpu")
SMALL_BUILTIN = ClipConfig(model="ViT-S-32-alt", pretrained=None, device="cpu")  # 224 px, as the default's


@pytest.fixture(scope="module")
def phone_clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 16:9 clip with detail at every scale (noise on gradients), so any resampling difference would show."""
    rng = np.random.default_rng(3)
    y, x = np.mgrid[0:270, 0:480]
    frames = []
    for i in range(8):
        base = np.stack([(x + 9 * i) % 256, (y * 2 + 5 * i) % 256, (x + y) % 256], axis=-1)
        frames.append(np.clip(base + rng.integers(-40, 40, base.shape), 0, 255).astype(np.uint8))
    return write_video(tmp_path_factory.mktemp("clip-frames") / "phone.mp4", frames, 30)


@pytest.mark.parametrize("cfg", [TINY, SMALL_BUILTIN], ids=["tiny", "ViT-S-32-alt"])
def test_the_derived_transform_is_the_models(cfg: ClipConfig) -> None:
    loaded = ClipEmbedder(cfg)._model().preprocess
    assert repr(eval_transform(cfg)) == repr(loaded)


@pytest.mark.parametrize("cfg", [TINY, SMALL_BUILTIN], ids=["tiny", "ViT-S-32-alt"])
def test_shrunk_frames_embed_exactly_as_the_full_frames(phone_clip: Path, cfg: ClipConfig) -> None:
    shrink = clip_frame_shrink(cfg)
    assert shrink is not None
    whole = read_video(phone_clip, max_side=1920)
    small = read_video(phone_clip, max_side=1920, shrink=shrink)
    side = eval_transform(cfg).transforms[1].size[0]
    assert small.frames.shape == (8, side, side, 3) and whole.frames.shape == (8, 270, 480, 3)
    assert small.size == (480, 270)
    assert (whole.backend, small.backend) == ("decord", "pyav")  # a shrinking read streams one frame at a time
    embedder = ClipEmbedder(cfg)
    assert np.array_equal(embedder.embed_images(small.frames), embedder.embed_images(whole.frames))


def test_plug_in_embedders_keep_whole_frames() -> None:
    assert clip_frame_shrink(TINY.model_copy(update={"backend": "my-embedder"})) is None
