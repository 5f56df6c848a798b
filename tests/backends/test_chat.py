"""The chat-model seam: ChatClient is a ChatModel, and its judge variant shares everything but re-asks and usage."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from viddiff.backends.chat import ChatModel
from viddiff.backends.llm import ChatClient, user_message
from viddiff.cache import Cache
from viddiff.config import EndpointConfig, EndpointsConfig, ModelCallConfig
from viddiff.errors import InvalidAnswerError
from viddiff.testing.fake_openai import FakeOpenAIServer

CALL = ModelCallConfig(model="fake-model")


class Verdict(BaseModel):
    answer: str


def test_chat_client_is_a_chat_model_and_an_incomplete_backend_is_not() -> None:
    class TextOnly:
        async def complete_text(self, call, messages, *, stage="default", meter=None) -> str:
            return "hi"

    assert isinstance(ChatClient(EndpointsConfig()), ChatModel)
    assert not isinstance(TextOnly(), ChatModel)


def test_with_max_reasks_shares_endpoints_and_cache_but_not_usage(tmp_path: Path) -> None:
    replies = iter(["bad", "bad", '{"answer": "a"}'])
    with FakeOpenAIServer(lambda req: next(replies)) as server, Cache(tmp_path / "c.sqlite") as cache:
        endpoints = EndpointsConfig(default=EndpointConfig(base_url=server.base_url), max_reasks=0)
        client = ChatClient(endpoints, cache=cache)
        with pytest.raises(InvalidAnswerError, match="in 1 attempts"):
            client.complete_json_sync(CALL, [user_message("q")], Verdict)
        judge = client.with_max_reasks(1)
        assert judge.complete_json_sync(CALL, [user_message("q")], Verdict).answer == "a"
        assert client.complete_json_sync(CALL, [user_message("q")], Verdict).answer == "a"  # the judge's cached answer
    assert (judge.endpoints.max_reasks, client.endpoints.max_reasks) == (1, 0)
    assert judge.usage.total().calls == 2 and judge.usage.total().cache_hits == 0
    assert client.usage.total().calls == 1 and client.usage.total().cache_hits == 1
    assert len(server.requests) == 3
