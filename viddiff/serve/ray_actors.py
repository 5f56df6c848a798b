"""The Ray actors of ``viddiff serve --ray``: ``ray.actors`` of them kept alive, each one watched.

An actor that dies (killed, out of memory, its node gone) is seen the moment Ray knows it, not when a job
next tries it: each actor holds one call that only returns by failing, when the actor dies. From then on no
job is sent to it, and a new actor is asked of Ray in its place; Ray puts it wherever resources allow, and
where none are free now it waits until some are (a node that joins, an autoscaler's node): the placement is
Ray's own. Meanwhile the server is ``degraded``: :meth:`ActorPool.health` has the live and configured counts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Any, Callable, Optional

from viddiff.serve.models import ActorsHealth

log = logging.getLogger(__name__)
REPLACE_BACKOFF_S = (1.0, 30.0)
"""A replacement that died before it was ready is asked for again after 1 s, doubling up to 30 s."""


@dataclass(frozen=True)
class ActorPlace:
    """Where a ready actor runs (what its ``ready`` call answers)."""

    pid: int
    node_ip: str


@dataclass
class _Slot:
    handle: Any = None
    """``None`` while no live actor holds this slot (its replacement is being placed)."""
    place: Optional[ActorPlace] = None
    busy: int = 0
    placing: Any = None
    """The replacement asked of Ray and not ready yet (ended too at shutdown)."""


class ActorPool:
    """``size`` actors made by ``make_actor()``, whose ``ready()`` answers an :class:`ActorPlace` once its models
    are loaded, and whose ``watch()`` never returns while it lives."""

    def __init__(self, ray: Any, make_actor: Callable[[], Any], size: int):
        self._ray = ray
        self._make_actor = make_actor
        self._slots = [_Slot() for _ in range(size)]
        self._tasks: set[asyncio.Task] = set()
        self._some_live = asyncio.Event()

    async def start(self) -> None:
        """Place every actor and wait until each is ready (models loaded)."""
        handles = [self._make_actor() for _ in self._slots]
        places = await asyncio.gather(*(handle.ready.remote() for handle in handles))
        for index, (handle, place) in enumerate(zip(handles, places)):
            self._install(index, handle, place)

    @property
    def size(self) -> int:
        return len(self._slots)

    def place(self, index: int) -> Optional[ActorPlace]:
        return self._slots[index].place

    async def take(self, avoid: list[int]) -> tuple[int, Any]:
        """The least busy live actor (one not in ``avoid`` first), counted busy until :meth:`release`; waits
        while none is live."""
        while not (live := [i for i, slot in enumerate(self._slots) if slot.handle is not None]):
            await self._some_live.wait()
        index = min(live, key=lambda i: (i in avoid, self._slots[i].busy, i))
        self._slots[index].busy += 1
        return index, self._slots[index].handle

    def release(self, index: int) -> None:
        self._slots[index].busy -= 1

    def lost(self, index: int, handle: Any) -> None:
        """``handle``, in slot ``index``, died: no job goes to it any more, and a new actor is asked for."""
        slot = self._slots[index]
        if slot.handle is not handle:  # already known (the watch and a job both saw it)
            return
        log.warning("Ray actor %d (pid %s on %s) died; a new one is being placed", index,
                    slot.place.pid if slot.place else "?", slot.place.node_ip if slot.place else "?")
        slot.handle, slot.place = None, None
        if not any(s.handle is not None for s in self._slots):
            self._some_live.clear()
        self._spawn(self._replace(index), f"viddiff-ray-replace-{index}")

    def health(self) -> ActorsHealth:
        by_node: dict[str, int] = {}
        for slot in self._slots:
            if slot.handle is not None and slot.place is not None:
                by_node[slot.place.node_ip] = by_node.get(slot.place.node_ip, 0) + 1
        return ActorsHealth(configured=len(self._slots), live=sum(by_node.values()), by_node=dict(sorted(by_node.items())))

    async def shutdown(self) -> None:
        """Stop watching and replacing, let each live actor release its models, then end every actor."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        handles = [slot.handle for slot in self._slots if slot.handle is not None]
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.gather(*(h.close.remote() for h in handles), return_exceptions=True), 10)
        for handle in [*handles, *(slot.placing for slot in self._slots if slot.placing is not None)]:
            self._ray.kill(handle)
        self._slots = [_Slot() for _ in self._slots]

    def _install(self, index: int, handle: Any, place: ActorPlace) -> None:
        self._slots[index] = _Slot(handle, place, self._slots[index].busy)
        self._some_live.set()
        log.info("Ray actor %d ready (pid %d on %s)", index, place.pid, place.node_ip)
        self._spawn(self._watch(index, handle), f"viddiff-ray-watch-{index}")

    async def _watch(self, index: int, handle: Any) -> None:
        try:
            await handle.watch.remote()
        except self._ray.exceptions.RayActorError:
            self.lost(index, handle)

    async def _replace(self, index: int) -> None:
        wait = REPLACE_BACKOFF_S[0]
        while True:
            handle = self._slots[index].placing = self._make_actor()
            try:
                place = await handle.ready.remote()
            except self._ray.exceptions.RayActorError as exc:
                self._slots[index].placing = None
                log.warning("the new Ray actor %d died before it was ready (%s); asking again in %g s", index,
                            type(exc).__name__, wait)
                await asyncio.sleep(wait)
                wait = min(wait * 2, REPLACE_BACKOFF_S[1])
                continue
            self._install(index, handle, place)
            return

    def _spawn(self, coroutine, name: str) -> None:
        task = asyncio.create_task(coroutine, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
