"""Why a connection failed, read from an exception's chain (the SDKs wrap the socket error two or three times).

Two failures are not worth retrying before the host has ever answered, so callers stop at once and say so
plainly: a host name that resolves nowhere (offline, or a typo in a URL: the lookup fails the same way each
time), and a connection refused by this machine (no server started on that port).
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Iterator, Optional
from urllib.parse import urlsplit

import httpx  # imported here, on the main thread at start-up: a first import of httpx on two threads at once
# (the CLIP weights' hub check beside huggingface_hub's own) handed one of them the half-made module


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, its causes and contexts, and the members of any exception group among them (anyio reports a
    host with several addresses, e.g. ``localhost``, as one group of per-address failures)."""
    seen: set[int] = set()
    pending: list[BaseException] = [exc]
    while pending:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        following = current.__cause__ or current.__context__
        if following is not None:
            pending.append(following)


def name_not_resolved(exc: BaseException) -> Optional[str]:
    """The resolver's words (``[Errno -2] Name or service not known``) if ``exc`` comes from a failed host name
    lookup, else ``None``."""
    for link in _chain(exc):
        if isinstance(link, socket.gaierror):
            return str(link)
    return None


def refused_by_this_machine(exc: BaseException, url: str) -> Optional[str]:
    """The socket's words (``[Errno 111] Connection refused``) if ``exc`` is a refused connection to a loopback
    host: nothing listens on that port of this machine, which waiting does not change. Else ``None``."""
    host = urlsplit(url).hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return None
    if not loopback:
        return None
    for link in _chain(exc):
        if isinstance(link, ConnectionRefusedError):
            return str(link)
    return None


def unreachable_reason(exc: BaseException) -> Optional[str]:
    """A plain reason when ``exc`` comes from not reaching a host at all (name lookup, refused, unreachable
    network, timeout), else ``None``."""
    lookup = name_not_resolved(exc)
    if lookup is not None:
        return f"its host name could not be resolved ({lookup})"
    for link in _chain(exc):
        if isinstance(link, ConnectionRefusedError):
            return f"the connection was refused ({link})"
        if isinstance(link, (TimeoutError, socket.timeout)):
            return "the connection timed out"
        if isinstance(link, OSError) and link.errno is not None and link.strerror:
            return f"the connection failed ({link})"
    return None


def probe_unreachable(url: str, timeout_s: float = 5.0) -> Optional[str]:
    """:func:`unreachable_reason` of one request to ``url``, with no retries; ``None`` once any HTTP answer came
    back (whatever its status: the host is there) or when the failure is of another kind."""
    try:
        httpx.head(url, timeout=timeout_s)
    except httpx.HTTPError as exc:
        return unreachable_reason(exc)
    return None
