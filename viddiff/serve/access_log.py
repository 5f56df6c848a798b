"""One access line per request, and its request id (``X-Request-ID``, a client's own honoured when it is sane).

A plain ASGI middleware, so an event stream is logged once, when it ends, with its whole duration. The line
names the key by its *name* (the routes tag it once the key is checked), never the key; the job id is the
route's ``{job_id}``, or the one the route tagged (a new comparison). Each finished request is also handed to
``on_request`` (the ``/metrics`` counters) by its route's template, not its path.
"""

from __future__ import annotations

import logging
import re
import secrets
import time
from typing import Any, Callable, Optional

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from viddiff.serve.log_format import FIELDS

log = logging.getLogger("viddiff.serve.access")
REQUEST_ID_HEADER = "X-Request-ID"
_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._:+=/-]{1,128}")
"""A client's request id is kept when it could not forge a log line or flood one; else a new one is made."""
_TAGS = "viddiff.access"
UNMATCHED_ROUTE = "unmatched"
OnRequest = Callable[[str, str, int], None]
"""``(route template, method, status)``."""


def tag(scope: Scope, *, key: Optional[str] = None, job_id: Optional[str] = None) -> None:
    """Name the request's key (by its name) or job in its access line."""
    tags = scope.setdefault(_TAGS, {})
    if key is not None:
        tags["key"] = key
    if job_id is not None:
        tags["job_id"] = job_id


class AccessLog:
    def __init__(self, app: ASGIApp, on_request: OnRequest):
        self.app = app
        self.on_request = on_request

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = _request_id(scope)
        started = time.perf_counter()
        status = 500  # unless a response starts: an exception escaped the app

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableHeaders(scope=message)[REQUEST_ID_HEADER] = request_id
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            seconds = time.perf_counter() - started
            route = getattr(scope.get("route"), "path", None) or UNMATCHED_ROUTE
            self.on_request(route, scope["method"], status)
            _log_line(scope, status, seconds, request_id)


def _request_id(scope: Scope) -> str:
    for name, value in scope["headers"]:
        if name == b"x-request-id":
            text = value.decode("latin-1")
            if _SANE_REQUEST_ID.fullmatch(text):
                return text
            break
    return secrets.token_hex(12)


def _log_line(scope: Scope, status: int, seconds: float, request_id: str) -> None:
    tags: dict[str, Any] = scope.get(_TAGS, {})
    job_id = tags.get("job_id") or scope.get("path_params", {}).get("job_id")
    client = scope.get("client")
    fields = {
        "method": scope["method"], "path": scope["path"], "status": status, "duration_ms": round(seconds * 1000, 1),
        "key": tags.get("key"), "job_id": job_id, "request_id": request_id, "client": client[0] if client else None,
    }
    log.info(
        "%s %s %d %.1f ms key=%s job=%s request=%s", fields["method"], fields["path"], status, fields["duration_ms"],
        fields["key"] or "-", job_id or "-", request_id, extra={FIELDS: fields},
    )
