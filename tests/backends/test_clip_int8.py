"""int8 image tower on CPU: same architecture rewritten exactly, embeddings close to fp32, cached apart."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import open_clip
import pytest
import torch
from torch.ao.nn.quantized.dynamic import Linear as DynamicQuantizedLinear

from viddiff.backends.clip import ClipEmbedder, resolve_precision
from viddiff.backends.clip_int8 import LinearSelfAttention, quantize_image_tower, rewrite_self_attention
from viddiff.cache import Cache
from viddiff.config import ClipConfig, ConfigError
from viddiff.testing import TINY_CLIP_CONFIG, TINY_CLIP_MODEL


def cfg(**overrides) -> ClipConfig:
    values = dict(model=TINY_CLIP_MODEL, arch_config=str(TINY_CLIP_CONFIG), pretrained=None, device="cpu")
    values.update(overrides)
    return ClipConfig(**values)


def frames(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, size=(n, 48, 64, 3), dtype=np.uint8)


@pytest.fixture(scope="module")
def tiny_model() -> torch.nn.Module:
    open_clip.add_model_config(TINY_CLIP_CONFIG)
    torch.manual_seed(0)
    return open_clip.create_model(TINY_CLIP_MODEL, pretrained=None).eval()


def test_rewritten_attention_computes_the_same_image_features(tiny_model):
    rewritten = copy.deepcopy(tiny_model)
    assert rewrite_self_attention(rewritten.visual) == 2  # one per transformer layer of the tiny tower
    assert not any(isinstance(m, torch.nn.MultiheadAttention) for m in rewritten.visual.modules())
    images = torch.randn(3, 3, 64, 64)
    with torch.inference_mode():
        torch.testing.assert_close(rewritten.encode_image(images), tiny_model.encode_image(images), atol=1e-5, rtol=1e-5)


def test_only_the_image_tower_is_quantised(tiny_model):
    model = quantize_image_tower(copy.deepcopy(tiny_model))
    visual_linear = [m for m in model.visual.modules() if isinstance(m, torch.nn.Linear)]
    quantised = [m for m in model.visual.modules() if isinstance(m, DynamicQuantizedLinear)]
    assert quantised and not visual_linear  # every linear layer, attention projections included
    assert any(isinstance(m, LinearSelfAttention) for m in model.visual.modules())
    assert not any(isinstance(m, DynamicQuantizedLinear) for m in model.transformer.modules())


def test_int8_embeddings_are_close_to_fp32():
    batch = frames(6)
    fp32 = ClipEmbedder(cfg(precision="fp32")).embed_images(batch)
    int8_embedder = ClipEmbedder(cfg(precision="int8"))
    int8 = int8_embedder.embed_images(batch)
    np.testing.assert_allclose(np.linalg.norm(int8, axis=1), 1.0, atol=1e-5)
    cosine = np.sum(fp32 * int8, axis=1)
    assert cosine.min() >= 0.99
    assert not np.array_equal(fp32, int8)  # the quantised tower really ran
    texts = ["a person squatting", "a person standing"]
    np.testing.assert_allclose(
        int8_embedder.embed_texts(texts), ClipEmbedder(cfg(precision="fp32")).embed_texts(texts), atol=1e-6
    )


def test_int8_and_fp32_are_cached_apart(tmp_path: Path):
    batch = frames(3, seed=1)
    with Cache(tmp_path / "c.sqlite") as cache:
        ClipEmbedder(cfg(precision="fp32"), cache).embed_images(batch)
        int8 = ClipEmbedder(cfg(precision="int8"), cache)
        int8.embed_images(batch)
        assert int8.stats.image_forward == 3 and int8.stats.image_cache_hits == 0
        again = ClipEmbedder(cfg(precision="int8"), cache)
        again.embed_images(batch)
        assert again.stats.image_forward == 0 and again.stats.image_cache_hits == 3


def test_int8_is_refused_off_the_cpu():
    with pytest.raises(ConfigError, match="int8 runs on the CPU only"):
        resolve_precision("int8", "cuda")
    assert resolve_precision("int8", "cpu") == "int8"
    assert resolve_precision("auto", "cpu") == "fp32"
