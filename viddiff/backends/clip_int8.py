"""Dynamic int8 quantisation of a CLIP image tower for CPU inference.

Dynamic quantisation stores ``nn.Linear`` weights as int8 and quantises each
activation batch on the fly, which fbgemm/oneDNN run with int8 dot-product
instructions. Most of a ViT's compute is in linear layers, but
``nn.MultiheadAttention`` keeps its query/key/value projection as a bare
parameter that the quantiser cannot reach, which would leave a third of the
image tower in fp32. So each self-attention module is first rewritten with
``nn.Linear`` projections (same weights, same result in fp32), then every
linear layer of the image tower is quantised. The text tower stays fp32: it
embeds a handful of strings per sample.
"""

from __future__ import annotations

import warnings

import torch
import torch.nn.functional as F
from torch import nn


class LinearSelfAttention(nn.Module):
    """``nn.MultiheadAttention`` used as self-attention without a mask, with ``nn.Linear`` projections.

    Accepts the module's call signature (``query, key, value, need_weights, attn_mask``) and returns
    ``(output, None)`` like it, so the transformer block that calls it needs no change.
    """

    def __init__(self, attention: nn.MultiheadAttention):
        super().__init__()
        if attention.in_proj_weight is None or attention.bias_k is not None or attention.dropout:
            raise ValueError("only packed-projection self-attention without extra key/value bias or dropout is supported")
        width = attention.embed_dim
        self.num_heads = attention.num_heads
        self.batch_first = attention.batch_first
        self.qkv = nn.Linear(width, 3 * width, bias=attention.in_proj_bias is not None)
        self.proj = nn.Linear(width, width, bias=attention.out_proj.bias is not None)
        with torch.no_grad():
            self.qkv.weight.copy_(attention.in_proj_weight)
            if attention.in_proj_bias is not None:
                self.qkv.bias.copy_(attention.in_proj_bias)
            self.proj.weight.copy_(attention.out_proj.weight)
            if attention.out_proj.bias is not None:
                self.proj.bias.copy_(attention.out_proj.bias)

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        need_weights: bool = False,
        attn_mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, None]:
        if key is not query or value is not query or attn_mask is not None or need_weights:
            raise ValueError("LinearSelfAttention handles unmasked self-attention only")
        x = query if self.batch_first else query.transpose(0, 1)
        batch, length, width = x.shape
        q, k, v = self.qkv(x).reshape(batch, length, 3, self.num_heads, width // self.num_heads).permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(batch, length, width)
        out = self.proj(out)
        return (out if self.batch_first else out.transpose(0, 1)), None


def rewrite_self_attention(module: nn.Module) -> int:
    """Replace every ``nn.MultiheadAttention`` under ``module`` in place; returns how many were replaced."""
    replaced = 0
    for name, child in module.named_children():
        if isinstance(child, nn.MultiheadAttention):
            setattr(module, name, LinearSelfAttention(child))
            replaced += 1
        else:
            replaced += rewrite_self_attention(child)
    return replaced


def quantize_image_tower(model: nn.Module) -> nn.Module:
    """Quantise ``model.visual``'s linear layers to int8 (dynamic), in place; returns ``model``."""
    from torch.ao.quantization import quantize_dynamic

    visual = model.visual
    rewrite_self_attention(visual)
    with warnings.catch_warnings():
        # torch.ao.quantization is deprecated in favour of torchao, but its fbgemm dynamic kernels are
        # what runs fastest on CPU today and need no extra package.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        model.visual = quantize_dynamic(visual, {nn.Linear}, dtype=torch.qint8)
    return model
