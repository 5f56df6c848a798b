"""``evaluate``: one synchronous call from VidDiffBench predictions to metrics.

For scripts and the CLI; inside an event loop await ``score_open`` directly. ``run_judged`` runs any
judge-based scorer (a benchmark plug-in's too) from synchronous code.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Awaitable, Callable, Optional, TypeVar, Union

from viddiff.backends.chat import ChatModel
from viddiff.backends.llm import ChatClient
from viddiff.cache import open_cache
from viddiff.config import Config
from viddiff.eval.closed import ClosedMetrics, score_closed
from viddiff.eval.open import OpenMetrics, score_open
from viddiff.eval.predictions import load_predictions
from viddiff.schema import Mode, Sample

T = TypeVar("T")


def evaluate(
    samples: list[Sample],
    predictions: Union[str, Path, list[Any]],
    mode: Mode,
    cfg: Config,
    client: Optional[ChatModel] = None,
) -> Union[ClosedMetrics, OpenMetrics]:
    """Validate ``predictions`` (a file or the parsed list) and score them.

    Open mode needs the judge: ``client`` if given, else one built from
    ``cfg.endpoints`` with the cache from ``cfg.cache`` (closed after use).
    """
    validated = load_predictions(predictions, mode, samples)
    if mode == "closed":
        return score_closed(samples, validated)
    return run_judged(cfg, client, lambda judge: score_open(samples, validated, judge, cfg.eval))


def run_judged(cfg: Config, client: Optional[ChatModel], score: Callable[[ChatModel], Awaitable[T]]) -> T:
    """Run an async judge-based scorer to completion from synchronous code.

    Uses ``client`` if given, else one built from ``cfg.endpoints`` with the
    cache from ``cfg.cache`` (closed after use). Refuses to run inside an
    event loop, where the caller should await the scorer itself.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError("evaluation cannot run synchronously inside an event loop; await the score_* function instead")
    if client is not None:
        return asyncio.run(score(client))
    cache = open_cache(cfg.cache)
    try:
        own = ChatClient(cfg.endpoints, cache=cache, cache_nonzero_temperature=cfg.cache.cache_nonzero_temperature)
        return asyncio.run(score(own))
    finally:
        if cache is not None:
            cache.close()
