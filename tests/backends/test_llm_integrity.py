"""Run-integrity behaviour of the chat client (issue 11, items 1, 7, 8), against the real local server:
an overall deadline per request, a log line per retry, errors marked fatal only when every request
would hit them, and size caps on what is sent and what comes back."""

from __future__ import annotations

import logging

import pytest
from pydantic import BaseModel

from viddiff.backends.llm import ChatClient, user_message
from viddiff.config import EndpointConfig, EndpointsConfig, ModelCallConfig
from viddiff.errors import EndpointError, InvalidAnswerError, RequestTooLargeError
from viddiff.testing.fake_openai import FakeOpenAIServer, FaultPlan

CALL = ModelCallConfig(model="fake-model")
ANSWER = '{"answer": "a"}'


class Verdict(BaseModel):
    answer: str


def _client(base_url: str, **kw: object) -> ChatClient:
    opts = {"backoff_base_s": 0.01, "backoff_max_s": 0.05, "max_retries": 2, "timeout_s": 1.0, **kw}
    return ChatClient(EndpointsConfig(default=EndpointConfig(base_url=base_url), **opts))


def _ask(client: ChatClient, text: str = "q") -> Verdict:
    return client.complete_json_sync(CALL, [user_message(text)], Verdict)


def test_a_trickling_server_hits_the_overall_deadline_and_each_retry_is_logged(caplog):
    """One byte every 0.3 s: every socket read succeeds, so only a deadline on the whole request ends it."""
    faults = FaultPlan(sequence=["trickle", "trickle"], trickle_interval_s=0.3)
    caplog.set_level(logging.INFO, logger="viddiff.backends.llm")
    with FakeOpenAIServer(lambda req: ANSWER, faults=faults) as server:
        assert _ask(_client(server.base_url)).answer == "a"  # the third attempt is served normally
    retries = [r.getMessage() for r in caplog.records if "retry" in r.getMessage()]
    assert len(retries) == 2
    for n, line in enumerate(retries, start=1):
        assert f"fake-model (default) at {server.base_url}: no complete answer within 1s (endpoints.timeout_s)" in line
        assert f"retry {n} of 2 in " in line and line.endswith("s")


def test_retries_exhausted_is_per_request_and_the_advice_can_be_followed():
    with FakeOpenAIServer(lambda req: ANSWER, faults=FaultPlan(rate=1.0, kinds=("500",))) as server:
        with pytest.raises(EndpointError) as info:
            _ask(_client(server.base_url))
    assert not info.value.fatal
    assert "kept failing: 3 attempts, last: HTTP 500" in str(info.value)
    assert "endpoints.max_retries / endpoints.timeout_s (both may change on --resume)" in str(info.value)


def test_a_web_page_instead_of_an_api_says_check_base_url():
    with FakeOpenAIServer(lambda req: ANSWER, faults=FaultPlan(sequence=["html"])) as server:
        with pytest.raises(EndpointError) as info:
            _ask(_client(server.base_url))
    assert str(info.value).startswith(
        f"the server at {server.base_url} did not answer like an OpenAI-compatible API (check base_url)"
    )
    assert info.value.fatal and len(server.requests) == 1  # not retried: it will not turn into an API


def test_a_web_page_after_real_answers_fails_that_request_only():
    with FakeOpenAIServer(lambda req: ANSWER, faults=FaultPlan(sequence=["ok", "html"])) as server:
        client = _client(server.base_url)
        _ask(client, "first")
        with pytest.raises(EndpointError, match="did not answer like an OpenAI-compatible API") as info:
            _ask(client, "second")
    assert not info.value.fatal


def test_404_is_fatal_only_for_a_model_that_never_answered():
    with FakeOpenAIServer(lambda req: ANSWER, faults=FaultPlan(sequence=["404", "ok", "404"])) as server:
        client = _client(server.base_url)
        with pytest.raises(EndpointError, match="'fake-model' not found") as first:
            _ask(client, "one")
        _ask(client, "two")
        with pytest.raises(EndpointError, match="HTTP 404") as later:
            _ask(client, "three")
    assert first.value.fatal and not later.value.fatal
    assert (later.value.status, later.value.stage) == (404, "default")
    assert "base_url is the API's root (it usually ends in /v1)" in str(first.value)


@pytest.mark.parametrize("fault, fatal", [("401", True), ("403", True), ("400", False)])
def test_refusals_carry_status_server_message_and_whether_every_request_would_hit_them(fault, fatal):
    with FakeOpenAIServer(lambda req: ANSWER, faults=FaultPlan(sequence=[fault])) as server:
        with pytest.raises(EndpointError) as info:
            _ask(_client(server.base_url))
    assert info.value.fatal is fatal and info.value.status == int(fault)
    assert "(injected fault)" in info.value.server_message
    assert len(server.requests) == 1


def test_an_unreachable_endpoint_is_fatal_until_it_has_answered():
    """A server that takes connections and drops them unanswered has never answered: after the retries, the
    error ends the run (a port nothing listens on ends it at once: test_llm_retries)."""
    with FakeOpenAIServer(lambda req: ANSWER, faults=FaultPlan(sequence=["drop"] * 3)) as server:
        with pytest.raises(EndpointError, match=rf"cannot reach {server.base_url} \(3 attempts") as info:
            _ask(_client(server.base_url))
    assert info.value.fatal


def test_a_dropped_connection_after_answers_is_not_fatal():
    with FakeOpenAIServer(lambda req: ANSWER, faults=FaultPlan(sequence=["ok", "drop", "drop", "drop"])) as server:
        client = _client(server.base_url)
        _ask(client, "first")
        with pytest.raises(EndpointError, match="kept failing") as info:
            _ask(client, "second")
    assert not info.value.fatal


def test_an_oversized_answer_fails_at_once_and_is_not_stored_whole():
    huge = '{"answer": "' + "x" * 300_000 + '"}'
    with FakeOpenAIServer(lambda req: huge) as server:
        client = _client(server.base_url, max_answer_chars=100_000)
        with pytest.raises(InvalidAnswerError, match=f"answered with {len(huge)} characters, over endpoints.max_answer_chars=100000") as info:
            _ask(client)
    assert len(server.requests) == 1  # not re-asked: that would send the answer back
    assert len(info.value.raw) == 2000 and info.value.stage == "default"
    assert client.usage.total().calls == 1  # it was paid for


def test_an_oversized_request_is_refused_before_it_is_sent():
    with FakeOpenAIServer(lambda req: ANSWER) as server:
        client = _client(server.base_url, max_prompt_chars=50_000)
        with pytest.raises(RequestTooLargeError, match="holds 60001 characters of text, over endpoints.max_prompt_chars=50000"):
            _ask(client, "y" * 60_001)
        assert _ask(client, "y" * 1000).answer == "a"
    assert len(server.requests) == 1
