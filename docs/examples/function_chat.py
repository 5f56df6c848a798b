"""A chat backend that is not an OpenAI-compatible server: any function from messages to answer text.

``FunctionChat`` implements ``viddiff.backends.chat.ChatModel`` around
``generate(messages) -> str``: a vendor SDK's call, a model run in this
process, a rule. It reuses viddiff's JSON layer (instruction, parsing,
validation, re-asks) and records one call per answer, so proposer,
differencer, judges and baselines run on it unchanged. Pass it where a
client is taken: ``VidDiff(config, client=FunctionChat(generate))``,
``LMMBaseline(config, client=...)``, ``evaluate(..., client=...)``.
"""

from __future__ import annotations

import asyncio
from typing import Callable, Optional, TypeVar

from pydantic import BaseModel

from viddiff.backends.llm.accounting import count_images, record
from viddiff.backends.llm.json_answers import ask_until_valid
from viddiff.backends.usage import UsageMeter
from viddiff.config import ModelCallConfig
from viddiff.errors import EndpointError, InvalidAnswerError
from viddiff.schema import StageUsage

T = TypeVar("T", bound=BaseModel)
Generate = Callable[[list[dict]], str]
"""OpenAI-style messages (text parts, ``image_url`` parts with base64 data URLs) → the model's answer text."""


class FunctionChat:
    def __init__(self, generate: Generate, max_reasks: int = 2):
        self.generate = generate
        self.max_reasks = max_reasks
        self._usage = UsageMeter()

    @property
    def usage(self) -> UsageMeter:
        return self._usage

    async def complete_json(
        self,
        call: ModelCallConfig,
        messages: list[dict],
        schema: type[T],
        *,
        stage: str = "default",
        validate: Optional[Callable[[T], None]] = None,
        meter: Optional[UsageMeter] = None,
    ) -> T:
        async def send(sent: list[dict]) -> Optional[str]:
            return await self._answer(call, sent, stage, meter)

        # json_object: the schema is spelled out in the prompt, as this backend has no response_format.
        answer, _raw = await ask_until_valid(
            send, messages, schema, validate, mode="json_object", max_reasks=self.max_reasks, model=call.model, stage=stage
        )
        return answer

    async def complete_text(
        self, call: ModelCallConfig, messages: list[dict], *, stage: str = "default", meter: Optional[UsageMeter] = None
    ) -> str:
        text = await self._answer(call, messages, stage, meter)
        if not text:
            raise InvalidAnswerError(f"{call.model} ({stage}) returned no text", raw="", stage=stage)
        return text

    async def aclose(self) -> None:
        """Nothing is held open between calls here; an SDK client would be closed now."""

    def with_max_reasks(self, max_reasks: int) -> "FunctionChat":
        return FunctionChat(self.generate, max_reasks)

    async def _answer(
        self, call: ModelCallConfig, messages: list[dict], stage: str, meter: Optional[UsageMeter]
    ) -> str:
        try:
            text = await asyncio.to_thread(self.generate, messages)  # a blocking SDK call must not stall the loop
        except OSError as exc:  # how this backend's transport fails: one sample fails, the run goes on
            raise EndpointError(f"{call.model} ({stage}) failed: {exc}", stage=stage) from exc
        record(stage, StageUsage(calls=1, images=count_images(messages)), self._usage, meter)
        return text
