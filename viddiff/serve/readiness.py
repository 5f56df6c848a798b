"""Ready means ready: the models load after the port is open, and the start line waits for the port.

Loading the models (CLIP, the pose estimator, Ray actors) takes 40-60 s. Done inside the app's lifespan, it
kept the port closed all that time, after the start line had been printed: a script that waited for the line
got "connection refused". Here the lifespan only starts the loading (:class:`Readiness`), the port opens at
once, ``/healthz`` answers ``"starting"`` and ``/readyz`` 503 until the executor can take a job, and
:class:`ReadyServer` prints the start line once uvicorn accepts connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from typing import Awaitable, Callable, Literal, Optional

import uvicorn

from viddiff.errors import ViddiffError

log = logging.getLogger(__name__)
State = Literal["starting", "ok", "failed"]


class Readiness:
    """Whether the service can take a job: ``starting`` while its executor loads, then ``ok`` (or ``failed``)."""

    def __init__(self) -> None:
        self.state: State = "starting"
        self.error: Optional[str] = None
        self.on_failure: Callable[[str], None] = lambda error: None
        """Called with the error when loading fails (:class:`ReadyServer` stops the server)."""
        self._task: Optional[asyncio.Task] = None

    @property
    def ready(self) -> bool:
        return self.state == "ok"

    def load(self, loading: Awaitable[None]) -> None:
        """Run ``loading`` (the executor's start) in the background; the state follows it."""
        self._task = asyncio.ensure_future(self._follow(loading))

    async def _follow(self, loading: Awaitable[None]) -> None:
        try:
            await loading
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if isinstance(exc, ViddiffError):
                self.error = str(exc)
            else:
                log.exception("loading the models failed")
                self.error = f"loading the models failed ({type(exc).__name__}); the log above has the details"
            self.state = "failed"
            self.on_failure(self.error)
            return
        self.state = "ok"
        log.info("viddiff serve: ready for comparisons")

    async def cancel(self) -> None:
        """Stop a load still running (the server stops before it was ready)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


class ReadyServer(uvicorn.Server):
    """uvicorn's server that calls ``announce(port)`` once its port accepts connections, and stops when the
    models fail to load (``failure`` then holds why)."""

    def __init__(self, config: uvicorn.Config, readiness: Readiness, announce: Callable[[int], None] = lambda port: None):
        super().__init__(config)
        self.failure: Optional[str] = None
        self._announce = announce
        readiness.on_failure = self._stop_on_failure

    async def startup(self, sockets: Optional[list[socket.socket]] = None) -> None:
        await super().startup(sockets)
        if self.started:
            self._announce(self.servers[0].sockets[0].getsockname()[1] if self.servers else self.config.port)

    def _stop_on_failure(self, error: str) -> None:
        self.failure = error
        self.should_exit = True
