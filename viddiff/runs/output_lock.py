"""One writer per output directory: an OS file lock (``flock``) held for the whole run.

Two runs appending to one ``samples.jsonl`` would each write every sample,
and the directory could no longer be resumed. The lock lives in
``DIR/.viddiff.lock``; the kernel releases it when the holder exits or
crashes, so a stale lock cannot exist. While held, the file names the
holder (pid and command, or the holder's own note) so a second run can say
who is using the directory; a note still there when the lock is taken names
a holder that ended without releasing it (killed), which
:attr:`OutputDirLock.previous_holder` reports. The file itself is never deleted: unlinking a lock file lets two
processes lock two different files of the same name.

``flock`` is advisory and local: it does not protect a directory shared
between machines over NFS.
"""

from __future__ import annotations

import fcntl
import os
import shlex
import sys
from pathlib import Path
from types import TracebackType
from typing import Optional

from viddiff.errors import OutputError
from viddiff.store import open_no_link, output_error

LOCK_FILE = ".viddiff.lock"


class DirectoryInUse(OutputError):
    """Another live process holds the lock; ``holder`` is its note."""

    def __init__(self, message: str, holder: str):
        super().__init__(message)
        self.holder = holder


class OutputDirLock:
    """``with OutputDirLock(out_dir):`` — raises :class:`DirectoryInUse` at once if another process holds it.

    ``note``: what the lock file says of this holder after its pid (default: the command line)."""

    def __init__(self, out_dir: Path, note: Optional[str] = None):
        self.out_dir = Path(out_dir)
        self.path = self.out_dir / LOCK_FILE
        self.note = note
        self.previous_holder: Optional[str] = None
        """After :meth:`acquire`: the note of a holder that ended without releasing the lock, if one did."""
        self._fd: Optional[int] = None

    def acquire(self) -> None:
        fd = open_no_link(self.path, os.O_RDWR | os.O_CREAT, 0o666)  # a link: refused, never truncated through
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd) or "pid unknown: it has just started"
            os.close(fd)
            raise DirectoryInUse(
                f"output directory {self.out_dir} is in use by another viddiff process ({holder}); "
                "wait for it to finish, or choose another --output", holder,
            ) from None
        except OSError as exc:
            os.close(fd)
            raise output_error(self.path, exc) from None
        self._fd = fd
        self.previous_holder = _read_holder(fd) or None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()}: {self.note or _command()}\n".encode(), 0)
        except OSError:
            pass  # the lock holds without the note; a second run then says "pid unknown"

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, 0)  # the holder note is only true while the lock is held
        except OSError:
            pass
        os.close(self._fd)  # closing the descriptor releases the flock
        self._fd = None

    def __enter__(self) -> "OutputDirLock":
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


def _read_holder(fd: int) -> str:
    try:
        return os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
    except OSError:
        return ""


def _command() -> str:
    argv = list(sys.argv)
    if argv and argv[0].endswith(("cli.py", "__main__.py")):
        argv[0] = "viddiff"  # `python -m viddiff.cli ...` reads better as the command the user knows
    elif argv:
        argv[0] = Path(argv[0]).name
    return shlex.join(argv)[:300]
