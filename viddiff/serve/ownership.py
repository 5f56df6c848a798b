"""One live server per ``--data-dir``: the lock ``viddiff run`` holds on its ``--output``, held by the server.

Two servers on one data dir would both take every queued job and run it twice. The lock is the kernel's
(``flock`` on ``DATA_DIR/.viddiff.lock``): it goes with its process, however that process ends, so a killed
server's data dir is free at once, and the next server says whose it was. ``viddiff serve keys`` commands
take no lock: SQLite lets them write beside a running server.
"""

from __future__ import annotations

import logging
import socket
from pathlib import Path
from types import TracebackType

from viddiff.errors import ViddiffError
from viddiff.runs.output_lock import DirectoryInUse, OutputDirLock

log = logging.getLogger(__name__)


class DataDirOwner:
    """``with DataDirOwner(data_dir, host, port):`` — refuses (one line naming the holder) while another
    server holds ``data_dir``; takes over, and says so, from one whose process is gone."""

    def __init__(self, data_dir: Path, host: str, port: int):
        self.data_dir = Path(data_dir)
        self._lock = OutputDirLock(
            self.data_dir, note=f"viddiff serve on {socket.gethostname()}, listening on {host}:{port}"
        )

    def acquire(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire()
        except DirectoryInUse as exc:
            raise ViddiffError(
                f"--data-dir {self.data_dir} is held by a running server ({exc.holder}); stop it first, or give "
                "this server another --data-dir (two servers on one data dir would run every job twice)"
            ) from None
        if self._lock.previous_holder:
            # the note of a holder that did not release the lock: killed, or stopped by a signal after its
            # graceful shutdown (uvicorn re-raises SIGTERM); either way the kernel let go with its process
            log.warning("--data-dir %s was last held by %s, whose process is gone; taking it over",
                        self.data_dir, self._lock.previous_holder)

    def release(self) -> None:
        self._lock.release()

    def __enter__(self) -> DataDirOwner:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()

