"""The job store as the event loop sees it: every :class:`JobStore` call awaited on a few threads of its own.

A SQLite call can wait on a lock (another process writing, a checkpoint); made on the event loop, that wait
stalled every request of the server, ``/healthz`` included. Here it only holds one store thread, for at
most ``serve.store_busy_timeout_s``; a call that still finds the store locked then raises :class:`StoreBusy`,
answered 503 with ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Concatenate, ParamSpec, TypeVar

from viddiff.serve.errors import ApiError
from viddiff.serve.jobs import JobStore

P = ParamSpec("P")
R = TypeVar("R")
STORE_THREADS = 4
"""Enough that reads (which WAL never blocks) go on while a write or two wait for a lock."""
RETRY_AFTER_S = 2


class StoreBusy(ApiError):
    """The store stayed locked (by another process) past ``busy_timeout_s``: 503, try again shortly."""

    def __init__(self, busy_timeout_s: float):
        super().__init__(
            503, f"the job store (serve.sqlite) is locked by another process for longer than "
            f"serve.store_busy_timeout_s = {busy_timeout_s:g} s; retry in {RETRY_AFTER_S} s",
            {"Retry-After": str(RETRY_AFTER_S)},
        )


def _off_loop(method: Callable[Concatenate[JobStore, P], R]) -> Callable[Concatenate[AsyncJobStore, P], Awaitable[R]]:
    """``JobStore.method`` as a coroutine of :class:`AsyncJobStore` that runs it on a store thread."""

    @functools.wraps(method)
    async def call(self: AsyncJobStore, *args: P.args, **kwargs: P.kwargs) -> R:
        return await self.run(functools.partial(method, self.store, *args, **kwargs))

    return call


class AsyncJobStore:
    """:class:`JobStore`'s methods, awaitable; none of them runs on the event loop."""

    def __init__(self, store: JobStore, threads: int = STORE_THREADS):
        self.store = store
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="viddiff-store")

    async def run(self, call: Callable[[], R]) -> R:
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, call)
        except sqlite3.OperationalError as exc:
            if _is_busy(exc):
                raise StoreBusy(self.store.busy_timeout_s) from None
            raise

    def close(self) -> None:
        """Wait for the calls under way, then close every connection."""
        self._pool.shutdown(wait=True)
        self.store.close()

    add_key = _off_loop(JobStore.add_key)
    keys = _off_loop(JobStore.keys)
    active_key = _off_loop(JobStore.active_key)
    add_video = _off_loop(JobStore.add_video)
    video = _off_loop(JobStore.video)
    videos_of_job = _off_loop(JobStore.videos_of_job)
    delete_video = _off_loop(JobStore.delete_video)
    delete_video_unless_used = _off_loop(JobStore.delete_video_unless_used)
    videos_created_before = _off_loop(JobStore.videos_created_before)
    add_calibration = _off_loop(JobStore.add_calibration)
    calibration = _off_loop(JobStore.calibration)
    delete_calibration = _off_loop(JobStore.delete_calibration)
    delete_calibration_unless_used = _off_loop(JobStore.delete_calibration_unless_used)
    calibrations_created_before = _off_loop(JobStore.calibrations_created_before)
    add_job = _off_loop(JobStore.add_job)
    job_by_idempotency_key = _off_loop(JobStore.job_by_idempotency_key)
    job = _off_loop(JobStore.job)
    jobs = _off_loop(JobStore.jobs)
    jobs_in = _off_loop(JobStore.jobs_in)
    count = _off_loop(JobStore.count)
    counts_by_owner_and_status = _off_loop(JobStore.counts_by_owner_and_status)
    verdict_counts = _off_loop(JobStore.verdict_counts)
    mark_started = _off_loop(JobStore.mark_started)
    requeue_unfinished = _off_loop(JobStore.requeue_unfinished)
    add_event = _off_loop(JobStore.add_event)
    add_result = _off_loop(JobStore.add_result)
    events_after = _off_loop(JobStore.events_after)
    events_of_type = _off_loop(JobStore.events_of_type)
    finish = _off_loop(JobStore.finish)
    progress = _off_loop(JobStore.progress)
    delete_job = _off_loop(JobStore.delete_job)
    finished_jobs_created_before = _off_loop(JobStore.finished_jobs_created_before)
    key_webhook = _off_loop(JobStore.key_webhook)
    save_webhook = _off_loop(JobStore.save_webhook)
    update_webhook = _off_loop(JobStore.update_webhook)
    webhook = _off_loop(JobStore.webhook)
    jobs_with_pending_webhooks = _off_loop(JobStore.jobs_with_pending_webhooks)


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    """SQLITE_BUSY or SQLITE_LOCKED: another connection held its lock past the busy timeout."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return "locked" in str(exc)
    return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
