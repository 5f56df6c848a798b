"""The HTTP edge's bounds: uvicorn's h11 protocol, told to refuse what is too big and to close what stalls.

uvicorn bounds neither how long a request's header may take nor how slowly its body may trickle, and its
default (httptools) parser no header size: one client sending a 300 MB header, or a byte every 2 s, holds a
connection and the event loop's time for as long as it likes. This protocol adds, per connection:

- 431 as soon as a request's header passes ``serve.max_header_bytes`` without ending (before the rest is
  read); h11's own ``max_incomplete_event_size`` holds the same bound for chunk lines and trailers;
- 408 and close when a header is not complete ``serve.header_timeout_s`` after its first byte (or after the
  connection opened): a deadline, not an idle time, so a byte every 2 s does not keep it open;
- close when a body brings less than :data:`MIN_BODY_BYTES` in a window of ``serve.body_idle_timeout_s``
  (windows in which the server itself paused reading, or has not yet sent ``100 Continue``, do not count);
- a lingering close: an answer given before the request was read (431, 413, 415) is followed by a half-close,
  and what the client still sends is discarded for up to :data:`LINGER_S`, so that the client reads the answer
  instead of a connection reset.

:class:`EdgeMiddleware` adds ``Connection: close`` to an answer given before its request body was read (so
the protocol closes instead of reading the rest), and turns a client gone mid-request into one log line.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Optional

import h11
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from viddiff.config import ServeConfig

log = logging.getLogger(__name__)
MIN_BODY_BYTES = 1024
"""A body bringing less than this in a whole ``body_idle_timeout_s`` window is stalled: a trickle of a byte a
second holds a connection as surely as silence, while the slowest phone network (GPRS, ~2.5 KB/s) brings
far more."""
LINGER_S = 2.0
"""How long the rest of a refused request is read and dropped before the connection is closed."""
CLOSED_BY_EDGE = "viddiff.closed_by_edge"
"""Set in the request's scope when the protocol closed a stalled body (it logged why: one line is enough)."""


@dataclass(frozen=True)
class EdgeLimits:
    max_header_bytes: int
    header_timeout_s: float
    body_idle_timeout_s: float

    @classmethod
    def of(cls, cfg: ServeConfig) -> "EdgeLimits":
        return cls(cfg.max_header_bytes, cfg.header_timeout_s, cfg.body_idle_timeout_s)


def uvicorn_options(cfg: ServeConfig) -> dict[str, Any]:
    """The ``uvicorn.Config`` arguments that bound requests (``viddiff serve`` and the test server pass them)."""
    limits = EdgeLimits.of(cfg)
    protocol = type("BoundedH11Protocol", (BoundedH11Protocol,), {"limits": limits})
    return {"http": protocol, "h11_max_incomplete_event_size": limits.max_header_bytes}


def _raw_answer(status: int, detail: str) -> bytes:
    """A whole JSON answer, for states where h11 may not send one (no request was parsed)."""
    body = json.dumps({"detail": detail}).encode()
    head = (
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nx-content-type-options: nosniff\r\nconnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class _LingeringTransport:
    """The connection's transport, whose ``close`` lingers while the client is still sending its request."""

    def __init__(self, transport: asyncio.Transport, protocol: "BoundedH11Protocol"):
        self._transport = transport
        self._protocol = protocol
        self.lingering = False

    def close(self, *, linger: Optional[bool] = None) -> None:
        if linger is None:
            linger = self._protocol.conn.their_state in (h11.SEND_BODY, h11.ERROR)
        if self.lingering or self._transport.is_closing():
            return
        if not linger or not self._transport.can_write_eof():
            self._transport.close()
            return
        self.lingering = True
        self._transport.write_eof()  # the answer is flushed, then FIN: the client reads it and stops
        self._transport.resume_reading()
        asyncio.get_running_loop().call_later(LINGER_S, self._transport.close)

    def is_closing(self) -> bool:
        return self.lingering or self._transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with header size, header time and body progress bounded (module docstring)."""

    limits: EdgeLimits  # set on the subclass :func:`uvicorn_options` makes

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._header_timer: Optional[asyncio.TimerHandle] = None
        self._body_timer: Optional[asyncio.TimerHandle] = None
        self._body_bytes = 0
        self._app_behind = False
        """The app held unread body during the last window: the next window is the client's first full one."""
        self._edge: Optional[_LingeringTransport] = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._edge = _LingeringTransport(transport, self)
        super().connection_made(self._edge)  # type: ignore[arg-type]
        self._arm_header_timer()

    def connection_lost(self, exc: Optional[Exception]) -> None:
        self._cancel_timers()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        assert self._edge is not None
        if self._edge.lingering:
            return  # the rest of a refused request
        if self.conn.their_state is h11.IDLE:
            if self._header_too_long(data):
                self._refuse(431, f"the request header is longer than serve.max_header_bytes = "
                             f"{self.limits.max_header_bytes} bytes")
                return
            self._arm_header_timer()
        elif self.conn.their_state is h11.SEND_BODY:
            self._body_bytes += len(data)
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE and self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        if self.conn.their_state is h11.SEND_BODY and self._body_timer is None:
            self._body_bytes = 0
            self._app_behind = self._app_has_unread_body()
            self._body_timer = self.loop.call_later(self.limits.body_idle_timeout_s, self._check_body_progress)

    def _header_too_long(self, data: bytes) -> bool:
        """Whether the header being received cannot end within ``max_header_bytes`` (checked before parsing)."""
        limit = self.limits.max_header_bytes
        pending = self.conn.trailing_data[0] + data
        return len(pending) > limit and pending.find(b"\r\n\r\n", 0, limit + 4) < 0

    def _arm_header_timer(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.limits.header_timeout_s, self._header_timed_out)

    def _header_timed_out(self) -> None:
        self._header_timer = None
        if self.conn.their_state is not h11.IDLE or self.transport.is_closing():
            return
        if not self.conn.trailing_data[0]:  # opened and never sent a byte: nobody to answer
            self.transport.close()
            return
        log.info("closed %s: its request header was not complete after serve.header_timeout_s = %g s",
                 _peer(self.client), self.limits.header_timeout_s)
        self.transport.write(_raw_answer(408, f"the request header took longer than serve.header_timeout_s = "
                                              f"{self.limits.header_timeout_s:g} s"))
        assert self._edge is not None
        self._edge.close(linger=False)

    def _check_body_progress(self) -> None:
        self._body_timer = None
        if self.conn.their_state is not h11.SEND_BODY or self.transport.is_closing():
            return
        # the app has not yet taken what came (still authenticating, say), or took it only during this window,
        # or waits to send 100 Continue: not the client's stall
        waiting_for_us = self._app_has_unread_body() or self._app_behind or self.flow.read_paused or (
            self.cycle is not None and self.cycle.waiting_for_100_continue
        )
        self._app_behind = self._app_has_unread_body()
        stalled = self._body_bytes < MIN_BODY_BYTES and not waiting_for_us
        if stalled:
            log.info("closed %s: its request body brought %d bytes in serve.body_idle_timeout_s = %g s",
                     _peer(self.client), self._body_bytes, self.limits.body_idle_timeout_s)
            if self.cycle is not None:
                self.cycle.scope[CLOSED_BY_EDGE] = True  # type: ignore[literal-required]
            assert self._edge is not None
            self._edge.close(linger=False)
            return
        self._body_bytes = 0
        self._body_timer = self.loop.call_later(self.limits.body_idle_timeout_s, self._check_body_progress)

    def _app_has_unread_body(self) -> bool:
        return self.cycle is not None and bool(self.cycle.body)

    def _refuse(self, status: int, detail: str) -> None:
        log.info("refused %s with %d: %s", _peer(self.client), status, detail)
        self._cancel_timers()
        self.transport.write(_raw_answer(status, detail))
        assert self._edge is not None
        self._edge.close(linger=True)

    def _cancel_timers(self) -> None:
        for timer in (self._header_timer, self._body_timer):
            if timer is not None:
                timer.cancel()
        self._header_timer = self._body_timer = None


def _peer(client: Optional[tuple[str, int]]) -> str:
    return f"{client[0]}:{client[1]}" if client else "a client"


class EdgeMiddleware:
    """``Connection: close`` on an answer given before its request body was read, and a client gone
    mid-request as one log line (its partial upload is removed by the upload reader)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        has_body = headers.get(b"content-length", b"0") not in (b"0", b"") or b"transfer-encoding" in headers
        body_read = not has_body

        async def receive_tracked() -> Message:
            nonlocal body_read
            message = await receive()
            if message["type"] == "http.request" and not message.get("more_body", False):
                body_read = True
            return message

        async def send_closing(message: Message) -> None:
            if message["type"] == "http.response.start" and not body_read:
                message = {**message, "headers": [*message.get("headers", []), (b"connection", b"close")]}
            await send(message)

        await self.app(scope, receive_tracked, send_closing)


async def client_gone(request: Request, _: ClientDisconnect) -> Response:
    """The exception handler for a client that disconnected mid-request: one line, no traceback (none when
    the protocol closed it as stalled: it said so)."""
    if not request.scope.get(CLOSED_BY_EDGE):
        client = (request.client.host, request.client.port) if request.client else None
        log.info("%s went away during %s %s; its partial upload was removed", _peer(client), request.method,
                 request.url.path)
    return Response(status_code=499)


def bound_requests(app: Any) -> None:
    """Install :class:`EdgeMiddleware` and :func:`client_gone` on a Starlette/FastAPI app."""
    app.add_middleware(EdgeMiddleware)
    app.add_exception_handler(ClientDisconnect, client_gone)
