"""The one exception the service turns into an HTTP answer: a status, what is wrong and what to do."""

from __future__ import annotations

from typing import Optional


class ApiError(Exception):
    """A 4xx/5xx answer with a ``{"detail": ...}`` body (and headers such as ``Retry-After``)."""

    def __init__(self, status: int, detail: str, headers: Optional[dict[str, str]] = None):
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = headers or {}


def without_paths(text: str, names: dict[str, str]) -> str:
    """``text`` with each path of ``names`` replaced by its name (longest first): what a client is shown
    never holds a path of the server's disk."""
    for path in sorted(names, key=len, reverse=True):
        text = text.replace(path, names[path])
    return text
