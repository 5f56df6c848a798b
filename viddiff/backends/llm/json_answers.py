"""JSON answers: ask for them, parse and check them, and re-ask while they are invalid.

``endpoints.response_format`` decides how JSON is asked for: ``json_schema``
sends the answer model's schema as the response format (servers that honour
it constrain decoding to it); ``json_object`` only asks for some JSON object
and spells the schema out in the prompt. Either way the answer is parsed
into the pydantic model and checked by the caller's ``validate``; an invalid
answer goes back to the model with what was wrong, at most ``max_reasks``
times, and is never guessed into a valid one. An answer the server cut at the
token limit is not re-asked: the same request would be cut the same way.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Literal, Optional, TypeVar, Union

from pydantic import BaseModel, ValidationError

from viddiff.backends.json_schema import declared_schema
from viddiff.backends.messages import assistant_message, user_message
from viddiff.errors import InvalidAnswerError

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
Mode = Literal["json_schema", "json_object"]


@dataclass(frozen=True)
class ModelReply:
    """One answer as the server sent it."""

    text: Optional[str]
    """``None``: the model sent no text (a refusal or a tool call)."""
    cut_at_token_limit: bool = False
    """The server stopped the answer at its token limit (``finish_reason: "length"``)."""


Send = Callable[[list[dict]], Awaitable[Union[ModelReply, str, None]]]
"""Sends messages, returns the answer: its text (``None``: the model sent none), or a :class:`ModelReply` when the
sender can tell that the server cut it at the token limit."""

REASK = "Your previous answer was not valid: {error}\nAnswer again with only the corrected JSON object."
MAX_PROBLEM_CHARS = 1000
_FENCE = re.compile(r"^```[a-zA-Z]*\s*(.*?)\s*```$", re.DOTALL)


def response_format(schema: type[BaseModel], mode: Mode) -> dict[str, Any]:
    """The ``response_format`` request parameter for answers of ``schema``."""
    if mode == "json_schema":
        name = re.sub(r"[^a-zA-Z0-9_-]", "_", schema.__name__)[:64] or "answer"
        return {"type": "json_schema", "json_schema": {"name": name, "schema": declared_schema(schema), "strict": False}}
    return {"type": "json_object"}


def instruction(schema: type[BaseModel], mode: Mode) -> str:
    """What the prompt adds so that the answer is only the JSON object."""
    if mode == "json_schema":
        return "Answer with only a JSON object that follows the response schema."
    return (
        "Answer with only a JSON object (no prose, no code fences) matching this JSON schema:\n"
        + json.dumps(declared_schema(schema), separators=(",", ":"))
    )


def with_instruction(messages: list[dict], text: str) -> list[dict]:
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


def parse_answer(raw: str, schema: type[T], validate: Optional[Callable[[T], None]] = None) -> T:
    """``raw`` parsed into ``schema`` (a surrounding code fence is tolerated) and checked; ``ValueError`` if invalid."""
    text = raw.strip()
    match = _FENCE.match(text)
    if match:
        text = match.group(1)
    answer = schema.model_validate_json(text)
    if validate is not None:
        validate(answer)
    return answer


def describe_problem(exc: ValueError) -> str:
    """Short, model-readable description of why an answer was rejected."""
    if isinstance(exc, ValidationError):
        problems = []
        for err in exc.errors()[:8]:
            loc = ".".join(str(p) for p in err["loc"]) or "answer"
            problems.append(f"{loc}: {err['msg']}")
        text = "; ".join(problems)
    else:
        text = str(exc) or type(exc).__name__
    return text[:MAX_PROBLEM_CHARS]


async def ask_until_valid(
    send: Send,
    messages: list[dict],
    schema: type[T],
    validate: Optional[Callable[[T], None]],
    *,
    mode: Mode,
    max_reasks: int,
    model: str,
    stage: str,
    token_limit_advice: str = "raise the model call's max_tokens",
) -> tuple[T, str]:
    """The first valid answer and its raw text; :class:`InvalidAnswerError` after ``max_reasks`` re-asks, or at
    once for an invalid answer cut at the token limit (``token_limit_advice`` says which key to raise)."""
    sent = with_instruction(messages, instruction(schema, mode))
    raw = problem = ""
    for attempt in range(max_reasks + 1):
        reply = await send(sent)
        if not isinstance(reply, ModelReply):
            reply = ModelReply(reply)
        raw = reply.text or ""
        try:
            if reply.text is None:
                raise ValueError("the answer was empty")
            return parse_answer(raw, schema, validate), raw
        except ValueError as exc:
            problem = describe_problem(exc)
            if reply.cut_at_token_limit:
                raise InvalidAnswerError(
                    f"{model} ({stage}): the answer was cut at the token limit after {len(raw)} characters, before "
                    f"its JSON was complete; {token_limit_advice}",
                    raw=raw,
                    stage=stage,
                ) from None
            logger.debug("invalid answer from %s (%s), attempt %d: %s", model, stage, attempt + 1, problem)
            sent = [*sent, assistant_message(raw), user_message(REASK.format(error=problem))]
    raise InvalidAnswerError(
        f"{model} ({stage}) gave no valid {schema.__name__} answer in {max_reasks + 1} attempts; "
        f"last problem: {problem}",
        raw=raw,
        stage=stage,
    )
