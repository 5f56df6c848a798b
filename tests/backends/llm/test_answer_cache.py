"""The answer cache alone: what the key covers, get/put, and one flight per identical request."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from viddiff.backends.llm.answer_cache import CACHE_NAMESPACE, AnswerCache, canonical_message
from viddiff.backends.messages import user_message
from viddiff.cache import Cache
from viddiff.config import ImageConfig, ModelCallConfig

CALL = ModelCallConfig(model="m")
PARAMS = {"model": "m", "temperature": 0.0}
MESSAGES = [{"role": "user", "content": "q"}]


@pytest.fixture
def cache(tmp_path: Path) -> Cache:
    with Cache(tmp_path / "cache.sqlite") as c:
        yield c


def test_the_key_includes_the_endpoint(cache: Cache) -> None:
    answers = AnswerCache(cache)
    local, real = answers.key("http://127.0.0.1:8011/v1", CALL, MESSAGES, PARAMS), answers.key(
        "https://api.openai.com/v1", CALL, MESSAGES, PARAMS
    )
    assert local != real
    assert answers.key("http://127.0.0.1:8011/v1/", CALL, MESSAGES, PARAMS) == local  # same endpoint spelled twice


def test_the_key_covers_params_and_messages_but_images_only_by_content(cache: Cache) -> None:
    answers = AnswerCache(cache)
    url = "http://h/v1"
    base = answers.key(url, CALL, MESSAGES, PARAMS)
    assert answers.key(url, CALL, MESSAGES, {**PARAMS, "seed": 1}) != base
    assert answers.key(url, CALL, [{"role": "user", "content": "other"}], PARAMS) != base
    frame = np.zeros((8, 8, 3), np.uint8)
    once, again = user_message("q", frame), user_message("q", frame.copy())
    assert canonical_message(once) == canonical_message(again)
    assert "base64" not in str(canonical_message(once))
    low = user_message("q", frame, image=ImageConfig(detail="low"))
    assert answers.key(url, CALL, [low], PARAMS) != answers.key(url, CALL, [once], PARAMS)


def test_sampled_requests_are_cached_only_when_allowed(cache: Cache) -> None:
    hot = ModelCallConfig(model="m", temperature=0.7)
    default_temperature = ModelCallConfig(model="m", temperature=None)
    assert AnswerCache(cache, cache_nonzero_temperature=False).key("u", hot, MESSAGES, PARAMS) is None
    assert AnswerCache(cache, cache_nonzero_temperature=False).key("u", default_temperature, MESSAGES, PARAMS) is None
    assert AnswerCache(cache, cache_nonzero_temperature=True).key("u", hot, MESSAGES, PARAMS) is not None
    assert AnswerCache(None).key("u", CALL, MESSAGES, PARAMS) is None


def test_put_get_round_trip_and_unreadable_entries_are_misses(cache: Cache) -> None:
    answers = AnswerCache(cache)
    key = answers.key("u", CALL, MESSAGES, PARAMS)
    assert answers.get(key) is None
    answers.put(key, '{"answer": "a"}')
    assert answers.get(key) == '{"answer": "a"}'
    cache.put(CACHE_NAMESPACE, "broken", b"\xff not json")
    assert answers.get("broken") is None and answers.get(None) is None


def test_one_flight_per_key_and_none_for_uncached_requests(cache: Cache) -> None:
    answers = AnswerCache(cache)
    inside: dict[str, int] = {}
    peak: dict[str, int] = {}

    async def hold(key):
        async with answers.single_flight(key):
            name = str(key)
            inside[name] = inside.get(name, 0) + 1
            peak[name] = max(peak.get(name, 0), inside[name])
            await asyncio.sleep(0.01)
            inside[name] -= 1

    async def go() -> None:
        await asyncio.gather(*(hold("same") for _ in range(4)), hold("other"), *(hold(None) for _ in range(3)))

    asyncio.run(go())
    assert peak == {"same": 1, "other": 1, "None": 3}
