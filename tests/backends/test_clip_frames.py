"""Frames kept at CLIP's size as they are decoded embed as the full frames do (issue 32, item 5; issue 33: fused)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from viddiff.backends.clip import ClipEmbedder
from viddiff.backends.clip_frames import ShortSideResizeCrop, clip_frame_shrink, eval_transform
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
    from_small, from_whole = embedder.embed_images(small.frames), embedder.embed_images(whole.frames)
    cosine = (from_small * from_whole).sum(1) / np.linalg.norm(from_small, axis=1) / np.linalg.norm(from_whole, axis=1)
    assert cosine.min() > 0.99999


@pytest.mark.parametrize("size", [(270, 480), (1080, 1920), (1920, 1080), (224, 224), (100, 60), (301, 227), (720, 960)])
def test_the_fused_resize_and_crop_is_the_transforms_within_one_grey_level(size: tuple[int, int]) -> None:
    from PIL import Image

    shrink = clip_frame_shrink(SMALL_BUILTIN)
    assert isinstance(shrink, ShortSideResizeCrop)
    rng = np.random.default_rng(size[0])
    y, x = np.mgrid[0 : size[0], 0 : size[1]]
    frame = np.clip(np.stack([x % 256, (2 * y) % 256, (x + y) % 256], -1) + rng.integers(-60, 60, (*size, 3)), 0, 255)
    frame = frame.astype(np.uint8)
    steps = eval_transform(SMALL_BUILTIN).transforms[:2]
    expected = Image.fromarray(frame)
    for step in steps:
        expected = step(expected)
    fused = shrink(frame)
    assert fused.shape == np.asarray(expected).shape == (224, 224, 3)
    difference = np.abs(fused.astype(int) - np.asarray(expected).astype(int))
    assert difference.max() <= 1 and difference.mean() < 0.01


def test_plug_in_embedders_keep_whole_frames() -> None:
    assert clip_frame_shrink(TINY.model_copy(update={"backend": "my-embedder"})) is None
