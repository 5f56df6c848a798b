"""Sending one chat request to an OpenAI-compatible endpoint until it is answered or refused.

- One ``openai.AsyncOpenAI`` per (event loop, URL, key): SDK clients belong
  to the loop they were made in, and each ``*_sync`` call runs its own loop.
- At most ``endpoints.max_concurrency`` requests in flight per loop; the
  slot is given back while waiting to retry.
- A deadline of ``endpoints.timeout_s`` on each attempt as a whole, from
  sending to the last byte of the answer: the SDK's own timeout bounds each
  socket read, so a server trickling bytes would never trip it.
- Failures are classified by :mod:`.faults` and repeated by :mod:`.retries`;
  the SDK's own retries are off.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from typing import Any, Optional

import openai

from viddiff.backends.llm.endpoint import EndpointHistory, Target
from viddiff.backends.llm.faults import TransientError, check_chat_completion, gave_up, status_error
from viddiff.backends.llm.retries import RetryPolicy
from viddiff.backends.network import name_not_resolved, refused_by_this_machine
from viddiff.config import EndpointsConfig, ModelCallConfig
from viddiff.errors import EndpointError


def request_params(call: ModelCallConfig, response_format: Optional[dict[str, Any]]) -> dict[str, Any]:
    """Everything sent besides the messages (also the non-message part of the cache key)."""
    params: dict[str, Any] = {"model": call.model}
    if call.temperature is not None:
        params["temperature"] = call.temperature
    if call.max_tokens is not None:
        params["max_tokens"] = call.max_tokens
    if call.seed is not None:
        params["seed"] = call.seed
    if call.top_p is not None:
        params["top_p"] = call.top_p
    if call.extra_body:
        params["extra_body"] = dict(call.extra_body)
    if response_format is not None:
        params["response_format"] = response_format
    return params


def not_worth_retrying(exc: BaseException, url: str) -> Optional[str]:
    """Why, and what to do, when a connection failed in a way every retry would repeat (before the endpoint
    has ever answered): a host name that resolves nowhere, or a port of this machine nothing listens on."""
    lookup = name_not_resolved(exc)
    if lookup is not None:
        return (
            f"its host name could not be resolved ({lookup}); check base_url and the network (offline, point "
            "endpoints.default.base_url at a local server)"
        )
    refused = refused_by_this_machine(exc, url)
    if refused is not None:
        return (
            f"nothing is listening there ({refused}); start the model server first, or check the port in base_url "
            "(endpoints.default.base_url)"
        )
    return None


class Transport:
    """Chat completions over HTTP with retries; safe from many tasks and successive event loops."""

    def __init__(self, endpoints: EndpointsConfig):
        self.endpoints = endpoints
        self.history = EndpointHistory()
        self.retries = RetryPolicy(endpoints)
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, str], openai.AsyncOpenAI]]
        self._clients = weakref.WeakKeyDictionary()
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]
        self._semaphores = weakref.WeakKeyDictionary()

    async def send(
        self, target: Target, call: ModelCallConfig, messages: list[dict], params: dict[str, Any], stage: str
    ) -> Any:
        """The chat completion for ``messages``; :class:`EndpointError` when refused or retries run out."""
        client = self._client(target)
        failures: list[TransientError] = []

        async def attempt() -> Any:
            try:
                async with self._semaphore():
                    return await self._attempt(client, target, call.model, messages, params, stage)
            except TransientError as exc:
                failures.append(exc)
                raise

        try:
            response = await self.retries.call(attempt, f"{call.model} ({stage}) at {target.base_url}")
        except TransientError:
            reached = self.history.has_reached(target.base_url)
            raise gave_up(failures, target.base_url, call.model, stage, reached=reached) from None
        self.history.mark_answered(target.base_url, call.model)
        return response

    async def aclose(self) -> None:
        """Close the SDK clients opened in the running event loop."""
        for client in self._clients.pop(asyncio.get_running_loop(), {}).values():
            await client.close()

    async def _attempt(
        self,
        client: openai.AsyncOpenAI,
        target: Target,
        model: str,
        messages: list[dict],
        params: dict[str, Any],
        stage: str,
    ) -> Any:
        """Send once; a refusal raises :class:`EndpointError`, anything worth repeating :class:`TransientError`."""
        url, timeout = target.base_url, self.endpoints.timeout_s
        try:
            async with asyncio.timeout(timeout):
                response = await client.chat.completions.create(messages=messages, **params)  # type: ignore[call-overload,arg-type]
        except openai.APIStatusError as exc:
            self.history.mark_reached(url)
            answered = self.history.has_answered(url, model)
            raise status_error(exc, target, model, stage, model_answered=answered) from None
        except (openai.APITimeoutError, TimeoutError):
            raise TransientError(f"no complete answer within {timeout:g}s (endpoints.timeout_s)") from None
        except openai.APIConnectionError as exc:
            hopeless = None if self.history.has_reached(url) else not_worth_retrying(exc, url)
            if hopeless is not None:
                raise EndpointError(f"cannot reach {url}: {hopeless}", fatal=True, stage=stage) from None
            raise TransientError(f"connection failed ({exc.__cause__ or exc})", no_response=True) from None
        except (openai.APIResponseValidationError, json.JSONDecodeError) as exc:
            self.history.mark_reached(url)
            raise TransientError(f"malformed response body ({type(exc).__name__})") from None
        check_chat_completion(response, url, stage, first_contact=not self.history.has_reached(url))
        self.history.mark_reached(url)
        return response

    def _client(self, target: Target) -> openai.AsyncOpenAI:
        clients = self._clients.setdefault(asyncio.get_running_loop(), {})
        slot = (target.base_url, target.api_key)
        client = clients.get(slot)
        if client is None:
            client = openai.AsyncOpenAI(
                api_key=target.api_key, base_url=target.base_url, max_retries=0, timeout=self.endpoints.timeout_s
            )
            clients[slot] = client
        return client

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        semaphore = self._semaphores.get(loop)
        if semaphore is None:
            semaphore = self._semaphores[loop] = asyncio.Semaphore(self.endpoints.max_concurrency)
        return semaphore
