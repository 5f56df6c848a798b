"""What a failed attempt means: try again (:class:`TransientError`) or stop (:class:`EndpointError`).

Tried again: HTTP 408, 409, 429 and 5xx, no complete answer before the
deadline, a dropped or refused connection, a malformed or truncated body, an
HTTP 200 that carries an error object (some proxies report overload so).
Not tried again: every other HTTP status (400, 401, 403, 404, 422, ...) and a
body that is no API answer at all (a web page: base_url points elsewhere).
The error messages say what to do; servers that echo a refused key get it
masked before it can reach a log or a terminal.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from typing import Any, Optional

import openai

from viddiff.backends.llm.endpoint import Target
from viddiff.errors import EndpointError

RETRYABLE_STATUS = frozenset({408, 409, 429})
"""Besides every 5xx."""
MAX_SERVER_MESSAGE_CHARS = 1000
_TOO_LARGE = re.compile(
    r"context.(length|window).{0,40}(exceed|too)|maximum context|payload.{0,30}(too large|too big|exceed|limit)|"
    r"request entity|request (is )?too (large|long)|"
    r"request size|too many images|image.{0,40}(too large|too big|exceed|dimension)|"
    r"(prompt|input).{0,30}(too long|too large|exceed)",
    re.IGNORECASE,
)
"""How servers word a refusal of a request's size (OpenAI, Azure, vLLM, Ollama, proxies)."""
_SMALLER_IMAGES = {
    "differencer": (
        "--set differencer.image.max_side=768, --set differencer.image.detail=low, or fewer frames per difference "
        "(--set localizer.n_frames_multi=1)"
    ),
    "baseline": (
        "--set baseline.image.max_side=384, --set baseline.image.detail=low, or fewer frames "
        "(--set baseline.max_images=N)"
    ),
}
"""Per stage that sends frames: the settings that make its requests smaller."""


class TransientError(Exception):
    """One failed attempt worth repeating; ``retry_after`` is the server's hint in seconds.

    ``no_response``: nothing came back at all (connection refused, reset, DNS),
    as opposed to an HTTP error or a slow or broken answer from a server that is there.
    """

    def __init__(self, description: str, retry_after: Optional[float] = None, *, no_response: bool = False):
        super().__init__(description)
        self.retry_after = retry_after
        self.no_response = no_response


def status_error(
    exc: openai.APIStatusError, target: Target, model: str, stage: str, *, model_answered: bool
) -> Exception:
    """The error for an HTTP error status: transient for 408/409/429/5xx, else a refusal saying what to fix."""
    status = exc.status_code
    message = server_message(exc).replace(target.api_key, "***")
    if status in RETRYABLE_STATUS or status >= 500:
        return TransientError(f"HTTP {status}: {message}", retry_after_seconds(exc.response))
    where = target.base_url

    def refusal(text: str, fatal: bool = False) -> EndpointError:
        return EndpointError(text, fatal=fatal, status=status, server_message=message, stage=stage)

    if status in (401, 403):
        return refusal(
            f"{where} refused the API key from {target.api_key_env} (HTTP {status}: {message}); "
            f"set {target.api_key_env} to a valid key",
            fatal=True,
        )
    if status == 404:
        # A model that has answered here before exists; a 404 now concerns this request only.
        return refusal(
            f"model {model!r} not found at {where} (HTTP 404: {message}); check the model name and that "
            "base_url is the API's root (it usually ends in /v1)",
            fatal=not model_answered,
        )
    hint = too_large_hint(stage) if status == 413 or (status in (400, 422) and _too_large(exc, message)) else ""
    if status in (400, 422):
        return refusal(f"{where} rejected the request for {model!r} as invalid (HTTP {status}): {message}{hint}")
    return refusal(f"{where} refused the request for {model!r} (HTTP {status}): {message}{hint}")


def _too_large(exc: openai.APIStatusError, message: str) -> bool:
    """Whether a 400/422 refuses the request's size (context length, payload, image count or size)."""
    code = getattr(exc, "code", None)
    return code == "context_length_exceeded" or bool(_TOO_LARGE.search(message))


def too_large_hint(stage: str) -> str:
    """What to change when ``stage``'s request was too large: its image settings, or the text it sends."""
    images = _SMALLER_IMAGES.get(stage)
    if images:
        return f"; the request is too large for the model: send smaller or fewer images, e.g. {images}"
    return (
        "; the request is too long for the model's context: use a model with a longer context, or shorten the "
        "text it is sent (endpoints.max_prompt_chars refuses long requests before sending them)"
    )


def check_chat_completion(response: Any, url: str, stage: str, *, first_contact: bool) -> None:
    """Raise unless ``response`` is a chat completion with a message.

    A body that is no chat completion at all (an HTML page, a JSON error page of
    some other service) means base_url points somewhere else; one cut short on
    the way is worth another try.
    """
    if isinstance(response, str):  # the SDK hands back the text of a non-JSON body
        if response.lstrip().startswith(("{", "[")):
            raise TransientError("malformed response body (incomplete JSON)")
        raise not_an_api(url, stage, response, fatal=first_contact)
    choices = getattr(response, "choices", None)
    if isinstance(choices, list) and choices and getattr(choices[0], "message", None) is not None:
        return
    extra = getattr(response, "model_extra", None) or {}
    if "error" in extra:
        raise TransientError(f"HTTP 200 with an error: {str(extra['error'])[:MAX_SERVER_MESSAGE_CHARS]}")
    if choices is None and not str(getattr(response, "object", None) or "").startswith("chat.completion"):
        raise not_an_api(url, stage, json.dumps(extra)[:200] if extra else "", fatal=first_contact)
    raise TransientError("malformed response: no choices[0].message")


def not_an_api(url: str, stage: str, body: str, *, fatal: bool) -> EndpointError:
    snippet = " ".join(body.split())[:120]
    return EndpointError(
        f"the server at {url} did not answer like an OpenAI-compatible API (check base_url); it sent: {snippet!r}",
        fatal=fatal,
        stage=stage,
    )


def gave_up(failures: list[TransientError], url: str, model: str, stage: str, *, reached: bool) -> EndpointError:
    """The error once retries are exhausted: "cannot reach" (fatal) if nothing ever came back from ``url``."""
    last = str(failures[-1])
    if not reached and all(f.no_response for f in failures):
        return EndpointError(
            f"cannot reach {url} ({len(failures)} attempts, last: {last}); check that the server is running and "
            "that base_url is right",
            fatal=True,
            stage=stage,
        )
    return EndpointError(
        f"{model} at {url} kept failing: {len(failures)} attempts, last: {last}; check that the server is up, or "
        "raise endpoints.max_retries / endpoints.timeout_s (both may change on --resume)",
        stage=stage,
    )


def server_message(exc: openai.APIStatusError) -> str:
    """The server's own words from an error body (OpenAI's ``{"error": {"message"}}`` or a flat ``message``)."""
    body = exc.body
    message: Any = None
    if isinstance(body, dict):
        message = body.get("message")
        inner = body.get("error")
        if message is None and isinstance(inner, dict):
            message = inner.get("message")
    if not message:
        message = exc.response.text if exc.response is not None else str(exc)
    return str(message)[:MAX_SERVER_MESSAGE_CHARS]


def retry_after_seconds(response: Any) -> Optional[float]:
    """Seconds from ``retry-after-ms`` / ``retry-after`` (seconds or HTTP date), if the response has them."""
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
