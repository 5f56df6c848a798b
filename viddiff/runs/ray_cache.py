"""One cache of record for Ray actors on any node: model calls and embeddings are looked up and stored
through the head.

:class:`CacheOfRecord` is a Ray actor pinned to the head's node (the driver's), in front of the head's SQLite
cache (``cache.path``): the one process that opens that file, so no SQLite file is ever shared over a network
filesystem. Each actor reaches it through :class:`RemoteCache`, which has the calls of
:class:`viddiff.cache.Cache` that the models make (``get``, ``put``, ``get_many``, ``put_many``). A store
returns once the head has committed it, so an answer that reached a job's events is in the cache of record:
a job re-run on another node after its node died asks the models nothing they had answered, and every answer
paid for on any node is cached once.

A cache only saves work: a look-up that cannot reach the head is a miss, and a store that cannot is logged
and skipped, as :class:`viddiff.cache.Cache` does with a failing file.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Optional

from viddiff.cache import Cache
from viddiff.config import CacheConfig

log = logging.getLogger(__name__)
CALL_TIMEOUT_S = 60.0
"""Longest wait for the head's answer to one look-up or store (then: a miss, or a skipped store)."""


class CacheOfRecord:
    """The head's SQLite cache, as a Ray actor's body (pinned to the head's node by :func:`start_cache_of_record`)."""

    def __init__(self, path: str):
        self._cache = Cache(path)

    def get_many(self, namespace: str, keys: list[str]) -> dict[str, bytes]:
        return self._cache.get_many(namespace, keys)

    def put_many(self, namespace: str, items: dict[str, bytes]) -> None:
        self._cache.put_many(namespace, items)

    def close(self) -> None:
        self._cache.close()


def start_cache_of_record(ray: Any, cfg: CacheConfig) -> Optional[Any]:
    """The cache actor on this (the head's) node, in front of ``cfg``'s file; ``None`` with the cache disabled."""
    if not cfg.enabled:
        return None
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = NodeAffinitySchedulingStrategy(node_id=ray.get_runtime_context().get_node_id(), soft=False)
    actor_class = ray.remote(CacheOfRecord).options(num_cpus=0, max_concurrency=16, scheduling_strategy=here)
    return actor_class.remote(str(cfg.resolved_path()))


class RemoteCache:
    """:class:`viddiff.cache.Cache`'s model-facing calls, answered by the head's :class:`CacheOfRecord`."""

    def __init__(self, handle: Any, path: str):
        self._handle = handle
        self.path = Path(path)
        """The file on the head (for messages)."""
        self._warned: set[str] = set()

    def get(self, namespace: str, key: str) -> Optional[bytes]:
        return self.get_many(namespace, [key]).get(key)

    def put(self, namespace: str, key: str, value: bytes) -> None:
        self.put_many(namespace, {key: value})

    def get_many(self, namespace: str, keys: list[str]) -> dict[str, bytes]:
        found = self._call("read", self._handle.get_many.remote(namespace, keys))
        return found if isinstance(found, dict) else {}

    def put_many(self, namespace: str, items: dict[str, bytes]) -> None:
        if items:
            self._call("write", self._handle.put_many.remote(namespace, items))

    def close(self) -> None:
        """Nothing to release here: the head owns the file."""

    def _call(self, action: str, ref: Any) -> Any:
        import ray

        try:
            return ray.get(ref, timeout=CALL_TIMEOUT_S)
        except (ray.exceptions.RayError, TimeoutError) as exc:
            if action not in self._warned:  # once per kind of failure: a cache only saves work
                self._warned.add(action)
                consequence = "treated as a miss" if action == "read" else "the answer is not cached"
                log.warning("the cache of record on the head (%s) did not answer a %s (%s); %s", self.path, action,
                            type(exc).__name__, consequence)
            return None

    def __repr__(self) -> str:
        return f"RemoteCache({str(self.path)!r})"
