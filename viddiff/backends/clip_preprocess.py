"""open_clip's image preprocessing as batched torch ops, to run where the model runs.

open_clip preprocesses one PIL image at a time on the CPU (resize the short side with antialiased bicubic,
centre-crop, scale to [0, 1], normalise). On a GPU that single CPU thread, not the model, limits the frames
per second. :func:`tensor_transform` reads the steps of the model's own transform and redoes them on a
``(N, 3, H, W)`` uint8 batch with ``torchvision.transforms.functional`` on the batch's device, rounding the
resized pixels to uint8 as PIL does. The result equals PIL's to one grey level (cosine ≥ 0.9999 of the
embeddings; ``tests/backends/test_clip_batching.py``). A transform with a step not known here gets
``None``, and the caller keeps PIL.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import torch
import torchvision.transforms.functional as TF
from torchvision import transforms as T

TensorTransform = Callable[[torch.Tensor], torch.Tensor]
_PASS_THROUGH = ("MaybeConvertMode", "_convert_to_rgb")
"""Steps that leave an RGB array unchanged (they convert PIL modes)."""
_TO_TENSOR = ("MaybeToTensor", "ToTensor")


def tensor_transform(preprocess: Any) -> Optional[TensorTransform]:
    """``preprocess`` (a torchvision ``Compose`` of open_clip's eval steps) as a function of a uint8 batch
    ``(N, 3, H, W)`` returning float32 ``(N, 3, S, S)``; ``None`` if a step is not one this module redoes."""
    steps = getattr(preprocess, "transforms", None)
    if steps is None:
        return None
    ops: list[TensorTransform] = []
    scaled = False
    for step in steps:
        name = getattr(step, "__name__", type(step).__name__)
        if name in _PASS_THROUGH:
            continue
        if name in _TO_TENSOR:
            ops.append(lambda x: x.div_(255.0))
            scaled = True
        elif isinstance(step, T.Resize) and not scaled:
            ops.append(_resize(step))
        elif isinstance(step, T.CenterCrop) and not scaled:
            size = list(step.size)
            ops.append(lambda x, size=size: TF.center_crop(x, size))
        elif isinstance(step, T.Normalize) and scaled:
            mean, std = list(step.mean), list(step.std)
            ops.append(lambda x, mean=mean, std=std: TF.normalize(x, mean, std, inplace=True))
        else:
            return None
    if not scaled:
        return None

    def transform(frames: torch.Tensor) -> torch.Tensor:
        # A copy of its own, so scaling and normalising work in place: one batch-sized float array, not three.
        x = frames.to(torch.float32, copy=True)
        for op in ops:
            x = op(x)
        return x

    return transform


def _resize(step: T.Resize) -> TensorTransform:
    """PIL resizes uint8 to uint8: the float result is rounded and clipped the same way."""
    size, interpolation, max_size = step.size, step.interpolation, step.max_size
    antialias = True if step.antialias is None else step.antialias

    def resize(x: torch.Tensor) -> torch.Tensor:
        out = TF.resize(x, size, interpolation=interpolation, max_size=max_size, antialias=antialias)
        return out.round_().clamp_(0, 255)

    return resize
