"""The service's state in one SQLite file (WAL) under ``--data-dir``: keys, videos, jobs and their events.

Every job's events are kept in order with increasing ids (the SSE ``id``), so a client that reconnects with
``Last-Event-ID`` gets what it missed, and a restarted server knows which jobs were queued or running.
One connection, serialised by a lock: every statement is short.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

from viddiff.serve.models import FINISHED, JobStatus, Progress

_SCHEMA = """
CREATE TABLE IF NOT EXISTS keys (
    name TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, created_at REAL NOT NULL, revoked_at REAL
);
CREATE TABLE IF NOT EXISTS videos (
    id TEXT PRIMARY KEY, owner TEXT NOT NULL, job_id TEXT, path TEXT NOT NULL, filename TEXT NOT NULL,
    bytes INTEGER NOT NULL, kind TEXT NOT NULL, duration_s REAL, width INTEGER, height INTEGER, n_frames INTEGER,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY, owner TEXT NOT NULL, status TEXT NOT NULL, spec TEXT NOT NULL, action TEXT NOT NULL,
    mode TEXT NOT NULL, report INTEGER NOT NULL, idempotency_key TEXT, created_at REAL NOT NULL,
    started_at REAL, finished_at REAL, error TEXT, result TEXT, progress TEXT NOT NULL, next_seq INTEGER NOT NULL,
    UNIQUE (owner, idempotency_key)
);
CREATE INDEX IF NOT EXISTS jobs_by_status ON jobs (status, created_at);
CREATE TABLE IF NOT EXISTS events (
    job_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (job_id, seq)
);
"""


@dataclass(frozen=True)
class KeyRow:
    name: str
    created_at: float
    revoked_at: Optional[float]


@dataclass(frozen=True)
class VideoRow:
    id: str
    owner: str
    job_id: Optional[str]
    path: str
    filename: str
    bytes: int
    kind: str
    duration_s: Optional[float]
    width: Optional[int]
    height: Optional[int]
    n_frames: Optional[int]
    created_at: float


@dataclass(frozen=True)
class JobRow:
    id: str
    owner: str
    status: JobStatus
    spec: dict[str, Any]
    action: str
    mode: str
    report: bool
    idempotency_key: Optional[str]
    created_at: float
    started_at: Optional[float]
    finished_at: Optional[float]
    error: Optional[str]
    result: Optional[str]
    progress: Progress
    next_seq: int


@dataclass(frozen=True)
class EventRow:
    seq: int
    type: str
    data: str


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(10)}"


class JobStore:
    """Keys, videos, jobs and events; safe to share between the event loop and worker threads."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False, timeout=30)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.executescript(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _rows(self, sql: str, args: tuple = ()) -> list[sqlite3.Row]:
        with self._lock:
            cur = self._conn.execute(sql, args)
            return cur.fetchall()

    def _exec(self, sql: str, args: tuple = ()) -> int:
        with self._lock:
            return self._conn.execute(sql, args).rowcount

    # ---- keys

    def add_key(self, name: str, key_hash: str) -> bool:
        """``False`` when a key of that name exists (revoked or not: names are never reused)."""
        try:
            self._exec("INSERT INTO keys (name, hash, created_at) VALUES (?, ?, ?)", (name, key_hash, time.time()))
        except sqlite3.IntegrityError:
            return False
        return True

    def keys(self) -> list[KeyRow]:
        return [KeyRow(*r) for r in self._rows("SELECT name, created_at, revoked_at FROM keys ORDER BY created_at")]

    def revoke_key(self, name: str) -> bool:
        return self._exec("UPDATE keys SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL", (time.time(), name)) == 1

    def owner_of(self, key_hash: str) -> Optional[str]:
        rows = self._rows("SELECT name FROM keys WHERE hash = ? AND revoked_at IS NULL", (key_hash,))
        return rows[0][0] if rows else None

    # ---- videos

    def add_video(self, row: VideoRow) -> None:
        self._exec(
            "INSERT INTO videos VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (row.id, row.owner, row.job_id, row.path, row.filename, row.bytes, row.kind, row.duration_s, row.width,
             row.height, row.n_frames, row.created_at),
        )

    def video(self, owner: str, video_id: str) -> Optional[VideoRow]:
        rows = self._rows("SELECT * FROM videos WHERE id = ? AND owner = ?", (video_id, owner))
        return VideoRow(*rows[0]) if rows else None

    def videos_of_job(self, job_id: str) -> list[VideoRow]:
        return [VideoRow(*r) for r in self._rows("SELECT * FROM videos WHERE job_id = ?", (job_id,))]

    def delete_video(self, video_id: str) -> None:
        self._exec("DELETE FROM videos WHERE id = ?", (video_id,))

    def videos_created_before(self, cutoff: float) -> list[VideoRow]:
        return [VideoRow(*r) for r in self._rows("SELECT * FROM videos WHERE created_at < ?", (cutoff,))]

    # ---- jobs

    def add_job(
        self, owner: str, job_id: str, spec: dict[str, Any], *, action: str, mode: str, report: bool,
        idempotency_key: Optional[str],
    ) -> tuple[str, bool]:
        """``(id, created)``: with an ``idempotency_key`` this owner used before, the earlier job's id."""
        try:
            self._exec(
                "INSERT INTO jobs (id, owner, status, spec, action, mode, report, idempotency_key, created_at, progress,"
                " next_seq) VALUES (?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, 1)",
                (job_id, owner, json.dumps(spec), action, mode, int(report), idempotency_key, time.time(),
                 Progress().model_dump_json()),
            )
        except sqlite3.IntegrityError:
            earlier = self.job_by_idempotency_key(owner, idempotency_key)
            if earlier is None:
                raise
            return earlier.id, False
        return job_id, True

    def job_by_idempotency_key(self, owner: str, key: Optional[str]) -> Optional[JobRow]:
        rows = self._rows("SELECT * FROM jobs WHERE owner = ? AND idempotency_key = ?", (owner, key))
        return _job(rows[0]) if rows else None

    def job(self, job_id: str, owner: Optional[str] = None) -> Optional[JobRow]:
        """The job, if it exists and (when ``owner`` is given) belongs to ``owner``."""
        rows = self._rows("SELECT * FROM jobs WHERE id = ?", (job_id,))
        if not rows or (owner is not None and rows[0]["owner"] != owner):
            return None
        return _job(rows[0])

    def jobs(self, owner: str, limit: int = 100) -> list[JobRow]:
        rows = self._rows("SELECT * FROM jobs WHERE owner = ? ORDER BY created_at DESC LIMIT ?", (owner, limit))
        return [_job(r) for r in rows]

    def jobs_in(self, *statuses: str) -> list[JobRow]:
        marks = ",".join("?" * len(statuses))
        rows = self._rows(f"SELECT * FROM jobs WHERE status IN ({marks}) ORDER BY created_at", statuses)
        return [_job(r) for r in rows]

    def count(self, status: str, owner: Optional[str] = None) -> int:
        if owner is None:
            return self._rows("SELECT count(*) FROM jobs WHERE status = ?", (status,))[0][0]
        return self._rows("SELECT count(*) FROM jobs WHERE status = ? AND owner = ?", (status, owner))[0][0]

    def counts_by_status(self) -> dict[str, int]:
        return dict(self._rows("SELECT status, count(*) FROM jobs GROUP BY status"))

    def mark_started(self, job_id: str) -> None:
        """Running now; the events of an earlier, interrupted attempt are dropped (ids keep growing)."""
        with self._lock:
            row = self._conn.execute("SELECT progress FROM jobs WHERE id = ?", (job_id,)).fetchone()
            if row is None:
                return
            progress = Progress.model_validate_json(row[0])
            progress = Progress(step="proposing", attempts=progress.attempts + 1)
            self._conn.execute("DELETE FROM events WHERE job_id = ?", (job_id,))
            self._conn.execute(
                "UPDATE jobs SET status = 'running', started_at = ?, progress = ? WHERE id = ? AND status = 'queued'",
                (time.time(), progress.model_dump_json(), job_id),
            )

    def requeue_unfinished(self) -> list[JobRow]:
        """After a restart: running jobs go back to the queue; every queued job, oldest first."""
        self._exec("UPDATE jobs SET status = 'queued' WHERE status = 'running'")
        return self.jobs_in("queued")

    def add_event(self, job_id: str, type_: str, data: str, progress: Optional[Progress] = None) -> int:
        """Append an event; its id is the job's next one."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                seq = self._conn.execute("SELECT next_seq FROM jobs WHERE id = ?", (job_id,)).fetchone()[0]
                self._conn.execute("INSERT INTO events VALUES (?, ?, ?, ?)", (job_id, seq, type_, data))
                if progress is None:
                    self._conn.execute("UPDATE jobs SET next_seq = ? WHERE id = ?", (seq + 1, job_id))
                else:
                    self._conn.execute(
                        "UPDATE jobs SET next_seq = ?, progress = ? WHERE id = ?",
                        (seq + 1, progress.model_dump_json(), job_id),
                    )
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        return seq

    def events_after(self, job_id: str, seq: int) -> list[EventRow]:
        rows = self._rows("SELECT seq, type, data FROM events WHERE job_id = ? AND seq > ? ORDER BY seq", (job_id, seq))
        return [EventRow(*r) for r in rows]

    def events_of_type(self, job_id: str, type_: str) -> Iterator[str]:
        for (data,) in self._rows("SELECT data FROM events WHERE job_id = ? AND type = ? ORDER BY seq", (job_id, type_)):
            yield data

    def finish(
        self, job_id: str, status: str, *, error: Optional[str] = None, result: Optional[str] = None,
        event: Optional[tuple[str, str]] = None,
    ) -> bool:
        """Record the end of a job that is not finished yet, and its last ``event`` (type, data) in the same
        transaction: a reader never sees the last event of a job that is not finished, nor the reverse.
        ``False`` (and nothing written) if it already was finished."""
        assert status in FINISHED
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                row = self._conn.execute(
                    "SELECT progress, next_seq FROM jobs WHERE id = ? AND status IN ('queued', 'running')", (job_id,)
                ).fetchone()
                if row is not None:
                    progress = Progress.model_validate_json(row[0]).model_copy(update={"step": "finished"})
                    self._conn.execute(
                        "UPDATE jobs SET status = ?, error = ?, result = ?, finished_at = ?, progress = ?, next_seq = ?"
                        " WHERE id = ?",
                        (status, error, result, time.time(), progress.model_dump_json(), row[1] + (event is not None),
                         job_id),
                    )
                    if event is not None:
                        self._conn.execute("INSERT INTO events VALUES (?, ?, ?, ?)", (job_id, row[1], *event))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        return row is not None

    def progress(self, job_id: str) -> Progress:
        row = self._rows("SELECT progress FROM jobs WHERE id = ?", (job_id,))
        return Progress.model_validate_json(row[0][0]) if row else Progress()

    def delete_job(self, job_id: str) -> None:
        with self._lock:
            self._conn.execute("DELETE FROM events WHERE job_id = ?", (job_id,))
            self._conn.execute("DELETE FROM jobs WHERE id = ?", (job_id,))

    def finished_jobs_created_before(self, cutoff: float) -> list[JobRow]:
        rows = self._rows(
            "SELECT * FROM jobs WHERE created_at < ? AND status IN ('done', 'failed', 'cancelled')", (cutoff,)
        )
        return [_job(r) for r in rows]


def _job(row: sqlite3.Row) -> JobRow:
    values = dict(zip(row.keys(), tuple(row)))
    values["spec"] = json.loads(values["spec"])
    values["report"] = bool(values["report"])
    values["progress"] = Progress.model_validate_json(values["progress"])
    return JobRow(**values)
