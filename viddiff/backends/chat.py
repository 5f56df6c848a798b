"""The chat-model seam: what the stages need from an LLM/VLM backend.

The proposer, the differencer, the benchmarks' judges and the LMM
baseline take a :class:`ChatModel`, not the concrete
:class:`viddiff.backends.llm.ChatClient`, so another backend (a non-OpenAI
SDK, a model run in-process, a scripted stand-in) plugs in by implementing
these five members; ``docs/extending.md`` (Adding a backend) walks through one.
``ChatClient`` is the implementation every command builds from config.

This module imports neither the ``openai`` SDK nor torch.
"""

from __future__ import annotations

from typing import Callable, Optional, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

from viddiff.backends.usage import UsageMeter
from viddiff.config import ModelCallConfig

T = TypeVar("T", bound=BaseModel)


@runtime_checkable
class ChatModel(Protocol):
    """An LLM/VLM that answers OpenAI-style chat messages (text parts and ``image_url`` data-URL parts).

    Messages are built with :mod:`viddiff.backends.messages`; ``call`` names the
    model and its sampling settings as configured for the stage. Errors a
    backend raises should be :class:`viddiff.errors.EndpointError` (refused or
    unreachable; ``fatal=True`` when every request would fail the same way) and
    :class:`viddiff.errors.InvalidAnswerError` (no valid answer), so that a run
    records the sample as failed instead of crashing. ``isinstance(x, ChatModel)``
    checks that the members exist (not their signatures).
    """

    @property
    def usage(self) -> UsageMeter:
        """Everything this model was asked, per stage (calls, cache hits, tokens, images, cost)."""
        ...

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
        """An answer parsed into ``schema`` that also passes ``validate`` (which raises ``ValueError`` to reject it).

        Usage is recorded under ``stage`` on :attr:`usage` and, when given, on ``meter`` too.
        """
        ...

    async def complete_text(
        self, call: ModelCallConfig, messages: list[dict], *, stage: str = "default", meter: Optional[UsageMeter] = None
    ) -> str:
        """A free-text answer; usage recorded as for :meth:`complete_json`."""
        ...

    async def aclose(self) -> None:
        """Release what was opened in the running event loop (HTTP connections); the model stays usable."""
        ...

    def with_max_reasks(self, max_reasks: int) -> "ChatModel":
        """The same backend (endpoints, cache) re-asking at most ``max_reasks`` times after an invalid answer.

        The judges use it for their own re-ask bound (``eval.max_reasks``); the
        new model keeps its own :attr:`usage`, so a judge can report what it alone cost.
        """
        ...
