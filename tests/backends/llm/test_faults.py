"""Which failures are repeated and which stop at once, with real SDK errors from the real local server."""

from __future__ import annotations

import email.utils
import time
from typing import Optional

import openai
import pytest

from viddiff.backends.llm.endpoint import Target
from viddiff.backends.llm.faults import (
    TransientError,
    check_chat_completion,
    gave_up,
    retry_after_seconds,
    status_error,
)
from viddiff.errors import EndpointError
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer, HTTPFault

KEY = "sk-test-secret"


def _sdk_error(status: int, message: str = "nope", headers: Optional[dict[str, str]] = None) -> openai.APIStatusError:
    """The error the openai SDK raises when the server answers ``status``."""

    def refuse(req: ChatRequest) -> str:
        raise HTTPFault(status, message, headers=headers)

    with FakeOpenAIServer(refuse) as server:
        client = openai.OpenAI(api_key=KEY, base_url=server.base_url, max_retries=0)
        with pytest.raises(openai.APIStatusError) as info:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
        client.close()
    return info.value


def _target() -> Target:
    return Target(base_url="http://127.0.0.1:1/v1", api_key_env="VIDDIFF_KEY", api_key=KEY)


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503])
def test_timeouts_conflicts_rate_limits_and_server_errors_are_transient(status: int) -> None:
    error = status_error(_sdk_error(status, "busy"), _target(), "m", "diff", model_answered=False)
    assert isinstance(error, TransientError) and str(error) == f"HTTP {status}: busy"


@pytest.mark.parametrize(
    "status, fatal, words",
    [
        (400, False, "rejected the request for 'm' as invalid (HTTP 400)"),
        (401, True, "refused the API key from VIDDIFF_KEY (HTTP 401"),
        (403, True, "refused the API key from VIDDIFF_KEY (HTTP 403"),
        (404, True, "model 'm' not found at http://127.0.0.1:1/v1 (HTTP 404"),
        (422, False, "rejected the request for 'm' as invalid (HTTP 422)"),
        (418, False, "refused the request for 'm' (HTTP 418)"),
    ],
)
def test_other_statuses_are_refusals_that_say_what_to_fix(status: int, fatal: bool, words: str) -> None:
    error = status_error(_sdk_error(status, "server words"), _target(), "m", "diff", model_answered=False)
    assert isinstance(error, EndpointError) and words in str(error)
    assert (error.fatal, error.status, error.server_message, error.stage) == (fatal, status, "server words", "diff")


def test_a_404_after_the_model_answered_concerns_one_request() -> None:
    error = status_error(_sdk_error(404), _target(), "m", "diff", model_answered=True)
    assert isinstance(error, EndpointError) and not error.fatal


def test_a_key_echoed_by_the_server_is_masked() -> None:
    error = status_error(_sdk_error(401, f"bad key {KEY}"), _target(), "m", "diff", model_answered=False)
    assert KEY not in str(error) and "bad key ***" in str(error)


@pytest.mark.parametrize(
    "headers, expected",
    [
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "3"}, 3.0),
        ({"retry-after-ms": "x", "retry-after": "2"}, 2.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_headers_are_read_from_the_response(headers: dict[str, str], expected: Optional[float]) -> None:
    assert retry_after_seconds(_sdk_error(429, headers=headers).response) == expected


def test_retry_after_as_an_http_date() -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    seconds = retry_after_seconds(_sdk_error(503, headers={"retry-after": when}).response)
    assert seconds is not None and 25 <= seconds <= 31


def test_a_body_that_is_no_chat_completion() -> None:
    with pytest.raises(EndpointError, match="did not answer like an OpenAI-compatible API") as page:
        check_chat_completion("<html>It works!</html>", "http://h/v1", "diff", first_contact=True)
    assert page.value.fatal
    with pytest.raises(TransientError, match="incomplete JSON"):
        check_chat_completion('{"id": "x", "choices": [', "http://h/v1", "diff", first_contact=True)


def test_giving_up_says_cannot_reach_only_when_nothing_ever_came_back() -> None:
    dropped = [TransientError("connection failed (refused)", no_response=True)] * 3
    unreachable = gave_up(dropped, "http://h/v1", "m", "diff", reached=False)
    assert unreachable.fatal and str(unreachable).startswith("cannot reach http://h/v1 (3 attempts")
    mixed = [TransientError("HTTP 500: x"), *dropped[:2]]
    for failures, reached in ((mixed, False), (dropped, True)):
        error = gave_up(failures, "http://h/v1", "m", "diff", reached=reached)
        assert not error.fatal and "m at http://h/v1 kept failing: 3 attempts" in str(error)
