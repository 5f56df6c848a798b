"""Why a connection failed, read from an exception's chain (the SDKs wrap the socket error two or three times).

A host name that resolves nowhere is not worth retrying before the host has ever answered: the lookup fails
the same way each time (offline, or a typo in a URL), so callers stop at once and say so plainly.
"""

from __future__ import annotations

import socket
from typing import Iterator, Optional


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: Optional[BaseException] = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def name_not_resolved(exc: BaseException) -> Optional[str]:
    """The resolver's words (``[Errno -2] Name or service not known``) if ``exc`` comes from a failed host name
    lookup, else ``None``."""
    for link in _chain(exc):
        if isinstance(link, socket.gaierror):
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
