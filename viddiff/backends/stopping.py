"""Stopping work that runs in a worker thread when the task waiting for it is cancelled (Ctrl-C, a timeout).

A cancelled ``await asyncio.to_thread(...)`` leaves its thread running to the end: minutes of CLIP forward
passes for a long video on a CPU, and the process cannot exit before its worker threads do. Work started
with :func:`run_stoppable` gets a stop flag of its own (through a context variable, which the worker thread
inherits), set the moment the waiting task is cancelled; long loops call :func:`raise_if_stopped` between
steps (CLIP batches), so the thread ends after the step in progress.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from typing import Callable, Optional, TypeVar

T = TypeVar("T")

_STOP_FLAG: contextvars.ContextVar[Optional[threading.Event]] = contextvars.ContextVar("viddiff_stop_flag", default=None)


class StopRequested(Exception):
    """Raised in a worker thread whose waiting task was cancelled; nobody waits for its result any more."""


async def run_stoppable(work: Callable[[], T]) -> T:
    """``await asyncio.to_thread(work)``, except that cancelling the wait also asks ``work`` to stop."""
    flag = threading.Event()
    context = contextvars.copy_context()
    context.run(_STOP_FLAG.set, flag)
    try:
        return await asyncio.to_thread(context.run, work)
    except asyncio.CancelledError:
        flag.set()
        raise


def current_stop_flag() -> Optional[threading.Event]:
    """The stop flag of the work running in this thread (``None`` outside :func:`run_stoppable`), for work
    handed on to another thread that should notice the cancellation too."""
    return _STOP_FLAG.get()


def raise_if_stopped() -> None:
    """Between the steps of long work: raise :class:`StopRequested` if whoever waits for it has gone."""
    flag = _STOP_FLAG.get()
    if flag is not None and flag.is_set():
        raise StopRequested("stopped: the task waiting for this work was cancelled")
