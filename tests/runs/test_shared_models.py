"""Runs of one command on one cache and CLIP embedder (``viddiff ablate``, ``viddiff audit``)."""

from __future__ import annotations

import pytest

from viddiff.api import VidDiff
from viddiff.methods.lmm.baseline import LMMBaseline
from viddiff.config import load_config
from viddiff.errors import ViddiffError
from viddiff.runs.shared_models import check_shared_cache, shared_models


@pytest.mark.parametrize(
    "overrides, message",
    [(["cache.enabled=false"], "through the cache"), (["cache.cache_nonzero_temperature=false"], "temperature > 0")],
)
def test_runs_must_share_proposals_through_the_cache(overrides, message) -> None:
    with pytest.raises(ViddiffError, match=message) as raised:
        check_shared_cache(load_config(None, overrides), "viddiff audit")
    assert "viddiff audit" in str(raised.value)
    check_shared_cache(load_config(None, ["cache.cache_nonzero_temperature=false", "proposer.temperature=0",
                                          "differencer.temperature=0"]), "viddiff audit")


def test_every_instance_uses_the_one_cache_and_embedder(tmp_path) -> None:
    cfg = load_config(None, [f"cache.path={tmp_path / 'cache.sqlite'}"])
    with shared_models(cfg, VidDiff) as factory:
        first, second = factory(cfg), factory(cfg.with_overrides(["localizer.method=uniform"]))
        assert first.name == second.name == "viddiff" and isinstance(first, VidDiff)
        assert first.cache is second.cache is not None and first._embedder is second._embedder is not None
        assert first.clip_stats() == {"image_forward": 0, "text_forward": 0, "image_cache_hits": 0,
                                      "text_cache_hits": 0}  # built, not loaded: nothing embedded yet
        cache = first.cache
    assert cache._closed  # closed on exit
    with shared_models(cfg, LMMBaseline) as factory:
        a, b = factory(cfg), factory(cfg)
        assert a.name == b.name == "lmm:gpt-4o-2024-08-06" and a.cache is b.cache is not None
