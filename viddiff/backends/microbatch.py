"""Gathering the rows of concurrent callers into bounded batches for one model thread.

A served ``VidDiff`` compares many pairs at once; each comparison asks CLIP for a few frames at a time, from
its own worker thread. Running each request alone keeps the accelerator idle between small batches (and a
lock around them serialises the comparisons). A :class:`MicroBatcher` lets each caller :meth:`submit` its
rows and block; one worker thread takes the rows queued by all callers, waits at most ``max_wait_s`` for
more while the batch is short, runs at most ``max_batch`` rows in one call, and hands each caller its rows
back in order. Whatever the callers did before submitting (hashing, cache look-ups, preprocessing) runs
in their own threads, beside the model.

A caller whose waiting task was cancelled (:mod:`viddiff.backends.stopping`) stops waiting at once; its rows
not yet started are dropped, so cancelled comparisons cost at most the batch in progress.

The worker thread is a daemon (an idle one must not hold up the exit), so when the interpreter exits it is
stopped and waited for: a batch still running inside torch while the process tears down its C++ runtime ends
the process with "terminate called without an active exception" (seen after Ctrl-C during localisation).
"""

from __future__ import annotations

import atexit
import contextlib
import threading
import time
import weakref
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Generic, Optional, Sequence, TypeVar

import numpy as np

from viddiff.backends.stopping import StopRequested, current_stop_flag

T = TypeVar("T")
_POLL_S = 0.05
"""How often a waiting caller checks whether it was cancelled."""
_IDLE_EXIT_S = 2.0
"""An idle worker thread ends after this long (the next request starts another), so none outlives its use."""


@dataclass(eq=False)
class _Request(Generic[T]):
    rows: Sequence[T]
    stop: Optional[threading.Event]
    done: threading.Event = field(default_factory=threading.Event)
    out: Optional[np.ndarray] = None
    next_row: int = 0
    """Rows before this one have been taken into a batch."""
    filled: int = 0
    error: Optional[BaseException] = None

    def abandoned(self) -> bool:
        return self.stop is not None and self.stop.is_set()


Pending = _Request
"""A queued request (from :meth:`MicroBatcher.enqueue`), to pass to :meth:`MicroBatcher.wait`."""


class MicroBatcher(Generic[T]):
    """``run(rows) -> (len(rows), D) array`` on batches gathered from concurrent :meth:`submit` calls.

    ``run`` is only ever called from the batcher's own thread, one batch at a time, while holding
    ``model_lock`` if given (so two batchers sharing a model never run it at once).
    """

    def __init__(
        self,
        run: Callable[[list[T]], np.ndarray],
        *,
        max_batch: int,
        max_wait_s: float,
        name: str = "viddiff-microbatch",
        model_lock: Optional[threading.Lock] = None,
    ):
        if max_batch < 1:
            raise ValueError(f"max_batch must be at least 1, got {max_batch}")
        self._run = run
        self.max_batch = max_batch
        self.max_wait_s = max_wait_s
        self._name = name
        self._model_lock = model_lock
        self._queue: deque[_Request[T]] = deque()
        self._cond = threading.Condition()
        self._thread: Optional[threading.Thread] = None
        self._closed = False
        atexit.register(_close_at_exit, weakref.ref(self))
        self.batches = 0
        """Batches run so far (with ``rows``: the mean batch size, for benches and tests)."""
        self.rows = 0

    def submit(self, rows: Sequence[T]) -> np.ndarray:
        """Block until ``rows`` have been run (possibly in several batches, beside other callers' rows)."""
        return self.wait(self.enqueue(rows))

    def enqueue(self, rows: Sequence[T]) -> "Pending":
        """Queue ``rows`` and return at once (the caller can prepare its next rows meanwhile); :meth:`wait`."""
        if len(rows) == 0:
            raise ValueError("the micro-batcher needs at least one row")
        request: _Request[T] = _Request(rows=rows, stop=current_stop_flag())
        with self._cond:
            if self._closed:
                raise StopRequested("stopped: the model thread has ended (the process is exiting)")
            self._queue.append(request)
            self._ensure_thread()
            self._cond.notify_all()
        return request

    @staticmethod
    def wait(request: "Pending") -> np.ndarray:
        """The rows' results, in order; raises what their batch raised, or StopRequested if cancelled."""
        while not request.done.wait(_POLL_S):
            if request.abandoned():
                raise StopRequested("stopped: the task waiting for these embeddings was cancelled")
        if request.error is not None:
            raise request.error
        assert request.out is not None
        return request.out

    def close(self, timeout_s: float = 60.0) -> None:
        """End the worker thread after its batch in progress; rows still queued fail with StopRequested."""
        with self._cond:
            self._closed = True
            thread = self._thread
            self._cond.notify_all()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout_s)

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._serve, name=self._name, daemon=True)
            self._thread.start()

    def _serve(self) -> None:
        while True:
            batch = self._gather()
            if batch is None:
                return
            self._run_batch(batch)

    def _gather(self) -> Optional[list[tuple[_Request[T], int, int]]]:
        """The next batch as (request, first row, row count) slices; ``None`` when idle too long."""
        with self._cond:
            idle_until = time.monotonic() + _IDLE_EXIT_S
            while not self._queue or self._closed:
                left = idle_until - time.monotonic()
                if left <= 0 or self._closed:
                    self._thread = None  # decided under the lock: the next enqueue starts a new thread
                    for request in self._queue:
                        request.error = StopRequested("stopped: the model thread has ended (the process is exiting)")
                        request.done.set()
                    self._queue.clear()
                    return None
                self._cond.wait(left)
            deadline = time.monotonic() + self.max_wait_s
            while self._queued_rows() < self.max_batch:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            return self._take(self.max_batch)

    def _queued_rows(self) -> int:
        return sum(len(r.rows) - r.next_row for r in self._queue if not r.abandoned())

    def _take(self, limit: int) -> list[tuple[_Request[T], int, int]]:
        """Up to ``limit`` rows from the front of the queue (lock held); abandoned requests are dropped."""
        batch = []
        while self._queue and limit > 0:
            request = self._queue[0]
            if request.abandoned():
                self._queue.popleft()
                continue
            start = request.next_row
            count = min(limit, len(request.rows) - start)
            batch.append((request, start, count))
            request.next_row += count
            limit -= count
            if request.next_row == len(request.rows):
                self._queue.popleft()
        return batch

    def _run_batch(self, batch: list[tuple[_Request[T], int, int]]) -> None:
        rows: list[T] = [row for request, start, count in batch for row in request.rows[start : start + count]]
        if not rows:
            return
        try:
            with self._model_lock if self._model_lock is not None else contextlib.nullcontext():
                out = np.asarray(self._run(rows))
        except BaseException as exc:  # noqa: BLE001 - handed to every caller of this batch, who raises it
            for request, _, _ in batch:
                self._fail(request, exc)
            return
        self.batches += 1
        self.rows += len(rows)
        offset = 0
        for request, start, count in batch:
            if request.out is None:
                request.out = np.empty((len(request.rows), *out.shape[1:]), dtype=out.dtype)
            request.out[start : start + count] = out[offset : offset + count]
            offset += count
            request.filled += count
            if request.filled == len(request.rows):
                request.done.set()

    def _fail(self, request: _Request[T], exc: BaseException) -> None:
        """A failed batch fails its requests; their rows still queued are dropped."""
        request.error = exc
        with self._cond:
            if request in self._queue:
                self._queue.remove(request)
        request.done.set()


def _close_at_exit(batcher: "weakref.ref[MicroBatcher]") -> None:
    alive = batcher()
    if alive is not None:
        alive.close()
