"""The micro-batcher: concurrent callers share bounded batches and each gets its own rows back."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from viddiff.backends.microbatch import MicroBatcher
from viddiff.backends.stopping import StopRequested, run_stoppable


class SlowModel:
    """Doubles its rows; the first batch waits for ``release`` so that the other callers queue up meanwhile."""

    def __init__(self) -> None:
        self.batches: list[list[float]] = []
        self.release = threading.Event()
        self.started = threading.Event()

    def __call__(self, rows: list[float]) -> np.ndarray:
        self.batches.append(list(rows))
        self.started.set()
        assert self.release.wait(10)
        return np.asarray(rows, dtype=np.float32)[:, None] * 2


def test_concurrent_callers_share_bounded_batches_and_get_their_own_rows() -> None:
    model = SlowModel()
    batcher = MicroBatcher(model, max_batch=8, max_wait_s=0.0)
    requests = [[float(10 * i + j) for j in range(3)] for i in range(6)]
    with ThreadPoolExecutor(6) as pool:
        first = pool.submit(batcher.submit, requests[0])
        assert model.started.wait(10)  # the first batch is in the model; the rest queue behind it
        rest = [pool.submit(batcher.submit, rows) for rows in requests[1:]]
        while sum(len(r.rows) for r in batcher._queue) < 15:  # all five queued
            threading.Event().wait(0.01)
        model.release.set()
        results = [first.result(10)] + [f.result(10) for f in rest]
    for rows, out in zip(requests, results):
        assert out[:, 0].tolist() == [2 * r for r in rows]
    assert [len(b) for b in model.batches] == [3, 8, 7]  # 15 queued rows: a full batch, then the rest
    assert batcher.batches == 3 and batcher.rows == 18


def test_a_request_longer_than_a_batch_is_split_and_reassembled() -> None:
    sizes = []

    def model(rows: list[int]) -> np.ndarray:
        sizes.append(len(rows))
        return np.asarray(rows)[:, None]

    out = MicroBatcher(model, max_batch=4, max_wait_s=0.0).submit(list(range(10)))
    assert out[:, 0].tolist() == list(range(10)) and sizes == [4, 4, 2]


def test_a_failed_batch_fails_its_callers_and_the_batcher_goes_on() -> None:
    def model(rows: list[int]) -> np.ndarray:
        if -1 in rows:
            raise RuntimeError("CUDA out of memory")
        return np.asarray(rows)[:, None]

    batcher = MicroBatcher(model, max_batch=4, max_wait_s=0.0)
    with pytest.raises(RuntimeError, match="out of memory"):
        batcher.submit([1, -1, 2, 3, 4, 5])  # its second batch is dropped, not run
    assert batcher.submit([7])[:, 0].tolist() == [7]


def test_a_cancelled_caller_stops_waiting_and_its_queued_rows_never_run() -> None:
    model = SlowModel()
    batcher = MicroBatcher(model, max_batch=2, max_wait_s=0.0)
    raised: list[BaseException] = []

    def wait_behind_the_first_batch() -> None:
        try:
            batcher.submit([5.0, 6.0, 7.0])
        except BaseException as exc:  # noqa: BLE001 - recorded for the test
            raised.append(exc)

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        first = loop.run_in_executor(None, batcher.submit, [1.0, 2.0])
        assert await loop.run_in_executor(None, model.started.wait, 10)
        task = asyncio.create_task(run_stoppable(wait_behind_the_first_batch))
        await asyncio.sleep(0.1)  # queued behind the batch in the model
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        model.release.set()
        assert (await first)[:, 0].tolist() == [2.0, 4.0]

    asyncio.run(scenario())
    assert len(raised) == 1 and isinstance(raised[0], StopRequested)
    assert model.batches == [[1.0, 2.0]]  # the cancelled caller's rows were dropped


def test_closing_lets_the_batch_in_progress_finish_fails_the_queued_rows_and_ends_the_thread() -> None:
    """What runs at interpreter exit: a model thread still inside torch while the process tears down its C++
    runtime aborts the process (test_cli's Ctrl-C test saw 'terminate called without an active exception')."""
    model = SlowModel()
    batcher = MicroBatcher(model, max_batch=2, max_wait_s=0.0)
    running = batcher.enqueue([1.0, 2.0])
    assert model.started.wait(10)
    queued = batcher.enqueue([3.0])
    thread = batcher._thread
    assert thread is not None
    closing = threading.Thread(target=batcher.close)
    closing.start()
    closing.join(0.3)
    assert closing.is_alive() and thread.is_alive()  # close waits for the batch in the model
    model.release.set()
    closing.join(10)
    assert not thread.is_alive()
    assert batcher.wait(running).ravel().tolist() == [2.0, 4.0]
    with pytest.raises(StopRequested, match="exiting"):
        batcher.wait(queued)
    with pytest.raises(StopRequested, match="exiting"):
        batcher.enqueue([4.0])
    assert model.batches == [[1.0, 2.0]]
