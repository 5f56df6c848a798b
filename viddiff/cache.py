"""Content-addressed cache of model calls and embeddings in one SQLite file.

One embedded file (no server) so a run, its resume and several parallel
processes share results. WAL mode lets readers proceed while a writer
commits; ``busy_timeout`` makes concurrent writers wait instead of failing.
Values are opaque bytes; callers choose the encoding per namespace
("chat": UTF-8 JSON, "clip_image"/"clip_text": array bytes).
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
from pathlib import Path
from types import TracebackType
from typing import Any, Iterator, Optional

from viddiff.config import CacheConfig, config_from_args
from viddiff.errors import ViddiffError

logger = logging.getLogger(__name__)

CACHE_SCHEMA_VERSION = 1
"""Bump when the meaning of cached values changes; old keys then simply miss."""

_BUSY_TIMEOUT_MS = 30_000
_SQL_CHUNK = 500
"""Keys per ``IN (...)`` query, below SQLite's bound-variable limit."""


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


class Cache:
    """A namespaced key → bytes store, safe across asyncio tasks, threads and processes.

    One connection is shared by all threads of a process and serialised with
    a lock (calls are short); other processes coordinate through SQLite's
    file locks.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path).expanduser()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn: Optional[sqlite3.Connection] = sqlite3.connect(
                str(self.path), timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
            )
            self._conn.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS entries ("
                " namespace TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL,"
                " PRIMARY KEY (namespace, key)) WITHOUT ROWID"
            )
        except (OSError, sqlite3.Error) as exc:
            raise CacheError(
                f"cannot open cache {self.path}: {exc}; set cache.path to a writable file or cache.enabled=false"
            ) from None
        self._lock = threading.Lock()

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise CacheError(f"cache {self.path} is closed")
        return self._conn

    def get(self, namespace: str, key: str) -> bytes | None:
        with self._lock:
            row = self._connection().execute(
                "SELECT value FROM entries WHERE namespace=? AND key=?", (namespace, key)
            ).fetchone()
        return None if row is None else bytes(row[0])

    def put(self, namespace: str, key: str, value: bytes) -> None:
        self.put_many(namespace, {key: value})

    def get_many(self, namespace: str, keys: list[str]) -> dict[str, bytes]:
        """Values of the keys present; missing keys are absent from the result."""
        found: dict[str, bytes] = {}
        unique = list(dict.fromkeys(keys))
        with self._lock:
            conn = self._connection()
            for chunk in _chunks(unique):
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(
                    f"SELECT key, value FROM entries WHERE namespace=? AND key IN ({marks})", (namespace, *chunk)
                ).fetchall()
                found.update((k, bytes(v)) for k, v in rows)
        return found

    def put_many(self, namespace: str, items: dict[str, bytes]) -> None:
        """Insert or replace all items in one transaction, committed before returning."""
        if not items:
            return
        rows = [(namespace, k, sqlite3.Binary(bytes(v))) for k, v in items.items()]
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany("INSERT OR REPLACE INTO entries (namespace, key, value) VALUES (?, ?, ?)", rows)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def stats(self) -> dict[str, dict[str, int]]:
        """Per namespace: number of entries and total value bytes."""
        with self._lock:
            rows = self._connection().execute(
                "SELECT namespace, COUNT(*), COALESCE(SUM(LENGTH(value)), 0) FROM entries GROUP BY namespace ORDER BY namespace"
            ).fetchall()
        return {ns: {"entries": int(n), "bytes": int(size)} for ns, n, size in rows}

    def clear(self, namespace: str | None = None) -> int:
        """Delete one namespace (or everything); returns the number of rows deleted."""
        with self._lock:
            conn = self._connection()
            if namespace is None:
                cur = conn.execute("DELETE FROM entries")
            else:
                cur = conn.execute("DELETE FROM entries WHERE namespace=?", (namespace,))
            return int(cur.rowcount)

    def vacuum(self) -> None:
        """Give the space of deleted rows back to the filesystem (slow on big files)."""
        with self._lock:
            conn = self._connection()
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        with self._lock:
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
    width = max(len(ns) for ns in stats)
    print(f"{'namespace':<{width}}  {'entries':>9}  {'data':>10}")
    for ns, s in stats.items():
        print(f"{ns:<{width}}  {s['entries']:>9}  {_human(s['bytes']):>10}")
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
