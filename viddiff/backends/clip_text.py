"""CLIP text embeddings without running the padding through the text tower.

open_clip pads every string to the context length (77 tokens) and ``encode_text`` runs all of them through
every layer. In CLIP's text tower attention is causal and the embedding is read at the end-of-text token, so
no token after the longest string's end-of-text token can change any string's embedding: the batch is cut
there first. Retrieval strings are 10–20 tokens long, so the tower does about a quarter of the work
(``bench/clip_text.py``). The embeddings agree with ``encode_text`` to float rounding (about 1e-7 once
normalised, what a different batch composition gives as well). A model whose text tower is not causal or pools elsewhere goes
through ``encode_text`` unchanged.
"""

from __future__ import annotations

from typing import Optional

import open_clip
import torch
from open_clip.transformer import text_global_pool


def encode_text(model: torch.nn.Module, tokens: torch.Tensor) -> torch.Tensor:
    """``model.encode_text(tokens)`` (unnormalised), skipping the padding where that cannot change the result."""
    length = needed_length(model, tokens)
    if length is None or length >= tokens.shape[1]:
        return model.encode_text(tokens)
    tokens = tokens[:, :length]
    cast_dtype = model.transformer.get_cast_dtype()
    x = model.token_embedding(tokens).to(cast_dtype) + model.positional_embedding[:length].to(cast_dtype)
    x = model.transformer(x, attn_mask=model.attn_mask[:length, :length])
    x = model.ln_final(x)
    x = text_global_pool(x, tokens, model.text_pool_type, eos_token_id=getattr(model, "text_eos_id", None))
    projection = model.text_projection
    if projection is None:
        return x
    return projection(x) if isinstance(projection, torch.nn.Linear) else x @ projection


def needed_length(model: torch.nn.Module, tokens: torch.Tensor) -> Optional[int]:
    """Tokens up to and including the last end-of-text token of the batch; ``None`` unless the model's text
    tower is causal and pooled at that token (otherwise every token may matter)."""
    if type(model) is not open_clip.CLIP or getattr(model, "attn_mask", None) is None or tokens.ndim != 2:
        return None
    pool_type = getattr(model, "text_pool_type", None)
    if pool_type == "argmax":
        ends = tokens.argmax(dim=-1)
    elif pool_type == "eos" and getattr(model, "text_eos_id", None) is not None:
        ends = (tokens == model.text_eos_id).int().argmax(dim=-1)
    else:
        return None
    return int(ends.max()) + 1
