"""Where a call goes (the endpoint's URL and key) and what this client has seen of each endpoint.

The URL is resolved on its own (:func:`endpoint_url`) because the answer
cache keys on it, and a cache hit must need no key.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from viddiff.config import EndpointsConfig, ModelCallConfig
from viddiff.errors import EndpointError

DEFAULT_BASE_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class Target:
    """A resolved endpoint: where to send and with which key (never logged, never in a repr)."""

    base_url: str
    api_key_env: str
    api_key: str = field(repr=False)


def endpoint_url(call: ModelCallConfig, endpoints: EndpointsConfig) -> str:
    """The base URL ``call`` goes to: its stage's endpoint, else the default one, else ``OPENAI_BASE_URL``, else OpenAI."""
    endpoint = call.endpoint or endpoints.default
    return endpoint.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL


def resolve_target(call: ModelCallConfig, endpoints: EndpointsConfig) -> Target:
    """URL and key for ``call``; a missing key is an error every request would hit (``fatal``)."""
    endpoint = call.endpoint or endpoints.default
    key = os.environ.get(endpoint.api_key_env)
    if not key:
        raise EndpointError(
            f"no API key for model {call.model!r}: environment variable {endpoint.api_key_env} is not set; "
            f"set {endpoint.api_key_env}=... (or a dummy value for local servers)",
            fatal=True,
        )
    return Target(base_url=endpoint_url(call, endpoints), api_key_env=endpoint.api_key_env, api_key=key)


class EndpointHistory:
    """Endpoints that sent any HTTP response, and (endpoint, model) pairs that gave a completion.

    An error is marked ``fatal`` (stop the run) only while it can still mean
    "this will never work": an endpoint never reached, a model never answered.
    After real answers, the same error concerns one request.
    """

    def __init__(self) -> None:
        self._reached: set[str] = set()
        self._answered: set[tuple[str, str]] = set()

    def mark_reached(self, url: str) -> None:
        self._reached.add(url)

    def mark_answered(self, url: str, model: str) -> None:
        self._reached.add(url)
        self._answered.add((url, model))

    def has_reached(self, url: str) -> bool:
        return url in self._reached

    def has_answered(self, url: str, model: str) -> bool:
        return (url, model) in self._answered
