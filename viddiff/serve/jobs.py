"""The service's state in one SQLite file (WAL) under ``--data-dir``: keys, videos, jobs and their events.

Every job's events are kept in order with increasing ids (the SSE ``id``), so a client that reconnects with
``Last-Event-ID`` gets what it missed, and a restarted server knows which jobs were queued or running.
Each thread has its own connection (reads never wait for a writer in WAL mode); every write of more than one
statement is one ``BEGIN IMMEDIATE`` transaction, and a lock held longer than ``busy_timeout_s`` by another
connection raises ``sqlite3.OperationalError`` ("database is locked") instead of waiting on.
The server never calls this from its event loop: :mod:`viddiff.serve.store_thread` runs it on threads.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence

from viddiff.errors import ViddiffError
from viddiff.serve.states import FINISHED, JobStatus, Progress, Webhook

_SCHEMA = """
CREATE TABLE IF NOT EXISTS keys (
    name TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, created_at REAL NOT NULL, revoked_at REAL,
    scopes TEXT NOT NULL DEFAULT 'app'
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
CREATE TABLE IF NOT EXISTS calibrations (
    id TEXT PRIMARY KEY, owner TEXT NOT NULL, path TEXT NOT NULL, filename TEXT NOT NULL, bytes INTEGER NOT NULL,
    format TEXT NOT NULL, cameras INTEGER NOT NULL, created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS key_webhooks (name TEXT PRIMARY KEY, secret TEXT NOT NULL, callback_url TEXT);
CREATE TABLE IF NOT EXISTS webhooks (job_id TEXT PRIMARY KEY, delivery TEXT NOT NULL);
"""


@dataclass(frozen=True)
class KeyRow:
    name: str
    created_at: float
    revoked_at: Optional[float]
    scopes: tuple[str, ...]
    """What the key may do: ``app`` (the API), ``metrics`` (``/metrics``); see :mod:`viddiff.serve.keys`."""


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
class CalibrationRow:
    id: str
    owner: str
    path: str
    filename: str
    bytes: int
    format: str
    cameras: int
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


class StoreDamaged(ViddiffError):
    """``serve.sqlite`` is no SQLite file, or SQLite's check of it fails."""


class QueueFull(Exception):
    """A new job would pass ``max_queued_per_key`` or ``max_queued_total``: the queued counts it saw."""

    def __init__(self, mine: int, total: int):
        super().__init__(f"{mine} queued for this owner, {total} in all")
        self.mine = mine
        self.total = total


class VideoGone(Exception):
    """A video (or calibration) a new job refers to was deleted since it was looked up."""

    def __init__(self, video_id: str, what: str = "video"):
        super().__init__(video_id)
        self.video_id = video_id
        self.what = what


_IN_USE = (
    "SELECT id FROM jobs WHERE status IN ('queued', 'running') AND ("
    " json_extract(spec, '$.video_a') = :path OR json_extract(spec, '$.video_b') = :path"
    " OR json_extract(spec, '$.calibration_a') = :path OR json_extract(spec, '$.calibration_b') = :path"
    " OR EXISTS (SELECT 1 FROM json_each(spec, '$.views_a') WHERE value = :path)"
    " OR EXISTS (SELECT 1 FROM json_each(spec, '$.views_b') WHERE value = :path)"
    ") ORDER BY created_at"
)
"""The queued or running jobs that read the file at ``:path`` (a video, a view or a calibration)."""


class JobStore:
    """Keys, videos, jobs and events; safe to share between threads (one connection per thread).

    Opening checks the file (``PRAGMA quick_check``) and raises :class:`StoreDamaged` naming it and what to
    do; a damaged store is never moved aside, since it holds the operator's keys.
    """

    def __init__(self, path: Path, busy_timeout_s: float = 5.0):
        self.path = Path(path)
        self.busy_timeout_s = busy_timeout_s
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._opened: list[sqlite3.Connection] = []
        self._opened_lock = threading.Lock()
        try:
            conn = self._conn()
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)
            _add_key_scopes(conn)
            problems = [row[0] for row in conn.execute("PRAGMA quick_check(3)")]
        except sqlite3.DatabaseError as exc:
            if type(exc) is not sqlite3.DatabaseError:  # locked, unreadable, full: not damage
                self.close()
                raise ViddiffError(
                    f"cannot open the job store {self.path}: {exc} (a lock held longer than {busy_timeout_s:g} s by "
                    "another process, or a file or folder this user cannot write); try again, or check its permissions"
                ) from None
            problems = [str(exc)]
        if problems != ["ok"]:
            self.close()
            raise StoreDamaged(damaged_message(self.path, "; ".join(problems).replace("\n", " ")))

    def _conn(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                str(self.path), isolation_level=None, check_same_thread=False, timeout=self.busy_timeout_s
            )
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA synchronous=NORMAL")
            with self._opened_lock:
                self._opened.append(conn)
            self._local.conn = conn
        return conn

    def close(self) -> None:
        with self._opened_lock:
            for conn in self._opened:
                conn.close()
            self._opened.clear()
        self._local = threading.local()

    def _rows(self, sql: str, args: tuple = ()) -> list[sqlite3.Row]:
        return self._conn().execute(sql, args).fetchall()

    def _exec(self, sql: str, args: tuple = ()) -> int:
        return self._conn().execute(sql, args).rowcount

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, holding the write lock from its start (so what it reads stays true)."""
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:  # SQLite may have rolled back already (disk full, I/O error)
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            raise

    # ---- keys

    def add_key(
        self, name: str, key_hash: str, scopes: tuple[str, ...] = ("app",), webhook_secret: Optional[str] = None,
        callback_url: Optional[str] = None,
    ) -> bool:
        """``False`` when a key of that name exists (revoked or not: names are never reused). ``webhook_secret``
        signs the key's webhooks; ``callback_url`` is where they go when a comparison names none."""
        try:
            with self._write() as conn:
                conn.execute(
                    "INSERT INTO keys (name, hash, created_at, scopes) VALUES (?, ?, ?, ?)",
                    (name, key_hash, time.time(), " ".join(scopes)),
                )
                if webhook_secret is not None:
                    conn.execute("INSERT INTO key_webhooks VALUES (?, ?, ?)", (name, webhook_secret, callback_url))
        except sqlite3.IntegrityError:
            return False
        return True

    def key_webhook(self, name: str) -> Optional[tuple[str, Optional[str]]]:
        """``(secret, callback_url)`` of a key; ``None`` for a key made before webhooks existed."""
        rows = self._rows("SELECT secret, callback_url FROM key_webhooks WHERE name = ?", (name,))
        return (rows[0][0], rows[0][1]) if rows else None

    def keys(self) -> list[KeyRow]:
        rows = self._rows("SELECT name, created_at, revoked_at, scopes FROM keys ORDER BY created_at")
        return [KeyRow(name, created, revoked, tuple(scopes.split())) for name, created, revoked, scopes in rows]

    def revoke_key(self, name: str) -> bool:
        return self._exec("UPDATE keys SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL", (time.time(), name)) == 1

    def active_key(self, key_hash: str) -> Optional[KeyRow]:
        rows = self._rows(
            "SELECT name, created_at, revoked_at, scopes FROM keys WHERE hash = ? AND revoked_at IS NULL", (key_hash,)
        )
        return KeyRow(*rows[0][:3], tuple(rows[0][3].split())) if rows else None

    # ---- videos

    def add_video(self, row: VideoRow) -> None:
        self._exec("INSERT INTO videos VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", _video_values(row))

    def video(self, owner: str, video_id: str) -> Optional[VideoRow]:
        rows = self._rows("SELECT * FROM videos WHERE id = ? AND owner = ?", (video_id, owner))
        return VideoRow(*rows[0]) if rows else None

    def videos_of_job(self, job_id: str) -> list[VideoRow]:
        return [VideoRow(*r) for r in self._rows("SELECT * FROM videos WHERE job_id = ?", (job_id,))]

    def delete_video(self, video_id: str) -> None:
        self._exec("DELETE FROM videos WHERE id = ?", (video_id,))

    def delete_video_unless_used(self, video_id: str) -> list[str]:
        """Delete the video's row unless a queued or running job uses it (as a main video or a view): then those
        jobs' ids (kept)."""
        return self._delete_unless_used("videos", video_id)

    def _delete_unless_used(self, table: str, row_id: str) -> list[str]:
        with self._write() as conn:
            row = conn.execute(f"SELECT path FROM {table} WHERE id = ?", (row_id,)).fetchone()
            if row is None:
                return []
            users = [r[0] for r in conn.execute(_IN_USE, {"path": row[0]})]
            if not users:
                conn.execute(f"DELETE FROM {table} WHERE id = ?", (row_id,))
            return users

    def videos_created_before(self, cutoff: float) -> list[VideoRow]:
        return [VideoRow(*r) for r in self._rows("SELECT * FROM videos WHERE created_at < ?", (cutoff,))]

    # ---- calibrations

    def add_calibration(self, row: CalibrationRow) -> None:
        self._exec("INSERT INTO calibrations VALUES (?, ?, ?, ?, ?, ?, ?, ?)", _calibration_values(row))

    def calibration(self, owner: str, calibration_id: str) -> Optional[CalibrationRow]:
        rows = self._rows("SELECT * FROM calibrations WHERE id = ? AND owner = ?", (calibration_id, owner))
        return CalibrationRow(*rows[0]) if rows else None

    def delete_calibration(self, calibration_id: str) -> None:
        self._exec("DELETE FROM calibrations WHERE id = ?", (calibration_id,))

    def delete_calibration_unless_used(self, calibration_id: str) -> list[str]:
        """Delete the calibration's row unless a queued or running job uses it: then those jobs' ids (kept)."""
        return self._delete_unless_used("calibrations", calibration_id)

    def calibrations_created_before(self, cutoff: float) -> list[CalibrationRow]:
        return [CalibrationRow(*r) for r in self._rows("SELECT * FROM calibrations WHERE created_at < ?", (cutoff,))]

    # ---- jobs

    def add_job(
        self, owner: str, job_id: str, spec: dict[str, Any], *, action: str, mode: str, report: bool,
        idempotency_key: Optional[str], videos: Sequence[VideoRow] = (), uses: Sequence[str] = (),
        uses_calibrations: Sequence[str] = (), max_queued_per_key: Optional[int] = None,
        max_queued_total: Optional[int] = None,
    ) -> tuple[str, bool]:
        """Queue a job with the rows of its new ``videos``, in one transaction: ``(id, created)``.

        With an ``idempotency_key`` this owner used before, nothing is added and the earlier job's id comes
        back. Raises :class:`QueueFull` when the queue limits would be passed, :class:`VideoGone` when a video
        id of ``uses`` (videos uploaded before) or a calibration id of ``uses_calibrations`` no longer exists. Counting and inserting under one write lock
        is what makes the limits hold for concurrent requests.
        """
        with self._write() as conn:
            if idempotency_key is not None:
                earlier = conn.execute(
                    "SELECT id FROM jobs WHERE owner = ? AND idempotency_key = ?", (owner, idempotency_key)
                ).fetchone()
                if earlier is not None:
                    return earlier[0], False
            mine = conn.execute("SELECT count(*) FROM jobs WHERE status = 'queued' AND owner = ?", (owner,)).fetchone()[0]
            total = conn.execute("SELECT count(*) FROM jobs WHERE status = 'queued'").fetchone()[0]
            if (max_queued_per_key is not None and mine >= max_queued_per_key) or (
                max_queued_total is not None and total >= max_queued_total
            ):
                raise QueueFull(mine, total)
            for video_id in uses:
                if conn.execute("SELECT 1 FROM videos WHERE id = ?", (video_id,)).fetchone() is None:
                    raise VideoGone(video_id)
            for calibration_id in uses_calibrations:
                if conn.execute("SELECT 1 FROM calibrations WHERE id = ?", (calibration_id,)).fetchone() is None:
                    raise VideoGone(calibration_id, "calibration")
            for row in videos:
                conn.execute("INSERT INTO videos VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", _video_values(row))
            conn.execute(
                "INSERT INTO jobs (id, owner, status, spec, action, mode, report, idempotency_key, created_at, progress,"
                " next_seq) VALUES (?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, 1)",
                (job_id, owner, json.dumps(spec), action, mode, int(report), idempotency_key, time.time(),
                 Progress().model_dump_json()),
            )
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

    def jobs(
        self, owner: str, limit: int, *, after: Optional[JobRow] = None, status: Optional[str] = None
    ) -> list[JobRow]:
        """``owner``'s jobs, newest first (ties broken by id), those after ``after`` only, in ``status`` only."""
        where, args = ["owner = ?"], [owner]
        if status is not None:
            where.append("status = ?")
            args.append(status)
        if after is not None:
            where.append("(created_at, id) < (?, ?)")
            args += [after.created_at, after.id]
        rows = self._rows(
            f"SELECT * FROM jobs WHERE {' AND '.join(where)} ORDER BY created_at DESC, id DESC LIMIT ?", (*args, limit)
        )
        return [_job(r) for r in rows]

    def verdict_counts(self, job_ids: list[str]) -> dict[str, dict[Optional[str], int]]:
        """Per job, its verdicts so far by letter (``None``: never answered validly)."""
        if not job_ids:
            return {}
        marks = ",".join("?" * len(job_ids))
        rows = self._rows(
            "SELECT job_id, json_extract(data, '$.difference.prediction'), count(*) FROM events"
            f" WHERE type = 'verdict' AND job_id IN ({marks}) GROUP BY 1, 2", tuple(job_ids),
        )
        counts: dict[str, dict[Optional[str], int]] = {}
        for job_id, letter, count in rows:
            counts.setdefault(job_id, {})[letter] = count
        return counts

    def jobs_in(self, *statuses: str) -> list[JobRow]:
        marks = ",".join("?" * len(statuses))
        rows = self._rows(f"SELECT * FROM jobs WHERE status IN ({marks}) ORDER BY created_at", statuses)
        return [_job(r) for r in rows]

    def count(self, status: str, owner: Optional[str] = None) -> int:
        if owner is None:
            return self._rows("SELECT count(*) FROM jobs WHERE status = ?", (status,))[0][0]
        return self._rows("SELECT count(*) FROM jobs WHERE status = ? AND owner = ?", (status, owner))[0][0]

    def counts_by_owner_and_status(self) -> dict[tuple[str, str], int]:
        rows = self._rows("SELECT owner, status, count(*) FROM jobs GROUP BY owner, status")
        return {(owner, status): count for owner, status, count in rows}

    def mark_started(self, job_id: str) -> None:
        """Running now; the events of an earlier, interrupted attempt are dropped (ids keep growing)."""
        with self._write() as conn:
            row = conn.execute("SELECT progress FROM jobs WHERE id = ?", (job_id,)).fetchone()
            if row is None:
                return
            progress = Progress.model_validate_json(row[0])
            progress = Progress(step="proposing", attempts=progress.attempts + 1)
            conn.execute("DELETE FROM events WHERE job_id = ?", (job_id,))
            conn.execute(
                "UPDATE jobs SET status = 'running', started_at = ?, progress = ? WHERE id = ? AND status = 'queued'",
                (time.time(), progress.model_dump_json(), job_id),
            )

    def requeue_unfinished(self) -> list[JobRow]:
        """After a restart: running jobs go back to the queue; every queued job, oldest first."""
        self._exec("UPDATE jobs SET status = 'queued' WHERE status = 'running'")
        return self.jobs_in("queued")

    def add_event(self, job_id: str, type_: str, data: str, progress: Optional[Progress] = None) -> int:
        """Append an event; its id is the job's next one."""
        with self._write() as conn:
            return _append_event(conn, job_id, type_, data, progress)

    def add_result(self, job_id: str, data: str, result: str) -> bool:
        """Append the ``result`` event and store the job done with its result, in one transaction, so a client
        that has read the event finds the job done; ``False`` if the job had finished already."""
        with self._write() as conn:
            if not _finish(conn, job_id, "done", None, result):
                return False  # cancelled or failed meanwhile: no result after its end
            _append_event(conn, job_id, "result", data, None)
            return True

    def events_after(self, job_id: str, seq: int) -> list[EventRow]:
        rows = self._rows("SELECT seq, type, data FROM events WHERE job_id = ? AND seq > ? ORDER BY seq", (job_id, seq))
        return [EventRow(*r) for r in rows]

    def events_of_type(self, job_id: str, type_: str) -> list[str]:
        return [data for (data,) in self._rows(
            "SELECT data FROM events WHERE job_id = ? AND type = ? ORDER BY seq", (job_id, type_)
        )]

    def finish(
        self, job_id: str, status: str, *, error: Optional[str] = None, result: Optional[str] = None,
        event: Optional[tuple[str, str]] = None,
    ) -> bool:
        """Record the end of a job that is not finished yet, and its last ``event`` (type, data) in the same
        transaction: a reader never sees the last event of a job that is not finished, nor the reverse.
        ``False`` (and nothing written) if it already was finished."""
        with self._write() as conn:
            if not _finish(conn, job_id, status, error, result):
                return False
            if event is not None:
                _append_event(conn, job_id, *event, None)
            return True

    def progress(self, job_id: str) -> Progress:
        row = self._rows("SELECT progress FROM jobs WHERE id = ?", (job_id,))
        return Progress.model_validate_json(row[0][0]) if row else Progress()

    def delete_job(self, job_id: str) -> None:
        with self._write() as conn:
            conn.execute("DELETE FROM events WHERE job_id = ?", (job_id,))
            conn.execute("DELETE FROM webhooks WHERE job_id = ?", (job_id,))
            conn.execute("DELETE FROM jobs WHERE id = ?", (job_id,))

    def finished_jobs_created_before(self, cutoff: float) -> list[JobRow]:
        rows = self._rows(
            "SELECT * FROM jobs WHERE created_at < ? AND status IN ('done', 'failed', 'cancelled')", (cutoff,)
        )
        return [_job(r) for r in rows]

    # ---- webhooks

    def save_webhook(self, job_id: str, webhook: Webhook) -> None:
        self._exec("INSERT OR REPLACE INTO webhooks VALUES (?, ?)", (job_id, webhook.model_dump_json()))

    def update_webhook(self, job_id: str, webhook: Webhook) -> None:
        """Record a try; nothing once the job was deleted."""
        self._exec("UPDATE webhooks SET delivery = ? WHERE job_id = ?", (webhook.model_dump_json(), job_id))

    def webhook(self, job_id: str) -> Optional[Webhook]:
        rows = self._rows("SELECT delivery FROM webhooks WHERE job_id = ?", (job_id,))
        return Webhook.model_validate_json(rows[0][0]) if rows else None

    def jobs_with_pending_webhooks(self) -> list[str]:
        """Finished jobs whose webhook is still to be sent (the server stopped before it was)."""
        rows = self._rows(
            "SELECT w.job_id, w.delivery FROM webhooks w JOIN jobs j ON j.id = w.job_id"
            " WHERE j.status IN ('done', 'failed', 'cancelled') ORDER BY j.finished_at"
        )
        return [job_id for job_id, data in rows if Webhook.model_validate_json(data).state == "pending"]


def damaged_message(path: Path, problem: str) -> str:
    """One line: the file, what SQLite found, and the operator's two ways on (the store holds the keys, so
    it is theirs to replace)."""
    return (
        f"{path} is damaged ({problem}); it holds this server's API keys, jobs and results, so it was left as it "
        f"is: stop every viddiff serve on its --data-dir, then restore it from a backup, or move it aside "
        f"(mv {path} {path}.damaged, and its -wal and -shm files) to start with an empty store and create the "
        "keys again (viddiff serve keys create NAME)"
    )


def _append_event(conn: sqlite3.Connection, job_id: str, type_: str, data: str, progress: Optional[Progress]) -> int:
    seq = conn.execute("SELECT next_seq FROM jobs WHERE id = ?", (job_id,)).fetchone()[0]
    conn.execute("INSERT INTO events VALUES (?, ?, ?, ?)", (job_id, seq, type_, data))
    if progress is None:
        conn.execute("UPDATE jobs SET next_seq = ? WHERE id = ?", (seq + 1, job_id))
    else:
        conn.execute("UPDATE jobs SET next_seq = ?, progress = ? WHERE id = ?", (seq + 1, progress.model_dump_json(), job_id))
    return seq


def _finish(conn: sqlite3.Connection, job_id: str, status: str, error: Optional[str], result: Optional[str]) -> bool:
    assert status in FINISHED
    row = conn.execute("SELECT progress FROM jobs WHERE id = ?", (job_id,)).fetchone()
    if row is None:
        return False
    progress = Progress.model_validate_json(row[0]).model_copy(update={"step": "finished"})
    return conn.execute(
        "UPDATE jobs SET status = ?, error = ?, result = ?, finished_at = ?, progress = ?"
        " WHERE id = ? AND status IN ('queued', 'running')",
        (status, error, result, time.time(), progress.model_dump_json(), job_id),
    ).rowcount == 1


def _video_values(row: VideoRow) -> tuple:
    return (row.id, row.owner, row.job_id, row.path, row.filename, row.bytes, row.kind, row.duration_s, row.width,
            row.height, row.n_frames, row.created_at)


def _calibration_values(row: CalibrationRow) -> tuple:
    return (row.id, row.owner, row.path, row.filename, row.bytes, row.format, row.cameras, row.created_at)


def _job(row: sqlite3.Row) -> JobRow:
    values = dict(zip(row.keys(), tuple(row)))
    values["spec"] = json.loads(values["spec"])
    values["report"] = bool(values["report"])
    values["progress"] = Progress.model_validate_json(values["progress"])
    return JobRow(**values)


def _add_key_scopes(conn: sqlite3.Connection) -> None:
    """A store made before keys had scopes: its keys are app keys."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(keys)")}
    if "scopes" not in columns:
        conn.execute("ALTER TABLE keys ADD COLUMN scopes TEXT NOT NULL DEFAULT 'app'")
