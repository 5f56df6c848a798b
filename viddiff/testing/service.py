"""``viddiff serve`` on a free 127.0.0.1 port in a background thread, for tests and benches.

A real uvicorn server (real sockets, the app's own lifespan), so clients exercise the same HTTP path a
deployment does; stopping it runs the same shutdown as Ctrl-C.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Optional

from viddiff.config import Config
from viddiff.serve.command import GRACEFUL_SHUTDOWN_S, STORE_FILE, build_app, service_config
from viddiff.serve.jobs import JobStore
from viddiff.serve.keys import key_hash, new_key, new_webhook_secret
from viddiff.serve.ownership import DataDirOwner


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def create_key(data_dir: Path, name: str, scopes: tuple[str, ...] = ("app",)) -> str:
    """What ``viddiff serve keys create NAME [--scope ...]`` does: a new key, stored hashed in ``data_dir`` with a
    webhook secret; returns the key."""
    store = JobStore(Path(data_dir) / STORE_FILE)
    try:
        key = new_key()
        if not store.add_key(name, key_hash(key), scopes, new_webhook_secret()):
            raise ValueError(f"a key named {name!r} exists")
        return key
    finally:
        store.close()


class ServerThread:
    """``with ServerThread(data_dir, config) as server: httpx.get(server.url + "/healthz")``.

    ``start`` returns once the service is ready for jobs (its models loaded), or with ``wait_ready=False``
    once its port accepts connections."""

    def __init__(self, data_dir: Path, config: Config, *, dev: bool = False, startup_timeout_s: float = 120.0,
                 wait_ready: bool = True):
        import uvicorn

        from viddiff.serve.http_limits import uvicorn_options
        from viddiff.serve.readiness import ReadyServer
        from viddiff.serve.security import SERVER_HEADERS

        self.data_dir = Path(data_dir)
        self.config = service_config(config, self.data_dir, None)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._owner = DataDirOwner(self.data_dir, "127.0.0.1", self.port)
        self._owner.acquire()  # as `viddiff serve` does: one live server per data dir
        try:
            app = build_app(self.data_dir, self.config, dev=dev)
        except BaseException:
            self._owner.release()
            raise
        self.readiness = app.state.readiness
        self._server = ReadyServer(uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="warning", timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
            headers=SERVER_HEADERS, **uvicorn_options(self.config.serve),
        ), self.readiness)
        self._thread: Optional[threading.Thread] = None
        self._startup_timeout_s = startup_timeout_s
        self._wait_ready = wait_ready

    def start(self) -> "ServerThread":
        self._thread = threading.Thread(target=self._server.run, name=f"viddiff-serve-{self.port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + self._startup_timeout_s
        while not (self._server.started and (self.readiness.ready or not self._wait_ready)):
            if not self._thread.is_alive() or time.monotonic() > deadline:
                why = f": {self._server.failure}" if self._server.failure else ""
                self.stop()
                raise RuntimeError(f"viddiff serve did not start on port {self.port}{why}")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.should_exit = True
            self._thread.join(60)
            self._thread = None
        self._owner.release()

    def __enter__(self) -> "ServerThread":
        return self.start()

    def __exit__(
        self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        self.stop()
