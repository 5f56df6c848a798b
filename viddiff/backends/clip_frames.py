"""CLIP's own resize and crop, done as each frame is decoded, so only CLIP-sized frames are kept.

open_clip's eval preprocessing first resizes and crops a frame (PIL, bicubic), then turns it into a
normalised tensor. Doing those geometric steps at decode time, with the very transforms the model
will use, keeps a 224x224 frame instead of a 1920x1080 one (41x less memory for a long phone clip);
preprocessing a frame that already has CLIP's size leaves it unchanged (PIL returns a copy for a
resize to the same size, a centre crop of the whole image is the image), so the embeddings are
identical to those of the full frames (``tests/backends/test_clip_frames.py`` pins it).

The transforms are derived from the config as ``open_clip.create_model_and_transforms`` derives them
(built-in model config, pretrained tag, the tag's preprocessing for a local checkpoint), without
building the model, so reading videos never loads CLIP.
"""

from __future__ import annotations

import functools
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np

from viddiff.config import ClipConfig

FrameShrink = Callable[[np.ndarray], np.ndarray]


def clip_frame_shrink(cfg: ClipConfig) -> Optional[FrameShrink]:
    """A frame (uint8 RGB) to the frame CLIP's preprocessing would have resized and cropped it to; ``None`` for
    an embedder whose preprocessing is not open_clip's (plug-ins) or that starts with no geometric step."""
    if cfg.backend != "open_clip":
        return None
    steps = _geometric_steps(eval_transform(cfg).transforms)
    return functools.partial(_apply, tuple(steps)) if steps else None


def eval_transform(cfg: ClipConfig) -> Any:
    """open_clip's eval preprocessing for ``cfg``, as the embedder's model will have it."""
    import open_clip
    from open_clip.transform import PreprocessCfg, image_transform_v2, merge_preprocess_dict

    if cfg.arch_config is not None:
        open_clip.add_model_config(Path(cfg.arch_config).expanduser())
    model_cfg = open_clip.get_model_config(cfg.model)
    if model_cfg is None:
        raise ValueError(f"localizer.clip.model={cfg.model!r} is not a built-in open_clip architecture")
    tag = open_clip.get_pretrained_cfg(cfg.model, cfg.pretrained) if cfg.pretrained else {}
    preprocess = asdict(PreprocessCfg())
    if cfg.checkpoint is None and tag:
        preprocess = merge_preprocess_dict(preprocess, tag)
    preprocess["size"] = model_cfg["vision_cfg"]["image_size"]
    if cfg.checkpoint is not None and tag:  # what ClipEmbedder passes for a checkpoint trained as ``pretrained``
        forced = {k: tag.get(k) for k in ("mean", "std", "interpolation", "resize_mode")}
        preprocess = merge_preprocess_dict(preprocess, {k: v for k, v in forced.items() if v is not None})
    return image_transform_v2(PreprocessCfg(**preprocess), is_train=False)


def _geometric_steps(transforms: Sequence[Any]) -> list[Any]:
    """The leading resize/crop/pad steps, which act on PIL images and are the same when applied twice."""
    from open_clip.transform import CenterCropOrPad, ResizeKeepRatio
    from torchvision import transforms as T

    geometric = (T.Resize, T.CenterCrop, ResizeKeepRatio, CenterCropOrPad)
    steps = []
    for step in transforms:
        if not isinstance(step, geometric):
            break
        steps.append(step)
    return steps


def _apply(steps: tuple[Any, ...], frame: np.ndarray) -> np.ndarray:
    from PIL import Image

    image = Image.fromarray(np.ascontiguousarray(frame))
    for step in steps:
        image = step(image)
    return np.asarray(image)
