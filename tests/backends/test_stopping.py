"""Work in a worker thread stops when the task waiting for it is cancelled (Ctrl-C during localisation)."""

from __future__ import annotations

import asyncio
import contextlib
import threading

import numpy as np

from viddiff.backends.clip import ClipEmbedder
from viddiff.backends.stopping import StopRequested, raise_if_stopped, run_stoppable
from viddiff.config import ClipConfig
from viddiff.testing import TINY_CLIP_CONFIG, TINY_CLIP_MODEL


def _cancel_then_release(work) -> list[BaseException]:
    """Start ``work(go)`` with :func:`run_stoppable`, cancel the wait, then let the work go on; returns what
    the worker thread raised (``asyncio.run`` waits for the thread before it returns)."""
    raised: list[BaseException] = []
    go = threading.Event()

    def guarded() -> None:
        try:
            work(go)
        except BaseException as exc:  # noqa: BLE001 - recorded for the test
            raised.append(exc)

    async def scenario() -> None:
        task = asyncio.create_task(run_stoppable(guarded))
        await asyncio.sleep(0.05)  # the thread is waiting on `go`
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        go.set()

    asyncio.run(scenario())
    return raised


def test_cancelling_the_wait_sets_the_stop_flag_the_thread_sees() -> None:
    def work(go: threading.Event) -> None:
        assert go.wait(10)
        raise_if_stopped()

    [raised] = _cancel_then_release(work)
    assert isinstance(raised, StopRequested)


def test_clip_batches_check_the_flag_so_a_cancelled_localisation_embeds_no_more() -> None:
    embedder = ClipEmbedder(ClipConfig(
        model=TINY_CLIP_MODEL, arch_config=str(TINY_CLIP_CONFIG), pretrained=None, device="cpu", batch_size=2,
    ))
    frames = np.random.default_rng(0).integers(0, 255, (8, 32, 32, 3), dtype=np.uint8)

    def work(go: threading.Event) -> None:
        assert go.wait(10)
        embedder.embed_images(frames)

    [raised] = _cancel_then_release(work)
    assert isinstance(raised, StopRequested)
    assert embedder.stats.image_forward == 0  # not one batch after the stop
    assert embedder.embed_images(frames).shape[0] == 8  # outside a stopped task, nothing changes


def test_without_a_waiting_task_nothing_is_ever_stopped() -> None:
    raise_if_stopped()  # no flag in this context: a plain call never raises
    assert asyncio.run(run_stoppable(lambda: 42)) == 42
