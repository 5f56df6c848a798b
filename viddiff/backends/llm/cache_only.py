"""A chat client that answers from the cache and never sends a request.

Rebuilding the outputs of a finished run (``viddiff report``) scores its predictions again, and an open-mode
judge is a model: its answers must come from the cache the run filled, so the rebuild costs nothing and
scores exactly what the run scored. An answer that is not there stops the rebuild and says so.
"""

from __future__ import annotations

from typing import Any

from viddiff.backends.llm import ChatClient
from viddiff.backends.llm.endpoint import Target
from viddiff.backends.llm.json_answers import ModelReply
from viddiff.backends.usage import UsageMeter
from viddiff.config import ModelCallConfig
from viddiff.errors import ViddiffError


class NotCachedError(ViddiffError):
    """A cache-only client was asked something the cache has no answer for."""


class CachedAnswersOnly(ChatClient):
    """:class:`ChatClient` whose requests are refused: only cached answers come back."""

    def with_max_reasks(self, max_reasks: int) -> "CachedAnswersOnly":
        endpoints = self.endpoints.model_copy(update={"max_reasks": max_reasks})
        return CachedAnswersOnly(endpoints, self.cache, self.cache_nonzero_temperature)

    async def _post(
        self,
        target: Target,
        call: ModelCallConfig,
        messages: list[dict],
        params: dict[str, Any],
        stage: str,
        meter: UsageMeter | None,
    ) -> ModelReply:
        where = f"the cache at {self.cache.path}" if self.cache is not None else "the cache (it is disabled)"
        raise NotCachedError(
            f"{call.model} ({stage}) has no answer in {where} for a request this needs, and nothing here calls a "
            "model; score the run again with `viddiff eval` (which may call the judge), then retry"
        )
