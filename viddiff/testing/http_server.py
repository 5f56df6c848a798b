"""The threaded HTTP server the fake OpenAI and fake Hub servers run on."""

from __future__ import annotations

import sys
from http.server import ThreadingHTTPServer
from typing import Any


class LocalHTTPServer(ThreadingHTTPServer):
    """Threaded HTTP server with a listen backlog large enough for bursts of parallel connects
    (the stdlib default of 5 stalls clients for a SYN retry, about 1 s)."""

    daemon_threads = True
    request_queue_size = 512

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gives up resets its keep-alive connections; that is normal, not a server error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)
