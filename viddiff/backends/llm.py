"""OpenAI-compatible chat client: JSON answers, retries, bounded concurrency, cache, usage.

Every LLM/VLM call of every stage goes through :class:`ChatClient` so that
retry policy, re-asks on invalid answers, caching and cost accounting are
implemented once. It speaks to any OpenAI-compatible server through the
official ``openai`` SDK, with the SDK's own retries disabled because ours
also cover dropped connections and malformed bodies, with jitter.

Every attempt has an overall deadline (``endpoints.timeout_s`` from sending
to the last byte of the answer: the SDK's own timeout bounds each socket
read, so a server trickling bytes would never trip it), and every retry is
logged at INFO with its reason and wait. Errors that any other request would
hit too (no key, a refused key, an endpoint never reached, a model the
endpoint has never answered for) are marked ``fatal`` so a run stops on
them instead of failing every sample in turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import hashlib
import json
import logging
import os
import random
import re
import time
import weakref
from dataclasses import dataclass
from typing import Any, AsyncIterator, Awaitable, Callable, Optional, TypeVar

import openai
from pydantic import BaseModel, ValidationError

from viddiff.backends.json_schema import declared_schema
from viddiff.backends.messages import (
    ImageEncodingError,
    assistant_message,
    decode_data_url,
    encode_image,
    system_message,
    user_message,
)
from viddiff.backends import tokens
from viddiff.backends.usage import UsageMeter, call_cost
from viddiff.cache import Cache, hash_key
from viddiff.config import EndpointsConfig, ModelCallConfig
from viddiff.errors import EndpointError, InvalidAnswerError, RequestTooLargeError
from viddiff.schema import StageUsage

__all__ = [
    "ChatClient",
    "UsageMeter",
    "system_message",
    "user_message",
    "encode_image",
    "ImageEncodingError",
]

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")

CACHE_NAMESPACE = "chat"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
_RETRYABLE_STATUS = {408, 409, 429}
_FENCE = re.compile(r"^```[a-zA-Z]*\s*(.*?)\s*```$", re.DOTALL)
_MAX_ERROR_CHARS = 1000
_MAX_RAW_KEPT = 2000
"""Characters of an oversized answer kept for ``samples.jsonl``/``errors.json``."""
_REASK = "Your previous answer was not valid: {error}\nAnswer again with only the corrected JSON object."


@dataclass(frozen=True)
class _Target:
    """A resolved endpoint: where to send and with which key (never logged)."""

    base_url: Optional[str]
    api_key_env: str
    api_key: str

    @property
    def display_url(self) -> str:
        return self.base_url or DEFAULT_BASE_URL


class _TransientError(Exception):
    """One failed attempt worth retrying; ``retry_after`` is the server's hint in seconds.

    ``no_response``: nothing came back at all (connection refused, reset, DNS), as opposed
    to an HTTP error or a slow or broken answer from a server that is there.
    """

    def __init__(self, description: str, retry_after: Optional[float] = None, *, no_response: bool = False):
        super().__init__(description)
        self.retry_after = retry_after
        self.no_response = no_response


class ChatClient:
    """Chat completions against OpenAI-compatible endpoints, shared by all stages.

    Safe to use from many asyncio tasks at once (requests are bounded by
    ``endpoints.max_concurrency``) and from successive ``asyncio.run`` calls
    (SDK clients and semaphores are kept per event loop).
    """

    def __init__(self, endpoints: EndpointsConfig, cache: Cache | None = None, cache_nonzero_temperature: bool = True):
        self.endpoints = endpoints
        self.cache = cache
        self.cache_nonzero_temperature = cache_nonzero_temperature
        self.usage = UsageMeter()
        self._rng = random.Random()
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[Optional[str], str], openai.AsyncOpenAI]]
        self._clients = weakref.WeakKeyDictionary()
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]
        self._semaphores = weakref.WeakKeyDictionary()
        self._inflight: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, list]] = weakref.WeakKeyDictionary()
        self._reached: set[str] = set()
        """Base URLs that sent any HTTP response: an endpoint that is there, even if it refused."""
        self._answered: set[tuple[str, str]] = set()
        """(base URL, model) pairs that gave a completion: the model exists there."""

    # ------------------------------------------------------------------ public API

    async def complete_json(
        self,
        call: ModelCallConfig,
        messages: list[dict],
        schema: type[T],
        *,
        stage: str = "default",
        validate: Callable[[T], None] | None = None,
        meter: UsageMeter | None = None,
    ) -> T:
        """Ask for a JSON answer parsed into ``schema``; re-ask on invalid answers.

        ``validate`` adds semantic checks: a ``ValueError`` from it is treated
        like a schema error (re-asked with its message). Raises
        :class:`InvalidAnswerError` after ``endpoints.max_reasks`` re-asks.
        Only valid answers are cached; a cache hit needs neither server nor key.
        """
        self._check_request_size(call, messages, stage)
        response_format = self._response_format(schema)
        params = _request_params(call, response_format)
        key = self._cache_key(call, messages, params)
        async with self._single_flight(key):
            return await self._complete_json(call, messages, schema, params, key, stage, validate, meter)

    async def _complete_json(
        self,
        call: ModelCallConfig,
        messages: list[dict],
        schema: type[T],
        params: dict[str, Any],
        key: Optional[str],
        stage: str,
        validate: Callable[[T], None] | None,
        meter: UsageMeter | None,
    ) -> T:
        cached = self._cache_get(key)
        if cached is not None:
            try:
                obj = _parse_json(cached, schema)
                if validate is not None:
                    validate(obj)
            except ValueError:
                logger.debug("cached answer no longer valid for %s; asking again", schema.__name__)
            else:
                self._record_hit(call, stage, meter)
                return obj

        target = self._target(call)
        sent = _append_instruction(messages, self._json_instruction(schema))
        raw = ""
        error = ""
        for attempt in range(self.endpoints.max_reasks + 1):
            content = await self._post(target, call, sent, params, stage, meter)
            self._check_answer_size(call, stage, content)
            raw = content or ""
            try:
                if content is None:
                    raise ValueError("the answer was empty")
                obj = _parse_json(raw, schema)
                if validate is not None:
                    validate(obj)
            except ValueError as exc:
                error = _describe(exc)
                logger.debug("invalid answer from %s (%s), attempt %d: %s", call.model, stage, attempt + 1, error)
                sent = [*sent, assistant_message(raw), user_message(_REASK.format(error=error))]
                continue
            self._cache_put(key, raw)
            return obj
        raise InvalidAnswerError(
            f"{call.model} ({stage}) gave no valid {schema.__name__} answer in "
            f"{self.endpoints.max_reasks + 1} attempts; last problem: {error}",
            raw=raw,
            stage=stage,
        )

    async def complete_text(
        self, call: ModelCallConfig, messages: list[dict], *, stage: str = "default", meter: UsageMeter | None = None
    ) -> str:
        """Free-text answer (no JSON, no re-asks)."""
        self._check_request_size(call, messages, stage)
        params = _request_params(call, None)
        key = self._cache_key(call, messages, params)
        async with self._single_flight(key):
            cached = self._cache_get(key)
            if cached is not None:
                self._record_hit(call, stage, meter)
                return cached
            content = await self._post(self._target(call), call, messages, params, stage, meter)
            self._check_answer_size(call, stage, content)
            if content is None:
                raise InvalidAnswerError(
                    f"{call.model} ({stage}) returned no text (refusal or tool call)", raw="", stage=stage
                )
            self._cache_put(key, content)
            return content

    def complete_json_sync(
        self,
        call: ModelCallConfig,
        messages: list[dict],
        schema: type[T],
        *,
        stage: str = "default",
        validate: Callable[[T], None] | None = None,
        meter: UsageMeter | None = None,
    ) -> T:
        """Blocking :meth:`complete_json` for scripts; not usable inside a running event loop."""
        return self._run_sync(
            lambda: self.complete_json(call, messages, schema, stage=stage, validate=validate, meter=meter)
        )

    def complete_text_sync(
        self, call: ModelCallConfig, messages: list[dict], *, stage: str = "default", meter: UsageMeter | None = None
    ) -> str:
        """Blocking :meth:`complete_text` for scripts; not usable inside a running event loop."""
        return self._run_sync(lambda: self.complete_text(call, messages, stage=stage, meter=meter))

    async def aclose(self) -> None:
        """Close the HTTP clients opened in the current event loop."""
        loop = asyncio.get_running_loop()
        for client in self._clients.pop(loop, {}).values():
            await client.close()

    # ------------------------------------------------------------------ endpoint and transport

    def _run_sync(self, make: Callable[[], Awaitable[R]]) -> R:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise RuntimeError(
                "ChatClient *_sync methods cannot run inside a running event loop; await complete_json/complete_text instead"
            )

        async def run() -> R:
            try:
                return await make()
            finally:
                await self.aclose()

        return asyncio.run(run())

    def _target(self, call: ModelCallConfig) -> _Target:
        endpoint = call.endpoint or self.endpoints.default
        key = os.environ.get(endpoint.api_key_env)
        if not key:
            raise EndpointError(
                f"no API key for model {call.model!r}: environment variable {endpoint.api_key_env} is not set; "
                f"set {endpoint.api_key_env}=... (or a dummy value for local servers)",
                fatal=True,
            )
        base_url = endpoint.base_url or os.environ.get("OPENAI_BASE_URL") or None
        return _Target(base_url=base_url, api_key_env=endpoint.api_key_env, api_key=key)

    def _client(self, target: _Target) -> openai.AsyncOpenAI:
        clients = self._clients.setdefault(asyncio.get_running_loop(), {})
        slot = (target.base_url, target.api_key)
        client = clients.get(slot)
        if client is None:
            client = openai.AsyncOpenAI(
                api_key=target.api_key, base_url=target.base_url, max_retries=0, timeout=self.endpoints.timeout_s
            )
            clients[slot] = client
        return client

    @contextlib.asynccontextmanager
    async def _single_flight(self, key: Optional[str]) -> AsyncIterator[None]:
        """Identical cacheable requests in flight at once wait for the first, then read its answer from the cache.

        Without this, samples of one action asking the same proposer question concurrently would all pay for it.
        """
        if key is None:
            yield
            return
        locks = self._inflight.setdefault(asyncio.get_running_loop(), {})
        entry = locks.setdefault(key, [asyncio.Lock(), 0])
        entry[1] += 1
        try:
            async with entry[0]:
                yield
        finally:
            entry[1] -= 1
            if entry[1] == 0:
                locks.pop(key, None)

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        sem = self._semaphores.get(loop)
        if sem is None:
            sem = asyncio.Semaphore(self.endpoints.max_concurrency)
            self._semaphores[loop] = sem
        return sem

    async def _post(
        self,
        target: _Target,
        call: ModelCallConfig,
        messages: list[dict],
        params: dict[str, Any],
        stage: str,
        meter: UsageMeter | None,
    ) -> Optional[str]:
        """One chat completion with retries on transient failures; returns the message content."""
        client = self._client(target)
        attempts = self.endpoints.max_retries + 1
        last = ""
        nothing_came_back = True
        for attempt in range(attempts):
            started = time.monotonic()
            try:
                async with self._semaphore():
                    response = await self._attempt(client, target, call, messages, params, stage)
            except _TransientError as exc:
                last = str(exc)
                nothing_came_back = nothing_came_back and exc.no_response
                if attempt + 1 < attempts:
                    delay = self._delay(attempt, exc.retry_after)
                    logger.info(
                        "%s (%s) at %s: %s; retry %d of %d in %.1fs",
                        call.model, stage, target.display_url, last, attempt + 1, attempts - 1, delay,
                    )
                    await asyncio.sleep(delay)
                continue
            latency = time.monotonic() - started
            self._answered.add((target.display_url, call.model))
            content, usage = self._account(call, messages, response)
            self._record(stage, usage, meter)
            logger.debug(
                "chat model=%s stage=%s latency=%.2fs cached=False tokens=%d+%d",
                call.model, stage, latency, usage.prompt_tokens, usage.completion_tokens,
            )
            return content
        if nothing_came_back and target.display_url not in self._reached:
            raise EndpointError(
                f"cannot reach {target.display_url} ({attempts} attempts, last: {last}); check that the server is "
                "running and that base_url is right",
                fatal=True,
                stage=stage,
            )
        raise EndpointError(
            f"{call.model} at {target.display_url} kept failing: {attempts} attempts, last: {last}; check that the "
            "server is up, or raise endpoints.max_retries / endpoints.timeout_s (both may change on --resume)",
            stage=stage,
        )

    async def _attempt(
        self,
        client: openai.AsyncOpenAI,
        target: _Target,
        call: ModelCallConfig,
        messages: list[dict],
        params: dict[str, Any],
        stage: str,
    ) -> Any:
        """Send once; permanent failures raise :class:`EndpointError`, transient ones :class:`_TransientError`."""
        timeout = self.endpoints.timeout_s
        try:
            async with asyncio.timeout(timeout):
                response = await client.chat.completions.create(messages=messages, **params)  # type: ignore[call-overload,arg-type]
        except openai.APIStatusError as exc:
            self._reached.add(target.display_url)
            status = exc.status_code
            if status in _RETRYABLE_STATUS or status >= 500:
                message = _server_message(exc).replace(target.api_key, "***")
                raise _TransientError(f"HTTP {status}: {message}", _retry_after(exc.response)) from None
            raise self._permanent_error(exc, target, call, stage) from None
        except (openai.APITimeoutError, TimeoutError):
            raise _TransientError(f"no complete answer within {timeout:g}s (endpoints.timeout_s)") from None
        except openai.APIConnectionError as exc:
            raise _TransientError(f"connection failed ({exc.__cause__ or exc})", no_response=True) from None
        except (openai.APIResponseValidationError, json.JSONDecodeError) as exc:
            self._reached.add(target.display_url)
            raise _TransientError(f"malformed response body ({type(exc).__name__})") from None
        self._check_is_chat_completion(response, target, call, stage)
        self._reached.add(target.display_url)
        return response

    def _check_is_chat_completion(self, response: Any, target: _Target, call: ModelCallConfig, stage: str) -> None:
        """A body that is no chat completion at all (an HTML page, a JSON error page of some other service)
        means base_url points somewhere else; one cut short on the way is worth another try."""
        if isinstance(response, str):  # the SDK hands back the text of a non-JSON body
            if response.lstrip().startswith(("{", "[")):
                raise _TransientError("malformed response body (incomplete JSON)")
            raise self._not_an_api(target, stage, response)
        choices = getattr(response, "choices", None)
        if isinstance(choices, list) and choices and getattr(choices[0], "message", None) is not None:
            return
        extra = getattr(response, "model_extra", None) or {}
        if "error" in extra:  # some proxies report overload as HTTP 200 with an error object
            raise _TransientError(f"HTTP 200 with an error: {str(extra['error'])[:_MAX_ERROR_CHARS]}")
        if choices is None and not str(getattr(response, "object", None) or "").startswith("chat.completion"):
            raise self._not_an_api(target, stage, json.dumps(extra)[:200] if extra else "")
        raise _TransientError("malformed response: no choices[0].message")

    def _not_an_api(self, target: _Target, stage: str, body: str) -> EndpointError:
        snippet = " ".join(body.split())[:120]
        return EndpointError(
            f"the server at {target.display_url} did not answer like an OpenAI-compatible API (check base_url); "
            f"it sent: {snippet!r}",
            fatal=target.display_url not in self._reached,
            stage=stage,
        )

    def _permanent_error(
        self, exc: openai.APIStatusError, target: _Target, call: ModelCallConfig, stage: str
    ) -> EndpointError:
        status = exc.status_code
        # Some servers echo the key they refused; it must never reach a log or a terminal.
        message = _server_message(exc).replace(target.api_key, "***")
        where = target.display_url
        details = dict(status=status, server_message=message, stage=stage)
        if status in (401, 403):
            return EndpointError(
                f"{where} refused the API key from {target.api_key_env} (HTTP {status}: {message}); "
                f"set {target.api_key_env} to a valid key",
                fatal=True,
                **details,
            )
        if status == 404:
            # A model that has answered here before exists; a 404 now concerns this request only.
            never_answered = (where, call.model) not in self._answered
            return EndpointError(
                f"model {call.model!r} not found at {where} (HTTP 404: {message}); check the model name and that "
                "base_url is the API's root (it usually ends in /v1)",
                fatal=never_answered,
                **details,
            )
        if status in (400, 422):
            return EndpointError(
                f"{where} rejected the request for {call.model!r} as invalid (HTTP {status}): {message}", **details
            )
        return EndpointError(f"{where} refused the request for {call.model!r} (HTTP {status}): {message}", **details)

    # ------------------------------------------------------------------ size caps

    def _check_request_size(self, call: ModelCallConfig, messages: list[dict], stage: str) -> None:
        """Backstop against runaway text (a huge dataset field) before it is sent, and paid for, at all."""
        chars = _text_chars(messages)
        cap = self.endpoints.max_prompt_chars
        if cap is not None and chars > cap:
            raise RequestTooLargeError(
                f"the request to {call.model} ({stage}) holds {chars} characters of text, over "
                f"endpoints.max_prompt_chars={cap}; a text field of this sample is far longer than usual: "
                "check the data, or raise the cap",
                stage=stage,
            )

    def _check_answer_size(self, call: ModelCallConfig, stage: str, content: Optional[str]) -> None:
        """An oversized answer is not re-asked (that would send it back) nor stored whole."""
        cap = self.endpoints.max_answer_chars
        if content is not None and cap is not None and len(content) > cap:
            raise InvalidAnswerError(
                f"{call.model} ({stage}) answered with {len(content)} characters, over "
                f"endpoints.max_answer_chars={cap}; raise the cap if answers this long are expected",
                raw=content[:_MAX_RAW_KEPT],
                stage=stage,
            )

    def _delay(self, attempt: int, retry_after: Optional[float]) -> float:
        """Server's Retry-After when given (capped), else exponential backoff with full jitter."""
        cap = self.endpoints.backoff_max_s
        if retry_after is not None:
            return min(max(retry_after, 0.0), cap)
        return self._rng.uniform(0.0, min(cap, self.endpoints.backoff_base_s * 2**attempt))

    # ------------------------------------------------------------------ usage

    def _account(self, call: ModelCallConfig, messages: list[dict], response: Any) -> tuple[Optional[str], StageUsage]:
        message = response.choices[0].message
        content = message.content if isinstance(getattr(message, "content", None), str) else None
        usage = getattr(response, "usage", None)
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion = int(getattr(usage, "completion_tokens", 0) or 0)
        estimated = prompt == 0  # no usage reported (a request always has input tokens): count them ourselves
        if estimated:
            prompt, completion = tokens.prompt_tokens(call.model, messages), tokens.completion_tokens(call.model, content)
        return content, StageUsage(
            calls=1,
            prompt_tokens=prompt,
            completion_tokens=completion,
            images=_count_images(messages),
            cost_usd=call_cost(self.endpoints.prices, call.model, prompt, completion),
            estimated_calls=int(estimated),
        )

    def _record(self, stage: str, usage: StageUsage, meter: UsageMeter | None) -> None:
        self.usage.record(stage, usage)
        if meter is not None and meter is not self.usage:
            meter.record(stage, usage)

    def _record_hit(self, call: ModelCallConfig, stage: str, meter: UsageMeter | None) -> None:
        logger.debug("chat model=%s stage=%s latency=0.00s cached=True", call.model, stage)
        self._record(stage, StageUsage(cache_hits=1), meter)

    # ------------------------------------------------------------------ JSON mode

    def _response_format(self, schema: type[BaseModel]) -> dict[str, Any]:
        if self.endpoints.response_format == "json_schema":
            name = re.sub(r"[^a-zA-Z0-9_-]", "_", schema.__name__)[:64] or "answer"
            return {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": declared_schema(schema), "strict": False},
            }
        return {"type": "json_object"}

    def _json_instruction(self, schema: type[BaseModel]) -> str:
        if self.endpoints.response_format == "json_schema":
            return "Answer with only a JSON object that follows the response schema."
        return (
            "Answer with only a JSON object (no prose, no code fences) matching this JSON schema:\n"
            + json.dumps(declared_schema(schema), separators=(",", ":"))
        )

    # ------------------------------------------------------------------ cache

    def _cache_key(self, call: ModelCallConfig, messages: list[dict], params: dict[str, Any]) -> Optional[str]:
        """Key of the original request, or ``None`` when this request must not be cached."""
        sampled = call.temperature is None or call.temperature > 0  # None: the model's default, usually 1
        if self.cache is None or (sampled and not self.cache_nonzero_temperature):
            return None
        return hash_key({"kind": "chat", "params": params, "messages": [_canonical_message(m) for m in messages]})

    def _cache_get(self, key: Optional[str]) -> Optional[str]:
        if key is None or self.cache is None:
            return None
        value = self.cache.get(CACHE_NAMESPACE, key)
        if value is None:
            return None
        try:
            content = json.loads(value.decode("utf-8"))["content"]
        except (ValueError, KeyError, TypeError):
            logger.debug("ignoring unreadable cache entry %s", key)
            return None
        return content if isinstance(content, str) else None

    def _cache_put(self, key: Optional[str], content: str) -> None:
        if key is not None and self.cache is not None:
            self.cache.put(CACHE_NAMESPACE, key, json.dumps({"content": content}).encode("utf-8"))


# ---------------------------------------------------------------------- helpers


def _request_params(call: ModelCallConfig, response_format: Optional[dict[str, Any]]) -> dict[str, Any]:
    """Everything sent besides the messages; also the non-message part of the cache key."""
    params: dict[str, Any] = {"model": call.model}
    if call.temperature is not None:
        params["temperature"] = call.temperature
    if call.max_tokens is not None:
        params["max_tokens"] = call.max_tokens
    if call.seed is not None:
        params["seed"] = call.seed
    if response_format is not None:
        params["response_format"] = response_format
    return params


def _canonical_message(message: dict[str, Any]) -> dict[str, Any]:
    """The message with image data replaced by (sha256 of the encoded bytes, MIME, detail)."""
    content = message.get("content")
    if not isinstance(content, list):
        return message
    parts = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "image_url":
            image = part.get("image_url") or {}
            url = image.get("url", "")
            ref: dict[str, Any] = {"detail": image.get("detail")}
            if url.startswith("data:"):
                mime, data = decode_data_url(url)
                ref.update(mime=mime, sha256=hashlib.sha256(data).hexdigest())
            else:
                ref["url"] = url
            parts.append({"type": "image_url", "image": ref})
        else:
            parts.append(part)
    return {**message, "content": parts}


def _text_chars(messages: list[dict]) -> int:
    """Characters of text in ``messages`` (images and other parts excluded)."""
    total = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            total += len(content)
        elif isinstance(content, list):
            total += sum(len(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return total


def _count_images(messages: list[dict]) -> int:
    return sum(
        1
        for m in messages
        if isinstance(m.get("content"), list)
        for part in m["content"]
        if isinstance(part, dict) and part.get("type") == "image_url"
    )


def _append_instruction(messages: list[dict], text: str) -> list[dict]:
    """Copy of ``messages`` with ``text`` appended to the last message (the caller's list is untouched)."""
    if not messages:
        raise ValueError("messages must not be empty")
    last = messages[-1]
    content = last.get("content")
    if isinstance(content, list):
        new_content: Any = [*content, {"type": "text", "text": text}]
    else:
        new_content = f"{content}\n\n{text}" if content else text
    return [*messages[:-1], {**last, "content": new_content}]


def _parse_json(raw: str, schema: type[T]) -> T:
    """Parse ``raw`` into ``schema``, tolerating a surrounding code fence."""
    text = raw.strip()
    match = _FENCE.match(text)
    if match:
        text = match.group(1)
    return schema.model_validate_json(text)


def _describe(exc: ValueError) -> str:
    """Short, model-readable description of why an answer was rejected."""
    if isinstance(exc, ValidationError):
        problems = []
        for err in exc.errors()[:8]:
            loc = ".".join(str(p) for p in err["loc"]) or "answer"
            problems.append(f"{loc}: {err['msg']}")
        text = "; ".join(problems)
    else:
        text = str(exc) or type(exc).__name__
    return text[:_MAX_ERROR_CHARS]


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    message: Any = None
    if isinstance(body, dict):
        message = body.get("message")
        inner = body.get("error")
        if message is None and isinstance(inner, dict):
            message = inner.get("message")
    if not message:
        message = exc.response.text if exc.response is not None else str(exc)
    return str(message)[:_MAX_ERROR_CHARS]


def _retry_after(response: Any) -> Optional[float]:
    """Seconds from ``retry-after-ms`` / ``retry-after`` (seconds or HTTP date), if present."""
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return float(ms) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
