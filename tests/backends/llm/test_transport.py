"""The transport layer alone against the real local server: one request in, one chat completion out."""

from __future__ import annotations

import asyncio

import pytest

from viddiff.backends.llm.endpoint import Target
from viddiff.backends.llm.transport import Transport, request_params
from viddiff.config import EndpointConfig, EndpointsConfig, ModelCallConfig
from viddiff.errors import EndpointError
from viddiff.testing.fake_openai import FakeOpenAIServer, FaultPlan

CALL = ModelCallConfig(model="fake-model")


def _transport(server: FakeOpenAIServer, **kw: object) -> Transport:
    opts = {"backoff_base_s": 0.01, "backoff_max_s": 0.05, "max_retries": 2, "timeout_s": 1.0, **kw}
    return Transport(EndpointsConfig(default=EndpointConfig(base_url=server.base_url), **opts))


def _target(server: FakeOpenAIServer) -> Target:
    return Target(base_url=server.base_url, api_key_env="OPENAI_API_KEY", api_key="sk-transport")


def _send(transport: Transport, server: FakeOpenAIServer, *texts: str) -> list:
    async def go() -> list:
        try:
            return await asyncio.gather(
                *(
                    transport.send(_target(server), CALL, [{"role": "user", "content": t}], {"model": CALL.model}, "s")
                    for t in texts
                )
            )
        finally:
            await transport.aclose()

    return asyncio.run(go())


def test_params_carry_only_what_is_set() -> None:
    call = ModelCallConfig(model="m", temperature=None, seed=None, max_tokens=64)
    assert request_params(call, None) == {"model": "m", "max_tokens": 64}
    assert request_params(CALL, {"type": "json_object"}) == {
        "model": "fake-model", "temperature": 0.0, "seed": 0, "response_format": {"type": "json_object"},
    }


def test_a_completion_comes_back_and_the_endpoint_is_remembered_as_answering() -> None:
    with FakeOpenAIServer(lambda req: f"echo {req.texts[-1]}") as server:
        transport = _transport(server)
        (response,) = _send(transport, server, "hi")
    assert response.choices[0].message.content == "echo hi"
    assert server.requests[0].api_key == "sk-transport"
    assert transport.history.has_answered(server.base_url, "fake-model")


def test_the_slot_is_given_back_while_waiting_to_retry() -> None:
    """With one slot, a request waiting out a 429 lets the next one through instead of blocking it."""
    faults = FaultPlan(sequence=["429"], retry_after_s=0.3)
    with FakeOpenAIServer(lambda req: req.texts[-1], faults=faults) as server:
        _send(_transport(server, max_concurrency=1, backoff_max_s=1.0), server, "first", "second")
    assert [(r.texts[-1], r.faulted) for r in server.requests] == [("first", "429"), ("second", None), ("first", None)]


def test_the_deadline_covers_the_whole_attempt() -> None:
    """A server trickling bytes passes every socket-read timeout; only the per-attempt deadline stops it."""
    faults = FaultPlan(rate=1.0, kinds=["trickle"], trickle_interval_s=0.2)
    with FakeOpenAIServer(lambda req: "x" * 50, faults=faults) as server:
        with pytest.raises(EndpointError) as info:
            _send(_transport(server, timeout_s=0.5, max_retries=1), server, "q")
    assert "kept failing: 2 attempts, last: no complete answer within 0.5s (endpoints.timeout_s)" in str(info.value)
    assert len(server.requests) == 2


def test_one_sdk_client_per_event_loop_closed_with_it() -> None:
    with FakeOpenAIServer(lambda req: "ok") as server:
        transport = _transport(server)
        target = _target(server)

        async def clients_used() -> list:
            used = []
            for _ in range(2):
                await transport.send(target, CALL, [{"role": "user", "content": "q"}], {"model": "fake-model"}, "s")
                used.append(transport._client(target))
            await transport.aclose()
            return used

        first, second = asyncio.run(clients_used()), asyncio.run(clients_used())
    assert first[0] is first[1] and second[0] is second[1] and first[0] is not second[0]
    assert first[0].is_closed() and second[0].is_closed()
    assert len(server.requests) == 4
