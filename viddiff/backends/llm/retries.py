"""Repeating an attempt that failed transiently: tenacity's loop, our wait rule and log line.

Done by the library (``tenacity``): the retry loop, the attempt bound
(``endpoints.max_retries`` retries), exponential backoff with full jitter
(``wait_random_exponential``: a uniform wait under
``backoff_base_s * 2**n``, capped at ``backoff_max_s``) and the async sleep.

Written here, because tenacity cannot and the openai SDK does it only inside
its own retry loop, which is unusable here (below):

- the wait a server asks for (``retry-after-ms`` / ``retry-after``, read by
  :func:`viddiff.backends.llm.faults.retry_after_seconds`), capped at
  ``backoff_max_s``: tenacity never sees an HTTP response, and the SDK's
  header parser is private;
- one INFO line per retry giving the model, stage, endpoint, reason and wait;
- (in :mod:`.transport`) the deadline on each whole attempt, ``endpoints.timeout_s``
  from sending to the last byte: the SDK's timeout bounds single socket reads only.

The SDK's own retries stay off (``max_retries=0`` in the transport): they
cover neither malformed bodies nor a deadline on each whole attempt, their
backoff ignores ``backoff_base_s``/``backoff_max_s``, and they log no reason.
Which failures are transient is :mod:`viddiff.backends.llm.faults`' call.
"""

from __future__ import annotations

import functools
import logging
from typing import Awaitable, Callable, Optional, TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt
from tenacity.wait import wait_base, wait_random_exponential

from viddiff.backends.llm.faults import TransientError
from viddiff.config import EndpointsConfig

logger = logging.getLogger(__name__)

R = TypeVar("R")
Wait = Callable[[RetryCallState], float]


class ServerHintOrBackoff(wait_base):
    """The server's Retry-After when the failure carried one (capped), else jittered exponential backoff."""

    def __init__(self, base_s: float, max_s: float):
        self.max_s = max_s
        self.backoff = wait_random_exponential(multiplier=base_s, max=max_s)

    def __call__(self, retry_state: RetryCallState) -> float:
        hint = server_hint(retry_state)
        if hint is not None:
            return min(max(hint, 0.0), self.max_s)
        return self.backoff(retry_state)


def server_hint(retry_state: RetryCallState) -> Optional[float]:
    """The ``retry_after`` of the failure that ended the last attempt, if any."""
    failure = retry_state.outcome.exception() if retry_state.outcome is not None else None
    return getattr(failure, "retry_after", None)


class RetryPolicy:
    """How often and after what wait a transiently failed request is sent again."""

    def __init__(self, endpoints: EndpointsConfig):
        self.attempts = endpoints.max_retries + 1
        self.wait: Wait = ServerHintOrBackoff(endpoints.backoff_base_s, endpoints.backoff_max_s)

    async def call(self, attempt: Callable[[], Awaitable[R]], label: str) -> R:
        """Await ``attempt()`` until it returns, raises anything but :class:`TransientError`, or attempts run out.

        Out of attempts, the last :class:`TransientError` is raised. ``label``
        names the request in the log ("model (stage) at URL").
        """
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.attempts),
            wait=self.wait,
            retry=retry_if_exception_type(TransientError),
            before_sleep=functools.partial(self._log_retry, label),
            reraise=True,
        )
        return await retrying(attempt)

    def _log_retry(self, label: str, retry_state: RetryCallState) -> None:
        failure = retry_state.outcome.exception() if retry_state.outcome is not None else None
        wait = retry_state.next_action.sleep if retry_state.next_action is not None else 0.0
        logger.info(
            "%s: %s; retry %d of %d in %.1fs", label, failure, retry_state.attempt_number, self.attempts - 1, wait
        )
