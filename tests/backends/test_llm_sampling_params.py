"""``top_p`` and ``extra_body`` (a benchmark's published sampling, e.g. vLLM's ``repetition_penalty``) reach the
server as request fields, only when set, and are part of the cache key."""

from __future__ import annotations

from pathlib import Path

import pytest

from viddiff.backends.llm import ChatClient, user_message
from viddiff.cache import open_cache
from viddiff.config import CacheConfig, EndpointsConfig, ModelCallConfig
from viddiff.testing.fake_openai import FakeOpenAIServer


def test_sampling_fields_are_sent_only_when_set_and_key_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    with FakeOpenAIServer(lambda req: "ok") as server:
        endpoints = EndpointsConfig.model_validate({"default": {"base_url": server.base_url}})
        cache = open_cache(CacheConfig(path=str(tmp_path / "c.sqlite")))
        client = ChatClient(endpoints, cache)
        plain = ModelCallConfig(model="m", temperature=0.1)
        tuned = plain.model_copy(update={"top_p": 0.001, "extra_body": {"repetition_penalty": 1.05}})
        messages = [user_message("hi")]
        for call in (plain, tuned, tuned):
            assert client.complete_text_sync(call, messages) == "ok"
        first, second = server.requests  # the third call was a cache hit
        assert "top_p" not in first.body and "repetition_penalty" not in first.body
        assert second.body["top_p"] == 0.001 and second.body["repetition_penalty"] == 1.05
        cache.close()
