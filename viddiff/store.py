"""Results directory I/O: append-only JSONL logs that survive a kill, atomic files, clean OS errors.

A run can be SIGKILLed, or the disk can fill up, at any moment. Each record
is one complete line written on an ``O_APPEND`` descriptor and fsynced; a
write that fails part-way is rolled back. So the only damage a crash can
leave is a torn *last* line (no newline), which loading cuts off. Any other
unreadable line was not made by a crash: loading refuses it, naming the
line, rather than guess and drop finished work.

Every file is created with mode ``0o666`` minus the process umask (the
``open(2)`` default), so outputs are as readable as the user's other files.
An ``OSError`` while writing becomes one :class:`OutputError` line naming
the file. Files are never written through a symbolic link: a link where a
results file belongs is refused by name (:func:`refuse_links`, and
``O_NOFOLLOW`` on every append), so a run never writes outside its
directory.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import secrets
from pathlib import Path
from typing import Any, Generic, Iterable, TypeVar

from pydantic import BaseModel, ValidationError

from viddiff.errors import OutputError, ViddiffError
from viddiff.schema import SampleResult

log = logging.getLogger(__name__)
SAMPLES_FILE = "samples.jsonl"
M = TypeVar("M", bound=BaseModel)
_FILE_MODE = 0o666
"""Created files get this minus the umask (0644 under the usual umask 022)."""


class DamagedLogError(ViddiffError):
    """A line in the middle of a results log is unreadable; nothing is changed until the user decides."""


def output_error(path: Path, exc: OSError) -> OutputError:
    """One line naming the file and the OS's reason (``No space left on device (ENOSPC)``)."""
    reason = exc.strerror or str(exc)
    code = errno.errorcode.get(exc.errno or 0)
    return OutputError(f"cannot write {path}: {reason}{f' ({code})' if code else ''}")


def link_error(path: Path) -> OutputError:
    """Why viddiff will not use ``path``: it is a symbolic link (possibly dangling)."""
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    return OutputError(
        f"{path} is a symbolic link (to {target}); viddiff never writes through a link in its output directory: "
        "remove the link, or choose another --output"
    )


def refuse_links(out_dir: Path, names: Iterable[str]) -> None:
    """Refuse the run before it writes anything if one of the ``names`` it writes in ``out_dir`` is a link."""
    for name in names:
        path = Path(out_dir) / name
        if path.is_symlink():
            raise link_error(path)


def open_no_link(path: Path, flags: int, mode: int = _FILE_MODE) -> int:
    """``os.open`` that refuses a symbolic link as the last component (ELOOP) with :func:`link_error`."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise link_error(path) from None
        raise output_error(path, exc) from None


class JsonlLog(Generic[M]):
    """An append-only file of one pydantic record per line."""

    def __init__(self, path: Path, model: type[M]):
        self.path = Path(path)
        self.model = model

    def has_records(self) -> bool:
        return self.path.exists() and self.path.stat().st_size > 0

    def load(self) -> list[M]:
        """Every record in file order; cuts off a torn last line, refuses any other damage."""
        if not self.path.exists() and not self.path.is_symlink():
            return []
        fd = open_no_link(self.path, os.O_RDONLY)
        with os.fdopen(fd, "rb") as f:
            data = f.read()
        *lines, tail = data.split(b"\n")
        records: list[M] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                records.append(self.model.model_validate_json(line))
            except ValidationError as exc:
                raise DamagedLogError(
                    f"{self.path}: line {number} of {len(lines)} is damaged ({_first_problem(exc)}); "
                    "finished work is never dropped automatically: repair or delete that line, then --resume"
                ) from None
        if tail:
            self._repair_tail(tail, len(data), records)
        return records

    def _repair_tail(self, tail: bytes, size: int, records: list[M]) -> None:
        """A last line without its newline: complete if it is a whole record, else the torn write of a kill."""
        try:
            records.append(self.model.model_validate_json(tail))
        except ValidationError:
            log.warning("%s: dropping a torn last line (%d bytes) left by an interrupted run", self.path, len(tail))
            self._rewrite_end(lambda fd: os.ftruncate(fd, size - len(tail)))
        else:
            self._rewrite_end(lambda fd: os.write(fd, b"\n"))

    def _rewrite_end(self, change) -> None:
        fd = open_no_link(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            change(fd)
            os.fsync(fd)
        except OSError as exc:
            raise output_error(self.path, exc) from None
        finally:
            os.close(fd)

    def append(self, record: M) -> None:
        """Write one record as one line; on failure nothing of it stays in the file."""
        line = (record.model_dump_json() + "\n").encode()
        fd = open_no_link(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            start = os.fstat(fd).st_size
            try:
                _write_all(fd, line)
                os.fsync(fd)
            except OSError as exc:
                _truncate_quietly(fd, start)
                raise output_error(self.path, exc) from None
        finally:
            os.close(fd)


class ResultsStore:
    """The finished-sample log (``samples.jsonl``) of one run directory."""

    def __init__(self, out_dir: Path):
        self.out_dir = Path(out_dir)
        self.path = self.out_dir / SAMPLES_FILE
        self._log = JsonlLog(self.path, SampleResult)

    def has_records(self) -> bool:
        return self._log.has_records()

    def load(self) -> dict[str, SampleResult]:
        """Finished samples by key."""
        results: dict[str, SampleResult] = {}
        for result in self._log.load():
            if result.sample_key in results:
                raise DamagedLogError(
                    f"{self.path}: sample {result.sample_key} appears twice (was the file edited, or written by two "
                    "runs at once?); delete one of its lines, then --resume"
                )
            results[result.sample_key] = result
        return results

    def append(self, result: SampleResult) -> None:
        self._log.append(result)


def write_json_atomic(path: Path, obj: Any) -> None:
    write_text_atomic(path, json.dumps(obj, indent=2) + "\n")


def write_text_atomic(path: Path, text: str) -> None:
    """Write via a temp file + rename so readers never see a half-written file."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _FILE_MODE)
        try:
            _write_all(fd, text.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise output_error(path, exc) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _write_all(fd: int, data: bytes) -> None:
    """``write`` until done: a short write is retried once more, which then reports the OS's reason."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.EIO, "write returned no progress")
        view = view[written:]


def _truncate_quietly(fd: int, size: int) -> None:
    """Roll a failed append back; if even that fails, resume will cut the torn line."""
    try:
        os.ftruncate(fd, size)
    except OSError:
        log.warning("could not roll back a failed write; the torn line is cut when the run resumes")


def _first_problem(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    return f"{where}: {err['msg']}" if where else err["msg"]


def prepare_output_dir(out_dir: Path) -> Path:
    """Create the output directory or say clearly why it cannot be used."""
    out_dir = Path(out_dir).expanduser()
    if out_dir.exists() and not out_dir.is_dir():
        raise ViddiffError(f"output path {out_dir} is an existing file, not a directory; choose another --output")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ViddiffError(f"cannot create output directory {out_dir}: {exc.strerror}; choose another --output") from None
    if not os.access(out_dir, os.W_OK | os.X_OK):
        raise ViddiffError(f"output directory {out_dir} is not writable; choose another --output")
    return out_dir
