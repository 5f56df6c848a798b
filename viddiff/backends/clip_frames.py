"""CLIP's own resize and crop, done as each frame is decoded, so only CLIP-sized frames are kept.

open_clip's eval preprocessing first resizes and crops a frame (PIL, bicubic), then turns it into a
normalised tensor. Doing those geometric steps at decode time, with the very transforms the model
will use, keeps a 224x224 frame instead of a 1920x1080 one (41x less memory for a long phone clip);
preprocessing a frame that already has CLIP's size leaves it unchanged (PIL returns a copy for a
resize to the same size, a centre crop of the whole image is the image).

The usual pair, shortest side to N then an NxN centre crop, runs as one PIL resize of just the region
the crop keeps (``box``): the same filter at the same scale, so the same pixels, except that a rare
pixel is one grey level off where the filter's weights round the other way; it saves the columns (or
rows) the crop throws away: 0.6x the time on a 16:9 frame. ``tests/backends/test_clip_frames.py`` pins
both: at most one grey level, and embeddings within cosine 0.99999 of the full frames'.

The transforms are derived from the config as ``open_clip.create_model_and_transforms`` derives them
(built-in model config, pretrained tag, the tag's preprocessing for a local checkpoint), without
building the model, so reading videos never loads CLIP.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass
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
    if not steps:
        return None
    return ShortSideResizeCrop.of(steps) or functools.partial(_apply, tuple(steps))


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


@dataclass(frozen=True)
class ShortSideResizeCrop:
    """torchvision's ``Resize(N)`` (shortest side, PIL) then ``CenterCrop``, as one resize of the kept region."""

    short_side: int
    crop_height: int
    crop_width: int
    resample: int
    """PIL's filter number for the transform's interpolation."""

    @classmethod
    def of(cls, steps: Sequence[Any]) -> Optional["ShortSideResizeCrop"]:
        """The fused form of ``steps`` when they are exactly that pair, else ``None`` (the steps run as they are)."""
        from torchvision import transforms as T
        from torchvision.transforms.functional import InterpolationMode, pil_modes_mapping

        if len(steps) != 2 or type(steps[0]) is not T.Resize or type(steps[1]) is not T.CenterCrop:
            return None
        resize, crop = steps
        size = [resize.size] if isinstance(resize.size, int) else list(resize.size)
        if len(size) != 1 or resize.max_size is not None:
            return None
        if resize.interpolation not in (InterpolationMode.BICUBIC, InterpolationMode.BILINEAR):
            return None
        crop_height, crop_width = crop.size
        return cls(size[0], crop_height, crop_width, pil_modes_mapping[resize.interpolation])

    def __call__(self, frame: np.ndarray) -> np.ndarray:
        from PIL import Image

        height, width = frame.shape[:2]
        short, long = (width, height) if width <= height else (height, width)
        new_long = int(self.short_side * long / short)  # torchvision's rounding
        new_width, new_height = (self.short_side, new_long) if width <= height else (new_long, self.short_side)
        if self.crop_width > new_width or self.crop_height > new_height:  # the crop would pad: do it step by step
            image = Image.fromarray(np.ascontiguousarray(frame)).resize((new_width, new_height), self.resample)
            return np.asarray(_center_crop(image, self.crop_height, self.crop_width))
        top = int(round((new_height - self.crop_height) / 2.0))  # torchvision's CenterCrop offsets
        left = int(round((new_width - self.crop_width) / 2.0))
        scale_x, scale_y = width / new_width, height / new_height
        x0, x1 = left * scale_x, (left + self.crop_width) * scale_x
        y0, y1 = top * scale_y, (top + self.crop_height) * scale_y
        # Two passes, horizontal first, as PIL's own resize runs them (its 8-bit intermediate makes the order
        # matter); one call with a box on both axes gives other pixels (Pillow 13: up to 19 grey levels off).
        # Only the rows the vertical filter reaches are resampled horizontally.
        reach = _FILTER_SUPPORT[self.resample] * max(scale_y, 1.0) + 2
        first, last = max(0, int(y0 - reach)), min(height, int(np.ceil(y1 + reach)))
        rows = Image.fromarray(np.ascontiguousarray(frame[first:last]))
        narrow = rows.resize((self.crop_width, last - first), self.resample, box=(x0, 0, x1, last - first))
        box = (0, y0 - first, self.crop_width, y1 - first)
        return np.asarray(narrow.resize((self.crop_width, self.crop_height), self.resample, box=box))


_FILTER_SUPPORT = {2: 1.0, 3: 2.0}
"""Half-widths of PIL's bilinear (2) and bicubic (3) filters, in source pixels at scale 1."""


def _center_crop(image: Any, height: int, width: int) -> Any:
    from torchvision.transforms.functional import center_crop

    return center_crop(image, [height, width])


def _apply(steps: tuple[Any, ...], frame: np.ndarray) -> np.ndarray:
    from PIL import Image

    image = Image.fromarray(np.ascontiguousarray(frame))
    for step in steps:
        image = step(image)
    return np.asarray(image)
