"""Cached answers: the key of a request, reading and storing answers, one flight per identical request.

The key covers everything that decides an answer: the endpoint's URL (two
servers may serve different models under one name, and the scripted local
server of the offline demo must never answer a later real run), the request
parameters (model, temperature, seed, max_tokens, response format) and the
messages, each image reduced to the SHA-256 of its encoded bytes. The API key
is not part of it and is never stored. Only valid answers are stored, by the
caller; a request sampled at temperature > 0 is cached only with
``cache.cache_nonzero_temperature``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import weakref
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Optional

from viddiff.backends.messages import decode_data_url
from viddiff.cache import Cache, hash_key
from viddiff.config import ModelCallConfig

logger = logging.getLogger(__name__)

CACHE_NAMESPACE = "chat"


@dataclass
class _Flight:
    """Requests with one key in flight: the first holds the lock, the others wait for its cached answer."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    holders: int = 0


class AnswerCache:
    """Answers in the shared SQLite cache (or none, with ``cache=None``), keyed per request."""

    def __init__(self, cache: Optional[Cache], cache_nonzero_temperature: bool = True):
        self.cache = cache
        self.cache_nonzero_temperature = cache_nonzero_temperature
        self._inflight: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Flight]]
        self._inflight = weakref.WeakKeyDictionary()

    def key(self, url: str, call: ModelCallConfig, messages: list[dict], params: dict[str, Any]) -> Optional[str]:
        """Key of the request as first asked (before any re-ask), or ``None`` when it must not be cached."""
        sampled = call.temperature is None or call.temperature > 0  # None: the model's default, usually 1
        if self.cache is None or (sampled and not self.cache_nonzero_temperature):
            return None
        return hash_key(
            {
                "kind": "chat",
                "endpoint": url.rstrip("/"),
                "params": params,
                "messages": [canonical_message(m) for m in messages],
            }
        )

    def get(self, key: Optional[str]) -> Optional[str]:
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

    def put(self, key: Optional[str], content: str) -> None:
        if key is not None and self.cache is not None:
            self.cache.put(CACHE_NAMESPACE, key, json.dumps({"content": content}).encode("utf-8"))

    @contextlib.asynccontextmanager
    async def single_flight(self, key: Optional[str]) -> AsyncIterator[None]:
        """Identical cacheable requests in flight at once wait for the first, then read its answer from the cache.

        Without this, samples of one action asking the same proposer question concurrently would all pay for it.
        """
        if key is None:
            yield
            return
        flights = self._inflight.setdefault(asyncio.get_running_loop(), {})
        flight = flights.setdefault(key, _Flight())
        flight.holders += 1
        try:
            async with flight.lock:
                yield
        finally:
            flight.holders -= 1
            if flight.holders == 0:
                flights.pop(key, None)


def canonical_message(message: dict[str, Any]) -> dict[str, Any]:
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
