"""Usage of one answered call, from real completions of the local server (with and without reported usage)."""

from __future__ import annotations

import numpy as np
import openai
import pytest

from viddiff.backends.llm.accounting import answer_text, call_usage, count_images, record
from viddiff.backends.messages import user_message
from viddiff.backends.usage import UsageMeter
from viddiff.config import ModelPrice
from viddiff.schema import StageUsage
from viddiff.testing.fake_openai import FakeOpenAIServer, Reply

PRICES = {"priced": ModelPrice(input_per_mtok=1.0, output_per_mtok=2.0)}


def _completion(report_usage: bool, model: str = "priced"):
    reply = Reply(content="a short answer", prompt_tokens=1000, completion_tokens=500)
    with FakeOpenAIServer(lambda req: reply, report_usage=report_usage) as server:
        client = openai.OpenAI(api_key="sk-x", base_url=server.base_url, max_retries=0)
        response = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "q"}])
        client.close()
    return response


def test_reported_usage_is_taken_as_is_and_priced() -> None:
    response = _completion(report_usage=True)
    messages = [user_message("q", np.zeros((8, 8, 3), np.uint8))]
    usage = call_usage("priced", messages, response, answer_text(response), PRICES)
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens, usage.images) == (1, 1000, 500, 1)
    assert usage.cost_usd == pytest.approx(0.002) and usage.estimated_calls == 0


def test_unreported_usage_is_estimated_from_the_request_and_flagged() -> None:
    response = _completion(report_usage=False, model="unpriced")
    usage = call_usage("unpriced", [user_message("q " * 100)], response, answer_text(response), PRICES)
    assert usage.estimated_calls == 1 and usage.prompt_tokens > 100 and usage.completion_tokens > 0
    assert usage.cost_usd is None  # unknown, never zero


def test_usage_goes_to_the_clients_meter_and_the_callers_once_each() -> None:
    client, caller = UsageMeter(), UsageMeter()
    record("diff", StageUsage(calls=1), client, caller)
    record("diff", StageUsage(calls=1), client, client)
    record("diff", StageUsage(calls=1), client, None)
    assert client.total().calls == 3 and caller.total().calls == 1


def test_images_are_counted_across_messages() -> None:
    frame = np.zeros((8, 8, 3), np.uint8)
    assert count_images([user_message("a", frame, frame), user_message("b"), user_message("c", frame)]) == 3
