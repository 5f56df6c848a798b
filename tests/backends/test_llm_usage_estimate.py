"""When a server reports no usage, the chat client counts the request's tokens itself (real HTTP exchange)."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import BaseModel

from viddiff.backends import tokens
from viddiff.backends.llm import ChatClient, user_message
from viddiff.config import EndpointConfig, EndpointsConfig, ImageConfig, ModelCallConfig, ModelPrice
from viddiff.testing.fake_openai import FakeOpenAIServer

MODEL = "gpt-4o-2024-08-06"
PRICES = {MODEL: ModelPrice(input_per_mtok=2.5, output_per_mtok=10.0)}


class Answer(BaseModel):
    answer: str


def ask(server: FakeOpenAIServer) -> ChatClient:
    client = ChatClient(EndpointsConfig(default=EndpointConfig(base_url=server.base_url), prices=PRICES))
    frame = np.random.default_rng(0).integers(0, 255, size=(720, 1280, 3), dtype=np.uint8)
    messages = [user_message("Is A deeper than B?", frame, frame, image=ImageConfig(detail="high"))]
    client.complete_json_sync(ModelCallConfig(model=MODEL), messages, Answer, stage="differencer")
    return client


def test_missing_usage_is_estimated_from_the_request_sent():
    with FakeOpenAIServer(lambda req: '{"answer": "a"}', report_usage=False) as server:
        client = ask(server)
    (request,) = server.requests
    usage = client.usage.by_stage()["differencer"]
    expected_prompt = tokens.prompt_tokens(MODEL, request.messages)  # the messages as the server received them
    assert usage.prompt_tokens == expected_prompt >= 2 * 1105
    assert usage.completion_tokens == tokens.text_tokens(MODEL, '{"answer": "a"}')
    assert usage.estimated_calls == 1 and usage.calls == 1 and usage.images == 2
    assert usage.cost_usd == pytest.approx((expected_prompt * 2.5 + usage.completion_tokens * 10.0) / 1e6)


def test_reported_usage_is_kept():
    with FakeOpenAIServer(lambda req: '{"answer": "a"}') as server:
        usage = ask(server).usage.by_stage()["differencer"]
    assert (usage.prompt_tokens, usage.completion_tokens, usage.estimated_calls) == (10, 5, 0)
