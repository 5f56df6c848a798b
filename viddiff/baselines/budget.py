"""Frame budget for LMM baselines: fit A+B into the images a request may carry."""

from __future__ import annotations

import math


def budget_stride(n_a: int, n_b: int, max_images: int) -> int:
    """Smallest extra stride so that every ``stride``-th frame of A and of B fits in ``max_images``.

    The same stride for both videos keeps their frame rates equal, so the
    model can compare speeds; the budget is never exceeded.
    """
    if n_a < 1 or n_b < 1:
        raise ValueError("both videos need at least one frame")
    if max_images < 2:
        raise ValueError("the frame budget must allow at least one frame per video")
    stride = max(1, math.ceil((n_a + n_b) / max_images))
    while math.ceil(n_a / stride) + math.ceil(n_b / stride) > max_images:
        stride += 1
    return stride
