"""What one answered request cost: tokens, images and USD, recorded per stage.

Tokens are the server's own count; a server that reports none (local
servers, some proxies) gets an estimate from the request itself
(:mod:`viddiff.backends.tokens`), flagged as ``estimated_calls`` so reports
can say which numbers are counted and which are measured.
"""

from __future__ import annotations

from typing import Any, Optional

from viddiff.backends import tokens
from viddiff.backends.usage import UsageMeter, call_cost
from viddiff.config import ModelPrice
from viddiff.schema import StageUsage


def answer_text(response: Any) -> Optional[str]:
    """The text of the first choice's message; ``None`` for a refusal or a tool call."""
    content = getattr(response.choices[0].message, "content", None)
    return content if isinstance(content, str) else None


def cut_at_token_limit(response: Any) -> bool:
    """Whether the server stopped the first choice at its token limit (``max_tokens`` or its own)."""
    return getattr(response.choices[0], "finish_reason", None) == "length"


def call_usage(
    model: str, messages: list[dict], response: Any, content: Optional[str], prices: dict[str, ModelPrice]
) -> StageUsage:
    """Usage of one answered call (failed attempts before it are not billed calls)."""
    reported = getattr(response, "usage", None)
    prompt = int(getattr(reported, "prompt_tokens", 0) or 0)
    completion = int(getattr(reported, "completion_tokens", 0) or 0)
    estimated = prompt == 0  # no usage reported (a request always has input tokens): count them ourselves
    if estimated:
        prompt, completion = tokens.prompt_tokens(model, messages), tokens.completion_tokens(model, content)
    return StageUsage(
        calls=1,
        prompt_tokens=prompt,
        completion_tokens=completion,
        images=count_images(messages),
        cost_usd=call_cost(prices, model, prompt, completion),
        estimated_calls=int(estimated),
    )


def record(stage: str, usage: StageUsage, client_meter: UsageMeter, caller_meter: Optional[UsageMeter]) -> None:
    """Record on the client's own meter and, when it is another one, on the caller's (e.g. per-sample) meter."""
    client_meter.record(stage, usage)
    if caller_meter is not None and caller_meter is not client_meter:
        caller_meter.record(stage, usage)


def count_images(messages: list[dict]) -> int:
    return sum(
        1
        for m in messages
        if isinstance(m.get("content"), list)
        for part in m["content"]
        if isinstance(part, dict) and part.get("type") == "image_url"
    )
