"""The threaded HTTP server the fake OpenAI and fake Hub servers run on."""

from __future__ import annotations

import sys
import threading
import time
from http.server import ThreadingHTTPServer
from typing import Any


class LocalHTTPServer(ThreadingHTTPServer):
    """Threaded HTTP server with a listen backlog large enough for bursts of parallel connects
    (the stdlib default of 5 stalls clients for a SYN retry, about 1 s)."""

    daemon_threads = True
    request_queue_size = 512

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._connections_lock = threading.Lock()
        self._open_connections = 0

    @property
    def open_connections(self) -> int:
        """Client connections not yet closed by the client (keep-alive ones included)."""
        with self._connections_lock:
            return self._open_connections

    def wait_until_closed(self, timeout_s: float = 5.0) -> int:
        """The open connections left once every client has hung up, or ``timeout_s`` has passed."""
        deadline = time.monotonic() + timeout_s
        while self.open_connections and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.open_connections

    def finish_request(self, request: Any, client_address: Any) -> None:
        """Count the connection while its handler serves it (until the client closes it)."""
        with self._connections_lock:
            self._open_connections += 1
        try:
            super().finish_request(request, client_address)
        finally:
            with self._connections_lock:
                self._open_connections -= 1

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gives up resets its keep-alive connections; that is normal, not a server error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)
