"""Micro-batched CLIP and preprocessing on the device give today's embeddings and keyframes (fp32, CPU).

"Today's path" is ``localizer.clip.micro_batch=false`` (each call alone under a lock, open_clip's PIL
transform frame by frame), which the micro-batched path replaced as the default.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import open_clip
import pytest
import torch
from PIL import Image
from torchvision import transforms as T

from viddiff.backends.clip import ClipEmbedder
from viddiff.backends.clip_preprocess import tensor_transform
from viddiff.cli import main
from viddiff.config import ClipConfig
from viddiff.data.synth_actions import ACTIONS
from viddiff.data.synthetic import render_performance, sample_pair
from viddiff.store import ResultsStore
from viddiff.testing import TINY_CLIP_CONFIG, TINY_CLIP_MODEL

COSINE = 0.9999


def _cfg(**overrides: object) -> ClipConfig:
    values: dict[str, object] = {
        "model": TINY_CLIP_MODEL, "arch_config": str(TINY_CLIP_CONFIG), "pretrained": None, "device": "cpu",
        "batch_size": 8, "precision": "fp32",
    }
    return ClipConfig(**{**values, **overrides})


@pytest.fixture(scope="module")
def frames() -> np.ndarray:
    """Frames of the synthetic squat upscaled to 320x240 (a real resize, as from a video), plus noise frames."""
    spec = ACTIONS[0]
    params = sample_pair(spec, np.random.default_rng(1))[0]
    rendered = [np.asarray(Image.fromarray(f).resize((320, 240), Image.BICUBIC)) for f in render_performance(spec, params)]
    noise = np.random.default_rng(2).integers(0, 256, size=(4, 240, 320, 3), dtype=np.uint8)
    return np.concatenate([np.stack(rendered[::2][:20]), noise])


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def test_concurrent_callers_share_batches_and_get_todays_embeddings(frames: np.ndarray) -> None:
    today = ClipEmbedder(_cfg(micro_batch=False)).embed_images(frames)
    batched = ClipEmbedder(_cfg(batch_wait_ms=50))
    requests = [frames[i : i + 3] for i in range(0, len(frames), 3)]  # 8 callers of 3 frames
    with ThreadPoolExecutor(len(requests)) as pool:
        out = np.concatenate(list(pool.map(batched.embed_images, requests)))
    assert _cosines(out, today).min() >= COSINE
    assert batched.image_batcher.batches < len(requests)  # callers shared batches
    assert batched.stats.image_forward == batched.image_batcher.rows > 0  # counted once each, across threads
    texts = ["a person squatting", "standing up straight", "the lowest point of the squat"]
    assert _cosines(batched.embed_texts(texts), ClipEmbedder(_cfg(micro_batch=False)).embed_texts(texts)).min() >= COSINE


def test_preprocessing_as_torch_ops_equals_open_clips_transform(frames: np.ndarray) -> None:
    pil = ClipEmbedder(_cfg(preprocess="pil"))
    on_device = ClipEmbedder(_cfg(preprocess="torch"))
    assert _cosines(on_device.embed_images(frames), pil.embed_images(frames)).min() >= COSINE
    # The pixels themselves: within one grey level (1/255 over the normalising std) of PIL's.
    preprocess = open_clip.image_transform(224, is_train=False)  # what ViT-B-32 and ViT-bigG-14 use
    transform = tensor_transform(preprocess)
    assert transform is not None
    expected = torch.stack([preprocess(Image.fromarray(f)) for f in frames[:6]])
    got = transform(torch.from_numpy(frames[:6]).permute(0, 3, 1, 2))
    assert got.shape == expected.shape == (6, 3, 224, 224)
    assert (got - expected).abs().max().item() <= 1.01 / 255 / min(preprocess.transforms[-1].std)


def test_frames_of_the_input_size_become_the_very_tensors_pil_gives_on_the_cpu(frames: np.ndarray) -> None:
    """Frames already shrunk to CLIP's size (as videos are read) skip PIL: scaling and normalising the batch at
    once is the same float arithmetic, so the tensors, not only the embeddings, are equal."""
    embedder = ClipEmbedder(_cfg(preprocess="pil"))
    loaded = embedder._model()
    side = loaded.input_size[0]
    small = np.stack([np.asarray(Image.fromarray(f).resize((side, side), Image.BICUBIC)) for f in frames])
    expected = torch.stack([loaded.preprocess(Image.fromarray(f)) for f in small])
    assert loaded.on_device is None and loaded.as_tensors is not None and small.shape[1:3] == loaded.input_size
    assert torch.equal(embedder._pixels(list(small)), expected)
    assert torch.equal(embedder._pixels(list(frames[:2])), torch.stack([loaded.preprocess(Image.fromarray(f)) for f in frames[:2]]))


def test_the_in_place_steps_leave_the_callers_frames_alone(frames: np.ndarray) -> None:
    """Scaling and normalising run in place (one float batch, not three: bench/memory.py) on the transform's own
    copy: the frames passed in, uint8 or already float, are unchanged."""
    transform = tensor_transform(open_clip.image_transform(224, is_train=False))
    assert transform is not None
    batch = torch.from_numpy(frames[:2]).permute(0, 3, 1, 2)
    as_float = batch.float()
    kept, kept_float = batch.clone(), as_float.clone()
    assert torch.equal(transform(batch), transform(as_float))
    assert torch.equal(batch, kept) and torch.equal(as_float, kept_float)


def test_a_transform_with_an_unknown_step_keeps_pil() -> None:
    assert tensor_transform(T.Compose([T.Resize(224), T.GaussianBlur(3), T.ToTensor()])) is None
    assert tensor_transform(lambda image: image) is None


def _keyframes(out: Path) -> dict[str, tuple]:
    return {
        key: (result.segmentations, [(k.key, k.a.frame_indices, k.b.frame_indices) for k in result.keyframes])
        for key, result in ResultsStore(out).load().items()
    }


def test_identical_keyframes_and_predictions_on_the_synthetic_benchmark(synth_dir, tmp_path, offline_sets) -> None:
    """The whole benchmark with its samples in flight together (their frames batched together), vs today."""
    outs = {}
    for way in ("false", "true"):
        outs[way] = tmp_path / f"micro-batch-{way}"
        args = [
            "-q", "run", "--dataset", str(synth_dir), "--mode", "closed", "--output", str(outs[way]), *offline_sets,
            "--set", f"localizer.clip.micro_batch={way}", "--set", f"cache.path={tmp_path / way}.sqlite",
            "--set", "localizer.clip.batch_wait_ms=20",
        ]
        assert main(args) == 0
    assert _keyframes(outs["true"]) == _keyframes(outs["false"])
    assert json.loads((outs["true"] / "predictions.json").read_text()) == json.loads(
        (outs["false"] / "predictions.json").read_text()
    )
    usage = json.loads((outs["true"] / "usage.json").read_text())["clip"]
    assert usage["image_forward"] > 0
