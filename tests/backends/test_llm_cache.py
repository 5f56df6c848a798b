"""ChatClient caching: repeated requests cost no HTTP call, in this process and in another."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from pydantic import BaseModel

from viddiff.backends.llm import CACHE_NAMESPACE, ChatClient, user_message
from viddiff.cache import Cache
from viddiff.config import EndpointConfig, EndpointsConfig, ImageConfig, ModelCallConfig
from viddiff.errors import InvalidAnswerError
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer

CALL = ModelCallConfig(model="fake-model")


class Verdict(BaseModel):
    answer: str


@pytest.fixture
def cache(tmp_path: Path) -> Cache:
    with Cache(tmp_path / "cache.sqlite") as c:
        yield c


def _endpoints(server: FakeOpenAIServer) -> EndpointsConfig:
    return EndpointsConfig(default=EndpointConfig(base_url=server.base_url), backoff_base_s=0.01, max_retries=1)


def _counting_responder(req: ChatRequest) -> str:
    return json.dumps({"answer": f"n{req.index}"})


def test_repeated_request_is_served_from_cache_and_counted_as_hit(cache: Cache) -> None:
    msgs = [user_message("which?", np.zeros((8, 8, 3), np.uint8))]
    with FakeOpenAIServer(_counting_responder) as server:
        client = ChatClient(_endpoints(server), cache=cache)
        first = client.complete_json_sync(CALL, msgs, Verdict, stage="diff")
        second = client.complete_json_sync(CALL, msgs, Verdict, stage="diff")
    assert first == second == Verdict(answer="n0")
    assert len(server.requests) == 1
    usage = client.usage.by_stage()["diff"]
    assert usage.calls == 1 and usage.cache_hits == 1 and usage.images == 1 and usage.prompt_tokens == 10
    stored = cache.get_many(CACHE_NAMESPACE, list(_keys(cache)))
    (value,) = stored.values()
    assert json.loads(value) == {"content": '{"answer": "n0"}'}
    assert b"sk-test-dummy" not in value and b"base64" not in value


def _keys(cache: Cache) -> list[str]:
    conn = cache._connection()
    return [row[0] for row in conn.execute("SELECT key FROM entries WHERE namespace=?", (CACHE_NAMESPACE,))]


def test_cache_hit_needs_no_server_and_no_key(cache: Cache, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAIServer(lambda req: "hello") as server:
        endpoints = _endpoints(server)
        ChatClient(endpoints, cache=cache).complete_text_sync(CALL, [user_message("q")])
    monkeypatch.delenv("OPENAI_API_KEY")
    assert ChatClient(endpoints, cache=cache).complete_text_sync(CALL, [user_message("q")]) == "hello"


def test_different_images_params_or_schema_make_different_keys(cache: Cache) -> None:
    img_a = np.zeros((8, 8, 3), np.uint8)
    img_b = np.full((8, 8, 3), 200, np.uint8)
    with FakeOpenAIServer(_counting_responder) as server:
        client = ChatClient(_endpoints(server), cache=cache)
        answers = [
            client.complete_json_sync(CALL, [user_message("q", img_a)], Verdict).answer,
            client.complete_json_sync(CALL, [user_message("q", img_b)], Verdict).answer,
            client.complete_json_sync(CALL, [user_message("q", img_a, image=ImageConfig(detail="low"))], Verdict).answer,
            client.complete_json_sync(CALL.model_copy(update={"seed": 1}), [user_message("q", img_a)], Verdict).answer,
            client.complete_json_sync(CALL, [user_message("q", img_a)], Verdict).answer,  # repeat of the first
        ]
    assert answers == ["n0", "n1", "n2", "n3", "n0"]
    assert len(server.requests) == 4


def test_nonzero_temperature_not_cached_when_disabled(cache: Cache) -> None:
    hot = CALL.model_copy(update={"temperature": 0.7})
    with FakeOpenAIServer(_counting_responder) as server:
        off = ChatClient(_endpoints(server), cache=cache, cache_nonzero_temperature=False)
        on = ChatClient(_endpoints(server), cache=cache, cache_nonzero_temperature=True)
        off_answers = [off.complete_json_sync(hot, [user_message("q")], Verdict).answer for _ in range(2)]
        on_answers = [on.complete_json_sync(hot, [user_message("q")], Verdict).answer for _ in range(2)]
    assert off_answers == ["n0", "n1"]
    assert on_answers == ["n2", "n2"]
    assert len(server.requests) == 3


def test_invalid_answers_are_never_cached(cache: Cache) -> None:
    replies = iter(["nope", "nope", '{"answer": "ok"}'])
    with FakeOpenAIServer(lambda req: next(replies)) as server:
        client = ChatClient(_endpoints(server).model_copy(update={"max_reasks": 1}), cache=cache)
        with pytest.raises(InvalidAnswerError):
            client.complete_json_sync(CALL, [user_message("q")], Verdict)
        assert cache.stats() == {}
        assert client.complete_json_sync(CALL, [user_message("q")], Verdict).answer == "ok"
    assert len(server.requests) == 3
    assert cache.stats()[CACHE_NAMESPACE]["entries"] == 1


def test_cached_answer_failing_new_validation_is_asked_again(cache: Cache) -> None:
    def reject_n0(v: Verdict) -> None:
        if v.answer == "n0":
            raise ValueError("n0 is not allowed")

    with FakeOpenAIServer(_counting_responder) as server:
        client = ChatClient(_endpoints(server), cache=cache)
        assert client.complete_json_sync(CALL, [user_message("q")], Verdict).answer == "n0"
        assert client.complete_json_sync(CALL, [user_message("q")], Verdict, validate=reject_n0).answer == "n1"
    assert len(server.requests) == 2


_CHILD = textwrap.dedent(
    """
    import json, sys
    from pydantic import BaseModel
    from viddiff.backends.llm import ChatClient, user_message
    from viddiff.cache import Cache
    from viddiff.config import EndpointConfig, EndpointsConfig, ModelCallConfig

    class Verdict(BaseModel):
        answer: str

    base_url, path = sys.argv[1], sys.argv[2]
    with Cache(path) as cache:
        client = ChatClient(EndpointsConfig(default=EndpointConfig(base_url=base_url)), cache=cache)
        out = client.complete_json_sync(ModelCallConfig(model="fake-model"), [user_message("q")], Verdict)
    print(json.dumps({"answer": out.answer, "hits": client.usage.total().cache_hits}))
    """
)


def test_cache_is_shared_with_another_process(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    with FakeOpenAIServer(_counting_responder) as server:
        with Cache(path) as cache:
            ChatClient(_endpoints(server), cache=cache).complete_json_sync(CALL, [user_message("q")], Verdict)
        env = {**os.environ, "OPENAI_API_KEY": "sk-test-dummy"}
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, server.base_url, str(path)],
            capture_output=True, text=True, env=env, timeout=60, check=False,
        )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"answer": "n0", "hits": 1}
    assert len(server.requests) == 1


def test_identical_requests_in_flight_together_cost_one_call(cache: Cache) -> None:
    """Concurrent samples asking the same (cacheable) question share one HTTP call."""
    import asyncio

    msgs = [user_message("same question for every sample")]
    other = [user_message("a different question")]
    with FakeOpenAIServer(_counting_responder, latency_s=0.2) as server:
        client = ChatClient(_endpoints(server), cache=cache)

        async def go():
            try:
                return await asyncio.gather(
                    *(client.complete_json(CALL, msgs, Verdict, stage="p") for _ in range(5)),
                    client.complete_json(CALL, other, Verdict, stage="p"),
                )
            finally:
                await client.aclose()

        answers = asyncio.run(go())
    assert len(server.requests) == 2
    assert len({a.answer for a in answers[:5]}) == 1 and answers[5] != answers[0]
    usage = client.usage.by_stage()["p"]
    assert usage.calls == 2 and usage.cache_hits == 4


def test_uncached_identical_requests_are_not_merged(tmp_path: Path) -> None:
    """Without a cache (or for uncacheable requests) every request is really sent."""
    import asyncio

    msgs = [user_message("q")]
    with FakeOpenAIServer(_counting_responder, latency_s=0.05) as server:
        client = ChatClient(_endpoints(server), cache=None)

        async def go():
            try:
                return await asyncio.gather(*(client.complete_json(CALL, msgs, Verdict) for _ in range(3)))
            finally:
                await client.aclose()

        asyncio.run(go())
    assert len(server.requests) == 3


def test_two_endpoints_serving_one_model_name_never_share_answers(cache: Cache) -> None:
    """The offline demo's scripted server and a real endpoint may serve the same model name: one cache, no mixing."""
    with FakeOpenAIServer(lambda req: "scripted") as scripted, FakeOpenAIServer(lambda req: "real") as real:
        answers = [
            ChatClient(_endpoints(server), cache=cache).complete_text_sync(CALL, [user_message("q")])
            for server in (scripted, real, scripted, real)
        ]
    assert answers == ["scripted", "real", "scripted", "real"]
    assert len(scripted.requests) == 1 and len(real.requests) == 1  # each endpoint's answer is cached for it alone
