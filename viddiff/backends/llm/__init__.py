"""OpenAI-compatible chat client: every LLM/VLM call of every stage goes through :class:`ChatClient`.

It implements :class:`viddiff.backends.chat.ChatModel` (what the stages
depend on) by composing layers, each its own module, readable and testable
alone:

- transport (:mod:`.transport`): the official ``openai`` SDK per event loop
  and endpoint (:mod:`.endpoint`), bounded concurrency, a deadline on each
  whole attempt, failures mapped to retry-or-stop (:mod:`.faults`) and
  retried with logging (:mod:`.retries`, on ``tenacity``);
- JSON answers (:mod:`.json_answers`): response format, instruction, parse,
  validate, re-ask;
- cache (:mod:`.answer_cache`): request keys (endpoint included), get/put,
  one flight per identical request;
- usage (:mod:`.accounting`, :mod:`viddiff.backends.usage`,
  :mod:`viddiff.backends.tokens`): tokens, images, cost per stage;
- size caps (:mod:`.limits`) on requests and answers.

A cache hit needs neither a server nor an API key.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Awaitable, Callable, Optional, TypeVar

from pydantic import BaseModel

from viddiff.backends.llm.accounting import answer_text, call_usage, cut_at_token_limit, record
from viddiff.backends.llm.answer_cache import CACHE_NAMESPACE, AnswerCache
from viddiff.backends.llm.endpoint import Target, endpoint_url, resolve_target
from viddiff.backends.llm.json_answers import ModelReply, ask_until_valid, parse_answer, response_format
from viddiff.backends.llm.limits import check_answer_size, check_request_size, token_limit_advice
from viddiff.backends.llm.transport import Transport, request_params
from viddiff.backends.messages import ImageEncodingError, encode_image, system_message, user_message
from viddiff.backends.usage import UsageMeter
from viddiff.cache import Cache
from viddiff.config import EndpointsConfig, ModelCallConfig
from viddiff.errors import InvalidAnswerError
from viddiff.schema import StageUsage

__all__ = [
    "CACHE_NAMESPACE",
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
        self.transport = Transport(endpoints)
        self.answers = AnswerCache(cache, cache_nonzero_temperature)

    def with_max_reasks(self, max_reasks: int) -> "ChatClient":
        """A client on the same endpoints and cache, re-asking at most ``max_reasks`` times, with its own usage."""
        endpoints = self.endpoints.model_copy(update={"max_reasks": max_reasks})
        return ChatClient(endpoints, self.cache, self.cache_nonzero_temperature)

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
        Only valid answers are cached.
        """
        check_request_size(messages, call.model, stage, self.endpoints.max_prompt_chars)
        mode = self.endpoints.response_format
        params = request_params(call, response_format(schema, mode))
        key = self.answers.key(endpoint_url(call, self.endpoints), call, messages, params)
        async with self.answers.single_flight(key):
            cached = self._cached_answer(key, schema, validate)
            if cached is not None:
                self._record_hit(call, stage, meter)
                return cached
            target = resolve_target(call, self.endpoints)
            answer, raw = await ask_until_valid(
                lambda sent: self._post(target, call, sent, params, stage, meter),
                messages,
                schema,
                validate,
                mode=mode,
                max_reasks=self.endpoints.max_reasks,
                model=call.model,
                stage=stage,
                token_limit_advice=token_limit_advice(call),
            )
            self.answers.put(key, raw)
            return answer

    async def complete_text(
        self, call: ModelCallConfig, messages: list[dict], *, stage: str = "default", meter: UsageMeter | None = None
    ) -> str:
        """Free-text answer (no JSON, no re-asks)."""
        check_request_size(messages, call.model, stage, self.endpoints.max_prompt_chars)
        params = request_params(call, None)
        key = self.answers.key(endpoint_url(call, self.endpoints), call, messages, params)
        async with self.answers.single_flight(key):
            cached = self.answers.get(key)
            if cached is not None:
                self._record_hit(call, stage, meter)
                return cached
            content = (await self._post(resolve_target(call, self.endpoints), call, messages, params, stage, meter)).text
            if content is None:
                raise InvalidAnswerError(
                    f"{call.model} ({stage}) returned no text (refusal or tool call)", raw="", stage=stage
                )
            self.answers.put(key, content)
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
        await self.transport.aclose()

    async def _post(
        self,
        target: Target,
        call: ModelCallConfig,
        messages: list[dict],
        params: dict[str, Any],
        stage: str,
        meter: UsageMeter | None,
    ) -> ModelReply:
        """Send (with retries), account for the answer, enforce the answer cap; the answer."""
        started = time.monotonic()
        response = await self.transport.send(target, call, messages, params, stage)
        content = answer_text(response)
        usage = call_usage(call.model, messages, response, content, self.endpoints.prices)
        record(stage, usage, self.usage, meter)
        logger.debug(
            "chat model=%s stage=%s latency=%.2fs cached=False tokens=%d+%d",
            call.model, stage, time.monotonic() - started, usage.prompt_tokens, usage.completion_tokens,
        )
        check_answer_size(content, call.model, stage, self.endpoints.max_answer_chars)
        return ModelReply(content, cut_at_token_limit(response))

    def _cached_answer(self, key: Optional[str], schema: type[T], validate: Callable[[T], None] | None) -> Optional[T]:
        """The cached answer if there is one and it passes today's checks (they may be stricter than when cached)."""
        raw = self.answers.get(key)
        if raw is None:
            return None
        try:
            return parse_answer(raw, schema, validate)
        except ValueError:
            logger.debug("cached answer no longer valid for %s; asking again", schema.__name__)
            return None

    def _record_hit(self, call: ModelCallConfig, stage: str, meter: UsageMeter | None) -> None:
        logger.debug("chat model=%s stage=%s latency=0.00s cached=True", call.model, stage)
        record(stage, StageUsage(cache_hits=1), self.usage, meter)

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
