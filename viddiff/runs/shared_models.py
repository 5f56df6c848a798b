"""Several runs in one command on one cache and one CLIP embedder (``viddiff ablate``, ``viddiff audit``).

Runs that ask a question already asked by another (the proposer's, under the same prompts and per-sample
seeds) must get the same answer, so that they differ only in what the command varies; the cache is what
guarantees it, and it also pays for each distinct request once. Sharing the CLIP embedder loads its model
once and embeds each frame once for all the runs.
"""

from __future__ import annotations

import functools
import inspect
from contextlib import contextmanager
from typing import Iterator

from viddiff.config import Config
from viddiff.errors import ViddiffError
from viddiff.methods import MethodFactory


def check_shared_cache(cfg: Config, command: str) -> None:
    """The runs of ``command`` must see the same proposals, which only the cache guarantees (they are sampled)."""
    if not cfg.cache.enabled:
        raise ViddiffError(
            f"{command} shares the proposals and model answers between its runs through the cache; "
            "remove cache.enabled=false"
        )
    sampled = any(t is None or t > 0 for t in (cfg.proposer.temperature, cfg.differencer.temperature))
    if sampled and not cfg.cache.cache_nonzero_temperature:
        raise ViddiffError(
            f"with proposer/differencer temperature > 0, {command} needs cache.cache_nonzero_temperature=true, "
            "or each of its runs would get its own, differently sampled proposals"
        )


@contextmanager
def shared_models(cfg: Config, method_factory: MethodFactory) -> Iterator[MethodFactory]:
    """``method_factory`` with one cache opened from ``cfg.cache`` and, when the method takes an ``embedder``
    (VidDiff), one CLIP embedder, for all the instances it makes; the cache closes on exit."""
    from viddiff.cache import open_cache

    cache = open_cache(cfg.cache)
    shared = {"cache": cache}
    if "embedder" in inspect.signature(method_factory).parameters:
        from viddiff.backends.embedders import build_embedder

        shared["embedder"] = build_embedder(cfg.localizer.clip, cache)  # loads its model on first use

    try:
        yield functools.partial(method_factory, **shared)
    finally:
        if cache is not None:
            cache.close()
