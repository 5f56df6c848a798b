"""Frame budget for LMM baselines: fit A+B into the images one request may carry."""

from __future__ import annotations

import math
import re

DEFAULT_MAX_IMAGES = 150
"""Budget for models without a known limit (OpenAI-style APIs)."""

KNOWN_IMAGE_LIMITS: tuple[tuple[str, int], ...] = (
    (r"claude", 100),
)
"""``(regex searched in the lower-cased model name, images per request)``, first match wins.

Data, not code: add a row when a provider documents a different limit.
Local servers (vLLM, Ollama) have no fixed limit; set ``baseline.max_images``
to what the server was started with (vLLM: ``--limit-mm-per-prompt``).
"""


def default_max_images(model: str) -> int:
    """The known per-request image limit of ``model`` (also through routers, e.g. ``anthropic/claude-…``)."""
    name = model.lower()
    for pattern, limit in KNOWN_IMAGE_LIMITS:
        if re.search(pattern, name):
            return limit
    return DEFAULT_MAX_IMAGES


def budget_stride(n_a: int, n_b: int, max_images: int) -> int:
    """Smallest extra stride so that every ``stride``-th frame of A and of B fits in ``max_images``.

    The same stride for both videos keeps their frame rates equal, so the
    model can still compare speeds; the budget is never exceeded.
    """
    if n_a < 1 or n_b < 1:
        raise ValueError("both videos need at least one frame")
    if max_images < 2:
        raise ValueError("the frame budget must allow at least one frame per video")
    # ceil(n/s) >= n/s, so no stride below this lower bound can fit.
    stride = max(1, math.ceil((n_a + n_b) / max_images))
    while math.ceil(n_a / stride) + math.ceil(n_b / stride) > max_images:
        stride += 1
    return stride
