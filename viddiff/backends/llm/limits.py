"""Size caps on what is sent (``endpoints.max_prompt_chars``) and what comes back (``max_answer_chars``), and
what to say when the server's own cap (``max_tokens``) cut an answer.

A backstop against runaway text: a huge dataset field is refused before it
is sent, and paid for, at all; an oversized answer is neither re-asked (that
would send it back) nor stored whole.
"""

from __future__ import annotations

from typing import Optional

from viddiff.config import ModelCallConfig
from viddiff.errors import InvalidAnswerError, RequestTooLargeError

MAX_RAW_KEPT = 2000
"""Characters of an oversized answer kept for ``samples.jsonl``/``errors.json``."""


def check_request_size(messages: list[dict], model: str, stage: str, cap: Optional[int]) -> None:
    chars = text_chars(messages)
    if cap is not None and chars > cap:
        raise RequestTooLargeError(
            f"the request to {model} ({stage}) holds {chars} characters of text, over "
            f"endpoints.max_prompt_chars={cap}; a text field of this sample is far longer than usual: "
            "check the data, or raise the cap",
            stage=stage,
        )


def check_answer_size(content: Optional[str], model: str, stage: str, cap: Optional[int]) -> None:
    if content is not None and cap is not None and len(content) > cap:
        raise InvalidAnswerError(
            f"{model} ({stage}) answered with {len(content)} characters, over "
            f"endpoints.max_answer_chars={cap}; raise the cap if answers this long are expected",
            raw=content[:MAX_RAW_KEPT],
            stage=stage,
        )


def text_chars(messages: list[dict]) -> int:
    """Characters of text in ``messages`` (images and other parts excluded)."""
    total = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            total += len(content)
        elif isinstance(content, list):
            total += sum(len(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return total


def token_limit_advice(call: ModelCallConfig) -> str:
    """Which key to raise for answers of ``call`` cut at the token limit, from what, and to what."""
    key = f"{call.config_key}.max_tokens" if call.config_key else "this model call's max_tokens"
    now = f"now {call.max_tokens}" if call.max_tokens else "unset, so the server's own limit cut it"
    advice = f"raise {key} ({now})"
    if call.config_key:
        advice += f", e.g. --set {key}={(call.max_tokens or 1024) * 4}"
    return advice
