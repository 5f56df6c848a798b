"""ClipEmbedder on CPU with random weights (offline, the real open_clip code path).

Most tests use ``viddiff-test-tiny-clip`` (``viddiff/testing/viddiff-test-tiny-clip.json``,
given as ``localizer.clip.arch_config``; ~3 M parameters, 32-d) so that building a
model costs milliseconds; one test runs the smallest built-in, ``ViT-S-32-alt``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Iterator

import numpy as np
import open_clip
import pytest
import torch
from PIL import Image

from viddiff.backends import clip as clip_mod
from viddiff.backends.clip import ClipEmbedder, EmbedInputError, frame_hash
from viddiff.cache import Cache
from viddiff.config import ClipConfig, ConfigError
from viddiff.errors import ModelLoadError
from viddiff.testing import TINY_CLIP_CONFIG, TINY_CLIP_MODEL

MODEL = TINY_CLIP_MODEL
DIM = 32
TINY_CONFIG = TINY_CLIP_CONFIG


def _cfg(**overrides: object) -> ClipConfig:
    values: dict[str, object] = {"model": MODEL, "pretrained": None, "device": "cpu", "batch_size": 4}
    values.update(overrides)
    if values["model"] == MODEL:
        values.setdefault("arch_config", str(TINY_CONFIG))
    return ClipConfig(**values)


def _frames(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, size=(n, 40, 48, 3), dtype=np.uint8)


@pytest.fixture(scope="module")
def embedder() -> ClipEmbedder:
    return ClipEmbedder(_cfg())


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[Cache]:
    with Cache(tmp_path / "c.sqlite") as c:
        yield c


def test_shapes_dtype_and_unit_norm(embedder: ClipEmbedder) -> None:
    images = embedder.embed_images(_frames(5))
    texts = embedder.embed_texts(["a photo of a person squatting", "a photo of a person standing"])
    assert images.shape == (5, DIM) and images.dtype == np.float32
    assert texts.shape == (2, DIM) and texts.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(images, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(texts, axis=1), 1.0, atol=1e-5)


def test_builtin_architecture_embeds() -> None:
    emb = ClipEmbedder(_cfg(model="ViT-S-32-alt"))
    images = emb.embed_images(_frames(2))
    assert images.shape == (2, 256)
    np.testing.assert_allclose(np.linalg.norm(images, axis=1), 1.0, atol=1e-5)
    assert emb.embed_texts(["a photo of a squat"]).shape == (1, 256)


def test_empty_inputs_keep_embedding_width(embedder: ClipEmbedder) -> None:
    assert embedder.embed_images(np.zeros((0, 8, 8, 3), np.uint8)).shape == (0, DIM)
    assert embedder.embed_texts([]).shape == (0, DIM)


def test_list_of_differently_sized_frames(embedder: ClipEmbedder) -> None:
    frames = [_frames(1, seed=1)[0], np.zeros((64, 30, 3), np.uint8)]
    assert embedder.embed_images(frames).shape == (2, DIM)


def test_batch_size_does_not_change_embeddings() -> None:
    frames = _frames(7)
    one = ClipEmbedder(_cfg(batch_size=1)).embed_images(frames)
    four = ClipEmbedder(_cfg(batch_size=4)).embed_images(frames)
    np.testing.assert_allclose(one, four, atol=1e-5)


def test_different_frames_and_texts_differ(embedder: ClipEmbedder) -> None:
    images = embedder.embed_images(_frames(2, seed=3))
    texts = embedder.embed_texts(["knees bent", "arms overhead"])
    assert not np.allclose(images[0], images[1], atol=1e-3)
    assert not np.allclose(texts[0], texts[1], atol=1e-3)


def test_duplicates_in_one_call_are_embedded_once() -> None:
    emb = ClipEmbedder(_cfg())
    a, b = _frames(2, seed=4)
    out = emb.embed_images(np.stack([a, b, a, a]))
    assert emb.stats.image_forward == 2
    np.testing.assert_array_equal(out[0], out[2])
    np.testing.assert_array_equal(out[0], out[3])
    texts = emb.embed_texts(["x", "y", "x"])
    assert emb.stats.text_forward == 2
    np.testing.assert_array_equal(texts[0], texts[2])


def test_second_call_hits_cache(cache: Cache) -> None:
    emb = ClipEmbedder(_cfg(), cache)
    frames = _frames(6, seed=5)
    first = emb.embed_images(frames)
    first_texts = emb.embed_texts(["a", "b"])
    assert (emb.stats.image_forward, emb.stats.text_forward) == (6, 2)
    again = emb.embed_images(frames)
    again_texts = emb.embed_texts(["b", "a"])
    assert (emb.stats.image_forward, emb.stats.text_forward) == (6, 2)
    assert (emb.stats.image_cache_hits, emb.stats.text_cache_hits) == (6, 2)
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(first_texts[::-1], again_texts)


def test_new_instance_reuses_cache_without_building_model(cache: Cache, monkeypatch: pytest.MonkeyPatch) -> None:
    frames = _frames(5, seed=6)
    first = ClipEmbedder(_cfg(), cache).embed_images(frames)
    texts = ClipEmbedder(_cfg(), cache).embed_texts(["stand"])

    def no_model(*args: object, **kwargs: object) -> None:
        raise AssertionError("model built although every item was cached")

    monkeypatch.setattr(clip_mod.open_clip, "create_model_and_transforms", no_model)
    fresh = ClipEmbedder(_cfg(), cache)
    np.testing.assert_array_equal(fresh.embed_images(frames), first)
    np.testing.assert_array_equal(fresh.embed_texts(["stand"]), texts)
    assert fresh.stats.image_forward == 0 and fresh.stats.text_forward == 0
    assert fresh.stats.image_cache_hits == 5


def test_partial_cache_hit_embeds_only_new_frames(cache: Cache) -> None:
    old, new = _frames(3, seed=7), _frames(2, seed=8)
    emb = ClipEmbedder(_cfg(), cache)
    emb.embed_images(old)
    out = emb.embed_images(np.concatenate([new[:1], old, new[1:]]))
    assert emb.stats.image_forward == 3 + 2
    assert emb.stats.image_cache_hits == 3
    np.testing.assert_allclose(out[1:4], emb.embed_images(old), atol=0)


def test_precision_is_part_of_the_cache_key(cache: Cache) -> None:
    frames = _frames(2, seed=9)
    fp32 = ClipEmbedder(_cfg(), cache).embed_images(frames)
    bf16 = ClipEmbedder(_cfg(precision="bf16"), cache)
    low = bf16.embed_images(frames)
    assert bf16.stats.image_forward == 2
    np.testing.assert_allclose(low, fp32, atol=0.1)


def test_random_init_is_deterministic_and_leaves_global_rng_alone() -> None:
    frames = _frames(3, seed=10)
    torch.manual_seed(123)
    expected_draw = torch.rand(3)
    torch.manual_seed(123)
    first_embedder = ClipEmbedder(_cfg())
    first = first_embedder.embed_images(frames)
    assert torch.equal(torch.rand(3), expected_draw)
    second = ClipEmbedder(_cfg())
    np.testing.assert_array_equal(second.embed_images(frames), first)
    assert second.model_id == first_embedder.model_id
    assert second.model_id.startswith(f"{MODEL}:config-sha256=")
    assert second.model_id.endswith(f":random-init:0:open_clip-{open_clip.__version__}")


def test_checkpoint_file_is_loaded(tmp_path: Path) -> None:
    torch.manual_seed(7)
    model, _, preprocess = open_clip.create_model_and_transforms(MODEL, pretrained=None)
    model.eval()
    path = tmp_path / "open_clip_pytorch_model.bin"
    torch.save(model.state_dict(), path)
    frames = _frames(3, seed=11)
    with torch.inference_mode():
        pixels = torch.stack([preprocess(Image.fromarray(f)) for f in frames])
        expected = torch.nn.functional.normalize(model.encode_image(pixels), dim=-1).numpy()

    emb = ClipEmbedder(_cfg(checkpoint=str(path)))
    np.testing.assert_allclose(emb.embed_images(frames), expected, atol=1e-5)
    assert emb.model_id.startswith(f"{MODEL}:checkpoint-sha256=")
    assert not np.allclose(ClipEmbedder(_cfg()).embed_images(frames), expected, atol=1e-3)


def test_checkpoint_takes_preprocessing_from_its_pretrained_tag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "vit-b-32-openai.bin"
    path.write_bytes(b"stand-in")
    seen: dict[str, object] = {}

    def capture(model_name: str, **kwargs: object) -> None:
        seen.update(kwargs, model_name=model_name)
        raise RuntimeError("stop after capturing the arguments")

    monkeypatch.setattr(clip_mod.open_clip, "create_model_and_transforms", capture)
    emb = ClipEmbedder(_cfg(model="ViT-B-32", pretrained="openai", checkpoint=str(path)))
    assert emb.model_id.endswith(":preprocess=openai")
    with pytest.raises(ModelLoadError, match="vit-b-32-openai.bin"):
        emb.embed_texts(["x"])
    assert seen["model_name"] == "ViT-B-32" and seen["pretrained"] == str(path)
    assert seen["force_quick_gelu"] is True
    assert seen["image_mean"] == open_clip.get_pretrained_cfg("ViT-B-32", "openai")["mean"]


def test_checkpoint_model_id_follows_content_not_path(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.bin", tmp_path / "b.bin", tmp_path / "c.bin"
    a.write_bytes(b"weights-1")
    b.write_bytes(b"weights-1")
    c.write_bytes(b"weights-2")
    ids = [ClipEmbedder(_cfg(checkpoint=str(p))).model_id for p in (a, b, c)]
    assert ids[0] == ids[1] != ids[2]


def test_wrong_checkpoint_architecture_is_a_model_load_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.bin"
    torch.save({"not": torch.zeros(1)}, bad)
    emb = ClipEmbedder(_cfg(checkpoint=str(bad)))
    with pytest.raises(ModelLoadError, match="bad.bin"):
        emb.embed_texts(["x"])


@pytest.mark.parametrize(
    ("overrides", "needle"),
    [
        ({"model": "ViT-Nope-99"}, "not a built-in open_clip architecture"),
        ({"pretrained": "no_such_tag"}, f"not a pretrained tag of {MODEL}"),
        ({"checkpoint": "/nonexistent/open_clip_pytorch_model.bin"}, "localizer.clip.checkpoint="),
    ],
)
def test_bad_model_choice_fails_before_loading(overrides: dict[str, object], needle: str) -> None:
    with pytest.raises(ModelLoadError, match=needle):
        ClipEmbedder(_cfg(**overrides))


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_device_without_cuda_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="localizer.clip.device"):
        ClipEmbedder(_cfg(device="cuda"))


@pytest.mark.parametrize(
    "frames",
    [
        np.zeros((2, 8, 8), np.uint8),
        np.zeros((2, 8, 8, 3), np.float32),
        np.zeros((8, 8, 3), np.uint8),
        [np.zeros((8, 8, 4), np.uint8)],
    ],
)
def test_malformed_frames_are_rejected(embedder: ClipEmbedder, frames: object) -> None:
    with pytest.raises(EmbedInputError, match="uint8 RGB"):
        embedder.embed_images(frames)  # type: ignore[arg-type]


def test_non_string_text_is_rejected(embedder: ClipEmbedder) -> None:
    with pytest.raises(EmbedInputError, match="CLIP text 1"):
        embedder.embed_texts(["ok", 3])  # type: ignore[list-item]


def test_frame_hash_depends_on_shape_and_content() -> None:
    frame = _frames(1, seed=12)[0]
    assert frame_hash(frame) == frame_hash(frame.copy())
    assert frame_hash(frame) == frame_hash(np.asfortranarray(frame))
    assert frame_hash(frame) != frame_hash(frame.reshape(48, 40, 3))
    changed = frame.copy()
    changed[0, 0, 0] ^= 1
    assert frame_hash(frame) != frame_hash(changed)


@pytest.mark.timeout(120)
def test_offline_download_fails_fast_with_instructions(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        from viddiff.backends.clip import ClipEmbedder
        from viddiff.config import ClipConfig
        from viddiff.errors import ModelLoadError
        emb = ClipEmbedder(ClipConfig(model="ViT-B-32", pretrained="laion2b_s34b_b79k", device="cpu"))
        try:
            emb.embed_texts(["a photo"])
        except ModelLoadError as exc:
            print("MODEL_LOAD_ERROR", exc)
        """
    )
    # An empty HF cache, so weights a developer may have downloaded cannot satisfy the load.
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE")}
    env.update(HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path / "hf"), PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=110)
    assert proc.returncode == 0, proc.stderr
    message = proc.stdout
    assert "MODEL_LOAD_ERROR" in message
    assert "'ViT-B-32'" in message and "'laion2b_s34b_b79k'" in message
    assert "localizer.clip.checkpoint=/path/to/open_clip_pytorch_model.bin" in message
    assert "HF_HOME" in message
