"""CLIP text embeddings cut after the last end-of-text token: the same embeddings, a shorter pass."""

from __future__ import annotations

import copy

import numpy as np
import open_clip
import pytest
import torch

from viddiff.backends.clip import ClipEmbedder
from viddiff.backends.clip_text import encode_text, needed_length
from viddiff.config import ClipConfig
from viddiff.testing import TINY_CLIP_CONFIG, TINY_CLIP_MODEL

STRINGS = ["A photo of a person squatting", "hips below the knees at the bottom of the squat", "standing", ""]


@pytest.fixture(scope="module")
def tiny_model() -> torch.nn.Module:
    open_clip.add_model_config(TINY_CLIP_CONFIG)
    torch.manual_seed(0)
    return open_clip.create_model(TINY_CLIP_MODEL, pretrained=None).eval()


@pytest.fixture(scope="module")
def tokens() -> torch.Tensor:
    return open_clip.get_tokenizer(TINY_CLIP_MODEL)(STRINGS)


def seen_lengths(model: torch.nn.Module) -> list[int]:
    """The sequence lengths the text transformer is run on, recorded by a forward hook."""
    lengths: list[int] = []
    model.transformer.register_forward_hook(lambda _module, args, _out: lengths.append(args[0].shape[1]))
    return lengths


def test_the_cut_batch_gives_encode_texts_embeddings(tiny_model, tokens):
    longest = int((tokens != 0).sum(dim=-1).max())  # start, words and end-of-text tokens
    assert needed_length(tiny_model, tokens) == longest < tokens.shape[1] == 77
    model = copy.deepcopy(tiny_model)
    lengths = seen_lengths(model)
    with torch.inference_mode():
        cut, full = encode_text(model, tokens), model.encode_text(tokens)
    assert lengths == [longest, 77]
    torch.testing.assert_close(cut, full, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("pool_type", ["last", "first", "none"])
def test_a_tower_pooled_elsewhere_runs_every_token(tiny_model, tokens, pool_type):
    model = copy.deepcopy(tiny_model)
    model.text_pool_type = pool_type
    lengths = seen_lengths(model)
    assert needed_length(model, tokens) is None
    with torch.inference_mode():
        assert torch.equal(encode_text(model, tokens), model.encode_text(tokens))
    assert lengths == [77, 77]


def test_a_tower_without_a_causal_mask_runs_every_token(tiny_model, tokens):
    model = copy.deepcopy(tiny_model)
    model.attn_mask = None
    assert needed_length(model, tokens) is None


def test_the_embedder_runs_the_text_tower_on_the_cut_batch():
    clip = ClipEmbedder(ClipConfig(model=TINY_CLIP_MODEL, arch_config=str(TINY_CLIP_CONFIG), pretrained=None, device="cpu"))
    model = clip._model().model
    lengths = seen_lengths(model)
    got = clip.embed_texts(STRINGS)
    assert lengths and max(lengths) < 77
    with torch.inference_mode():
        full = torch.nn.functional.normalize(model.encode_text(open_clip.get_tokenizer(TINY_CLIP_MODEL)(STRINGS)), dim=-1)
    np.testing.assert_allclose(got, full.numpy(), atol=1e-5)
