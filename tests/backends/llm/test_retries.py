"""The retry layer alone: attempts, waits (server hint or jittered backoff), one log line per retry."""

from __future__ import annotations

import asyncio
import logging

import pytest
from tenacity import RetryCallState

from viddiff.backends.llm.faults import TransientError
from viddiff.backends.llm.retries import RetryPolicy
from viddiff.config import EndpointsConfig
from viddiff.errors import EndpointError


class Flaky:
    """An attempt that fails with the given errors, in order, then answers ``"done"``."""

    def __init__(self, *errors: Exception):
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "done"


def _policy(**kw: object) -> RetryPolicy:
    return RetryPolicy(EndpointsConfig(**{"max_retries": 3, "backoff_base_s": 0.0, "backoff_max_s": 0.0, **kw}))


def test_transient_failures_are_repeated_until_the_attempt_succeeds() -> None:
    attempt = Flaky(TransientError("HTTP 500: x"), TransientError("connection failed", no_response=True))
    assert asyncio.run(_policy().call(attempt, "m (diff) at http://h/v1")) == "done"
    assert attempt.calls == 3


def test_out_of_attempts_the_last_transient_failure_is_raised() -> None:
    attempt = Flaky(*(TransientError(f"HTTP 500: try {i}") for i in range(5)))
    with pytest.raises(TransientError, match="try 2"):
        asyncio.run(_policy(max_retries=2).call(attempt, "m (diff) at http://h/v1"))
    assert attempt.calls == 3


def test_other_errors_are_not_repeated() -> None:
    attempt = Flaky(EndpointError("refused"), TransientError("never reached"))
    with pytest.raises(EndpointError, match="refused"):
        asyncio.run(_policy().call(attempt, "label"))
    assert attempt.calls == 1


def test_each_retry_is_one_info_line_with_reason_and_wait(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="viddiff.backends.llm.retries")
    attempt = Flaky(TransientError("HTTP 429: slow down", retry_after=0.02), TransientError("HTTP 503: busy"))
    asyncio.run(_policy(backoff_max_s=1.0).call(attempt, "m (diff) at http://h/v1"))
    lines = [r.getMessage() for r in caplog.records if r.name == "viddiff.backends.llm.retries"]
    assert lines[0] == "m (diff) at http://h/v1: HTTP 429: slow down; retry 1 of 3 in 0.0s"
    assert lines[1].startswith("m (diff) at http://h/v1: HTTP 503: busy; retry 2 of 3 in ")
    assert len(lines) == 2 and all(r.levelno == logging.INFO for r in caplog.records)


def test_the_server_hint_is_waited_for_and_capped() -> None:
    policy = _policy(backoff_base_s=5.0, backoff_max_s=0.05)
    chosen = policy.wait
    waits: list[float] = []

    def recorded(state: RetryCallState) -> float:
        waits.append(chosen(state))
        return waits[-1]

    policy.wait = recorded
    attempt = Flaky(TransientError("a", retry_after=0.01), TransientError("b", retry_after=30.0))
    asyncio.run(policy.call(attempt, "m (diff) at http://h/v1"))
    assert waits == [0.01, 0.05]  # not the 5 s backoff: the server's hint, capped at backoff_max_s
