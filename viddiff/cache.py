"""Content-addressed cache of model calls and embeddings in one SQLite file.

One embedded file (no server) so a run, its resume and several parallel
processes share results. WAL mode lets readers proceed while a writer
commits; ``busy_timeout`` plus a bounded retry makes concurrent writers wait
instead of failing. Values are opaque bytes; callers choose the encoding per
namespace ("chat": UTF-8 JSON, "clip_image"/"clip_text": array bytes).

A cache only saves work, so once open it never kills a run: a read that fails
is a miss, a write that fails is logged and skipped, and a corrupted file is
renamed to ``<name>.corrupt-<timestamp>`` (kept for inspection, never
deleted) and replaced by a fresh one. An empty ``<name>.lock`` file next to
the cache keeps processes from opening it while another one moves it aside.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Callable, Iterator, Optional, TypeVar

from viddiff.config import CacheConfig, config_from_args
from viddiff.errors import ViddiffError

try:
    import fcntl
except ImportError:  # Windows, where a file in use cannot be renamed anyway
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)

_R = TypeVar("_R")

CACHE_SCHEMA_VERSION = 1
"""Bump when the meaning of cached values changes; old keys then simply miss."""

_BUSY_TIMEOUT_MS = 10_000
"""How long SQLite itself waits for another process's lock, per statement."""
_LOCK_WAIT_S = 30.0
"""Total time an operation keeps retrying ``database is locked`` (or waits for the ``.lock`` file) before
giving up: a miss or a skipped write during use, :class:`CacheError` on open."""
_OPEN_CHECK_MAX_BYTES = 64 * 1024 * 1024
"""Files up to this size get ``PRAGMA quick_check`` on open (tens of ms); bigger ones are checked lazily,
by treating a corruption error during use as the signal, so opening a multi-GB cache stays instant."""
_OPEN_ATTEMPTS = 3
"""Connection attempts on open: a corrupted file, then a file another process was replacing meanwhile."""
_SQL_CHUNK = 500
"""Keys per ``IN (...)`` query, below SQLite's bound-variable limit."""
_SIDECARS = ("-wal", "-shm")
_CONSEQUENCE = {"read": "treated as a miss", "write": "the result is not cached and will be recomputed next time"}
_COLUMNS = ["namespace", "key", "value"]
_CREATE_TABLE = (
    "CREATE TABLE IF NOT EXISTS entries ("
    " namespace TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL,"
    " PRIMARY KEY (namespace, key)) WITHOUT ROWID"
)
_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_CORRUPT, _SQLITE_NOTADB = 5, 6, 11, 26


class CacheError(ViddiffError):
    """The cache file cannot be opened or is not a viddiff cache."""


def hash_key(payload: Any) -> str:
    """SHA-256 hex of canonical JSON of ``payload`` plus the cache schema version.

    Canonical = sorted keys, no whitespace, so equal requests hash equally
    regardless of dict insertion order.
    """
    canonical = json.dumps(
        {"v": CACHE_SCHEMA_VERSION, "payload": payload},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _chunks(items: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(items), _SQL_CHUNK):
        yield items[start : start + _SQL_CHUNK]


def _primary_code(exc: sqlite3.Error) -> Optional[int]:
    code = getattr(exc, "sqlite_errorcode", None)  # Python >= 3.11
    return None if code is None else int(code) & 0xFF


def _is_corruption(exc: sqlite3.Error) -> bool:
    """True for SQLite's "database disk image is malformed" and "file is not a database".

    Without an error code (Python < 3.11, or raised by :func:`_quick_check`)
    the bare ``DatabaseError`` type is the signal: the sqlite3 module maps
    exactly these codes to it, and busy/full/read-only errors to subclasses.
    """
    code = _primary_code(exc)
    if code is None:
        return type(exc) is sqlite3.DatabaseError
    return code in (_SQLITE_CORRUPT, _SQLITE_NOTADB)


def _is_busy(exc: sqlite3.Error) -> bool:
    """Another connection holds a lock that outlasted ``busy_timeout``."""
    code = _primary_code(exc)
    if code is None:
        return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)
    return code in (_SQLITE_BUSY, _SQLITE_LOCKED)


def _retry_busy(op: Callable[[], _R]) -> _R:
    """Run ``op``, retrying lock conflicts with backoff for at most ``_LOCK_WAIT_S``."""
    deadline = time.monotonic() + _LOCK_WAIT_S
    delay = 0.01
    while True:
        try:
            return op()
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc) or time.monotonic() + delay > deadline:
                raise
        time.sleep(delay)
        delay = min(2 * delay, 0.5)


def _file_id(path: Path) -> Optional[tuple[int, int]]:
    """Identity of the file now at ``path``: tells whether another process already replaced it."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


def _check_schema(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a foreign database rather than touch someone else's data (read-only, before any write)."""
    tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
    if "entries" not in tables:
        if tables:
            raise CacheError(
                f"{path} is an SQLite database but not a viddiff cache (tables: {', '.join(tables)}); "
                "set cache.path to another file"
            )
        return
    columns = [row[1] for row in conn.execute("PRAGMA table_info(entries)")]
    if columns != _COLUMNS:
        raise CacheError(
            f"{path} has an 'entries' table with columns {columns}, not a viddiff cache's {_COLUMNS}; "
            "set cache.path to another file"
        )


@contextlib.contextmanager
def _file_lock(path: Path, exclusive: bool) -> Iterator[None]:
    """Advisory lock on ``<path>.lock``, held for at most ``_LOCK_WAIT_S`` of waiting.

    Opening takes it shared and moving a corrupted file aside takes it alone,
    so no process connects to a half-renamed cache (an old WAL or shared-memory
    file next to a new database mixes two databases into one).
    """
    if fcntl is None:
        yield
        return
    lock_path = f"{path}.lock"
    fd = os.open(lock_path, os.O_RDONLY | os.O_CREAT, 0o666)  # flock needs no write access
    try:
        mode = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
        deadline = time.monotonic() + _LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(fd, mode)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"timed out waiting for the lock on {lock_path}") from None
                time.sleep(0.01)
        yield
    finally:
        os.close(fd)  # releases the lock


def _aside_path(path: Path) -> Path:
    """``<name>.corrupt-<timestamp>[-n]``, a name not taken by a file or its sidecars."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    dest = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while any(Path(f"{dest}{suffix}").exists() for suffix in ("", *_SIDECARS)):
        dest = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
        n += 1
    return dest


def _database_bytes(conn: sqlite3.Connection) -> int:
    """Size as SQLite sees it (no ``stat``: another process may be renaming the file right now)."""
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    return int(pages) * int(conn.execute("PRAGMA page_size").fetchone()[0])


def _quick_check(conn: sqlite3.Connection) -> None:
    """Raise a corruption error unless SQLite's structural check of the whole file passes."""
    problems = [row[0] for row in conn.execute("PRAGMA quick_check(3)")]
    if problems != ["ok"]:
        raise sqlite3.DatabaseError("quick_check: " + "; ".join(problems).replace("\n", " "))


def _write(conn: sqlite3.Connection, rows: list[tuple[str, str, bytes]]) -> None:
    """Insert or replace ``rows`` in one short transaction; roll back on any failure."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany("INSERT OR REPLACE INTO entries (namespace, key, value) VALUES (?, ?, ?)", rows)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # SQLite may already have rolled back (disk full, I/O error)
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        raise


class Cache:
    """A namespaced key → bytes store, safe across asyncio tasks, threads and processes.

    One connection is shared by all threads of a process and serialised with
    a lock (calls are short); other processes coordinate through SQLite's
    file locks. Opening raises :class:`CacheError` only when no cache can be
    had at ``path`` at all; afterwards failures degrade to misses and skipped
    writes (each distinct problem logged once as a warning).
    """

    def __init__(self, path: str | Path):
        self.path = Path(path).expanduser()
        self._lock = threading.Lock()
        self._conn: Optional[sqlite3.Connection] = None
        self._file: Optional[tuple[int, int]] = None
        self._closed = False
        self._warned: set[str] = set()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._open()
        except (OSError, sqlite3.Error) as exc:
            raise CacheError(
                f"cannot open cache {self.path}: {exc}; set cache.path to a writable file or cache.enabled=false"
            ) from None

    # ------------------------------------------------------------------ opening and recovery

    def _open(self) -> None:
        """Connect; a corrupted file is moved aside and a fresh one created in its place."""
        for attempt in range(_OPEN_ATTEMPTS):
            try:
                self._connect()
                return
            except sqlite3.Error as exc:
                if attempt + 1 == _OPEN_ATTEMPTS or not (_is_corruption(exc) or self._replaced()):
                    raise
                self._move_aside(str(exc))

    def _replaced(self) -> bool:
        """Whether the file at ``path`` is no longer the one we opened (another process moved it aside)."""
        return self._file is not None and _file_id(self.path) != self._file

    def _connect(self) -> None:
        """Open and check the file; by the end SQLite holds the database, WAL and shared-memory files open."""
        with _file_lock(self.path, exclusive=False):
            conn = sqlite3.connect(
                str(self.path), timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
            )
            self._file = _file_id(self.path)
            try:
                conn.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
                _retry_busy(lambda: _check_schema(conn, self.path))
                _retry_busy(lambda: conn.execute("PRAGMA journal_mode=WAL"))
                conn.execute("PRAGMA synchronous=NORMAL")
                _retry_busy(lambda: conn.execute(_CREATE_TABLE))
                if _database_bytes(conn) <= _OPEN_CHECK_MAX_BYTES:
                    _quick_check(conn)
            except BaseException:
                conn.close()
                raise
        self._conn = conn

    def _move_aside(self, reason: str) -> None:
        """Rename the corrupted file and its sidecars to ``<name>.corrupt-<timestamp>``.

        Skipped when the file now at ``path`` is no longer the one we opened:
        another process sharing the cache has already replaced it.
        """
        with _file_lock(self.path, exclusive=True):
            if self._replaced():
                logger.warning(
                    "cache %s failed (%s) and another process has already replaced it; reopening", self.path, reason
                )
                return
            dest = _aside_path(self.path)
            for suffix in _SIDECARS:
                with contextlib.suppress(FileNotFoundError):
                    os.rename(f"{self.path}{suffix}", f"{dest}{suffix}")
            os.rename(self.path, dest)
        logger.warning(
            "cache %s is corrupted (%s); moved it to %s and started a fresh cache, "
            "so results cached there will be recomputed",
            self.path,
            reason,
            dest,
        )

    def _recover(self, exc: sqlite3.Error) -> None:
        """Swap a corrupted (or already replaced) file for a fresh one; if that fails, go on without a cache."""
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None
        try:
            self._move_aside(str(exc))
            self._open()
        except (OSError, sqlite3.Error, CacheError) as err:
            logger.warning(
                "cache %s failed (%s) and could not be reopened (%s); continuing without a cache",
                self.path,
                exc,
                err,
            )

    # ------------------------------------------------------------------ running statements

    def _connection(self) -> sqlite3.Connection:
        if self._closed:
            raise CacheError(f"cache {self.path} is closed")
        if self._conn is None:
            raise sqlite3.OperationalError("the cache is unavailable since its file could not be reopened")
        return self._conn

    def _run(self, op: Callable[[sqlite3.Connection], _R]) -> _R:
        """``op`` on the connection (lock held by the caller), retried once on a fresh file after corruption."""
        try:
            return _retry_busy(lambda: op(self._connection()))
        except sqlite3.Error as exc:
            if not (_is_corruption(exc) or (self._conn is not None and self._replaced())):
                raise
            self._recover(exc)
        return _retry_busy(lambda: op(self._connection()))

    def _tolerant(self, action: str, op: Callable[[sqlite3.Connection], _R], fallback: _R) -> _R:
        """``op``, or ``fallback`` with a warning (once per distinct problem) when SQLite fails."""
        with self._lock:
            try:
                return self._run(op)
            except sqlite3.Error as exc:
                problem = f"{action}: {exc}"
                level = logging.DEBUG if problem in self._warned else logging.WARNING
                self._warned.add(problem)
                logger.log(level, "cache %s: %s failed (%s); %s", self.path, action, exc, _CONSEQUENCE[action])
                return fallback

    def _strict(self, op: Callable[[sqlite3.Connection], _R]) -> _R:
        """``op`` for maintenance commands, where a failure should be reported, not hidden."""
        with self._lock:
            try:
                return self._run(op)
            except sqlite3.Error as exc:
                raise CacheError(f"cache {self.path}: {exc}") from None

    # ------------------------------------------------------------------ public API

    def get(self, namespace: str, key: str) -> bytes | None:
        """The value, or ``None`` when absent or unreadable."""
        row = self._tolerant(
            "read",
            lambda conn: conn.execute(
                "SELECT value FROM entries WHERE namespace=? AND key=?", (namespace, key)
            ).fetchone(),
            None,
        )
        return None if row is None else bytes(row[0])

    def put(self, namespace: str, key: str, value: bytes) -> None:
        self.put_many(namespace, {key: value})

    def get_many(self, namespace: str, keys: list[str]) -> dict[str, bytes]:
        """Values of the keys present; missing keys (or all, if the read fails) are absent from the result."""
        unique = list(dict.fromkeys(keys))

        def read(conn: sqlite3.Connection) -> dict[str, bytes]:
            found: dict[str, bytes] = {}
            for chunk in _chunks(unique):
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(
                    f"SELECT key, value FROM entries WHERE namespace=? AND key IN ({marks})", (namespace, *chunk)
                ).fetchall()
                found.update((k, bytes(v)) for k, v in rows)
            return found

        return self._tolerant("read", read, {})

    def put_many(self, namespace: str, items: dict[str, bytes]) -> None:
        """Insert or replace all items in one transaction, committed before returning (or skipped on failure)."""
        if not items:
            return
        rows = [(namespace, k, sqlite3.Binary(bytes(v))) for k, v in items.items()]
        self._tolerant("write", lambda conn: _write(conn, rows), None)

    def stats(self) -> dict[str, dict[str, int]]:
        """Per namespace: number of entries and total value bytes."""
        rows = self._strict(
            lambda conn: conn.execute(
                "SELECT namespace, COUNT(*), COALESCE(SUM(LENGTH(value)), 0) FROM entries GROUP BY namespace ORDER BY namespace"
            ).fetchall()
        )
        return {ns: {"entries": int(n), "bytes": int(size)} for ns, n, size in rows}

    def clear(self, namespace: str | None = None) -> int:
        """Delete one namespace (or everything); returns the number of rows deleted."""
        if namespace is None:
            return self._strict(lambda conn: int(conn.execute("DELETE FROM entries").rowcount))
        return self._strict(lambda conn: int(conn.execute("DELETE FROM entries WHERE namespace=?", (namespace,)).rowcount))

    def vacuum(self) -> None:
        """Give the space of deleted rows back to the filesystem (slow on big files)."""

        def compact(conn: sqlite3.Connection) -> None:
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

        self._strict(compact)

    def integrity_check(self) -> list[str]:
        """SQLite's full check of the file: ``["ok"]`` when healthy (reads every page; slow on big files)."""
        return self._strict(lambda conn: [row[0] for row in conn.execute("PRAGMA integrity_check")])

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> "Cache":
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Cache({str(self.path)!r})"


def open_cache(cfg: CacheConfig) -> Cache | None:
    """The configured cache, or ``None`` when caching is disabled."""
    if not cfg.enabled:
        return None
    return Cache(cfg.resolved_path())


def _file_size(path: Path) -> int:
    """Bytes on disk including the WAL and shared-memory side files."""
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists())


def _human(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    size = n / 1024
    for unit in ("KiB", "MiB"):
        if size < 1024:
            return f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


def cli_stats(args: Any) -> int:
    """``viddiff cache stats``: path, size on disk, entries per namespace."""
    cfg = config_from_args(args).cache
    path = cfg.resolved_path()
    state = "" if cfg.enabled else " (disabled in config: cache.enabled=false)"
    print(f"cache: {path}{state}")
    if not path.exists():
        print("no cache file yet")
        return 0
    with Cache(path) as cache:
        stats = cache.stats()
    print(f"size on disk: {_human(_file_size(path))}")
    if not stats:
        print("empty")
        return 0
    rows = [(ns, str(s["entries"]), _human(s["bytes"])) for ns, s in stats.items()]
    header = ("namespace", "entries", "data")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(3)]
    for ns, entries, data in [header, *rows]:
        print(f"{ns:<{widths[0]}}  {entries:>{widths[1]}}  {data:>{widths[2]}}")
    return 0


def cli_clear(args: Any) -> int:
    """``viddiff cache clear``: delete every entry and give the space back to the filesystem."""
    cfg = config_from_args(args).cache
    path = cfg.resolved_path()
    if not path.exists():
        print(f"cache: {path}: no cache file, nothing to clear")
        return 0
    with Cache(path) as cache:
        deleted = cache.clear()
        cache.vacuum()
    print(f"cache: {path}: deleted {deleted} entries")
    return 0
