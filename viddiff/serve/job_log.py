"""A comparison's life in the server log: queued, started, then done, failed or cancelled, with durations.

Each line names the job and its key by name, with the same facts as structured fields for ``--log-format json``.
"""

from __future__ import annotations

import logging
from typing import Optional

from viddiff.serve.jobs import JobRow
from viddiff.serve.log_format import FIELDS

log = logging.getLogger("viddiff.serve.jobs")


def queued(row: JobRow) -> None:
    _line(logging.INFO, "job %s queued (key %s, %s mode)", row, row.id, row.owner, row.mode, event="queued")


def started(row: Optional[JobRow]) -> None:
    if row is None:  # deleted meanwhile
        return
    waited = _span(row.created_at, row.started_at)
    _line(logging.INFO, "job %s started (key %s, attempt %d, %.1f s after it was queued)", row, row.id, row.owner,
          row.progress.attempts, waited or 0.0, event="started", attempt=row.progress.attempts, queued_s=waited)


def ended(row: JobRow) -> None:
    ran, total = _span(row.started_at, row.finished_at), _span(row.created_at, row.finished_at)
    level = logging.WARNING if row.status == "failed" else logging.INFO
    why = f": {row.error}" if row.error else ""
    _line(level, "job %s %s (key %s) after %.1f s running, %.1f s in all%s", row, row.id, row.status, row.owner,
          ran or 0.0, total or 0.0, why, event=row.status, run_s=ran, total_s=total, error=row.error)


def _span(start: Optional[float], end: Optional[float]) -> Optional[float]:
    return round(end - start, 3) if start is not None and end is not None else None


def _line(level: int, message: str, row: JobRow, *args, event: str, **fields) -> None:
    log.log(level, message, *args, extra={FIELDS: {"event": f"job_{event}", "job_id": row.id, "key": row.owner, **fields}})
