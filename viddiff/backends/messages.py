"""Chat message builders: text and frames as OpenAI-style message dicts.

Frames are encoded once here (resize, JPEG/PNG, base64 data URL) so every
stage sends images the same way and the chat client can key its cache on
the encoded bytes rather than on pixels.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
from typing import Any, Union

import numpy as np
from PIL import Image

from viddiff.config import ImageConfig
from viddiff.errors import ViddiffError

ImageLike = Union[np.ndarray, Image.Image]
Part = Union[str, np.ndarray, Image.Image]

_MIME = {"jpeg": "image/jpeg", "png": "image/png"}
_PNG_MODES = {"RGB", "RGBA", "L", "LA"}


class ImageEncodingError(ViddiffError, ValueError):
    """A frame cannot be encoded (wrong array shape/dtype, empty image, bad data URL)."""


def system_message(text: str) -> dict[str, Any]:
    return {"role": "system", "content": text}


def assistant_message(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def user_message(*parts: Part, image: ImageConfig | None = None) -> dict[str, Any]:
    """A user message with text and image parts in the given order.

    A message of one text part uses plain string content, which every
    OpenAI-compatible server accepts (some local servers reject part lists
    for text-only messages).
    """
    if not parts:
        raise ValueError("user_message needs at least one text or image part")
    if len(parts) == 1 and isinstance(parts[0], str):
        return {"role": "user", "content": parts[0]}
    cfg = image or ImageConfig()
    content: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, str):
            content.append({"type": "text", "text": part})
        elif isinstance(part, (np.ndarray, Image.Image)):
            url, _ = encode_image(part, cfg)
            content.append({"type": "image_url", "image_url": {"url": url, "detail": cfg.detail}})
        else:
            raise TypeError(f"user_message parts must be str, numpy arrays or PIL images, got {type(part).__name__}")
    return {"role": "user", "content": content}


def _to_pil(img: ImageLike) -> Image.Image:
    if isinstance(img, Image.Image):
        return img
    arr = np.asarray(img)
    if arr.dtype != np.uint8:
        raise ImageEncodingError(f"frame array must be uint8 (H, W[, C]), got dtype {arr.dtype}; convert it first")
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    if arr.ndim == 2:
        return Image.fromarray(np.ascontiguousarray(arr), mode="L")
    if arr.ndim == 3 and arr.shape[2] in (3, 4):
        return Image.fromarray(np.ascontiguousarray(arr), mode="RGB" if arr.shape[2] == 3 else "RGBA")
    raise ImageEncodingError(f"frame array must have shape (H, W), (H, W, 1), (H, W, 3) or (H, W, 4), got {arr.shape}")


def _resized(img: Image.Image, max_side: int | None) -> Image.Image:
    w, h = img.size
    if max_side is None or max(w, h) <= max_side:
        return img
    scale = max_side / max(w, h)
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    return img.resize(size, Image.Resampling.LANCZOS)


def encode_image(img: ImageLike, image: ImageConfig) -> tuple[str, str]:
    """Encode a frame as ``(data_url, sha256 hex of the encoded bytes)``.

    JPEG has no alpha channel, so it is always written as RGB; PNG keeps
    grey/alpha modes and converts anything exotic (16-bit, CMYK, palette)
    to RGB(A).
    """
    pil = _to_pil(img)
    if pil.width < 1 or pil.height < 1:
        raise ImageEncodingError(f"cannot encode an empty {pil.width}x{pil.height} image")
    pil = _resized(pil, image.max_side)
    buf = io.BytesIO()
    if image.format == "jpeg":
        pil.convert("RGB").save(buf, format="JPEG", quality=image.quality)
    else:
        if pil.mode not in _PNG_MODES:
            pil = pil.convert("RGBA" if "A" in pil.getbands() or "transparency" in pil.info else "RGB")
        pil.save(buf, format="PNG")
    data = buf.getvalue()
    url = f"data:{_MIME[image.format]};base64,{base64.b64encode(data).decode('ascii')}"
    return url, hashlib.sha256(data).hexdigest()


def decode_data_url(url: str) -> tuple[str, bytes]:
    """``(mime, bytes)`` of a base64 ``data:`` URL; the inverse of :func:`encode_image`'s URL."""
    head, sep, payload = url.partition(",")
    if not url.startswith("data:") or not sep or not head.endswith(";base64"):
        raise ImageEncodingError(f"not a base64 data URL: {url[:40]!r}...")
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ImageEncodingError(f"data URL has invalid base64: {exc}") from None
    return head[len("data:") : -len(";base64")], data
