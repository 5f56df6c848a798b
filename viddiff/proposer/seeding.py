"""Per-sample proposer seeds, as the authors' release proposes: one proposal per sample, not per action.

With one proposal per action, a difference the proposer misses (or a bad stage plan) is missed for every
sample of that action, and all of them share one cache entry. The release instead seeds each sample's
proposer calls with ``seed + sample_hash``; rows without a ``sample_hash`` get a stable number derived
from their ``sample_key``, so every sample still has its own, reproducible seed.
"""

from __future__ import annotations

import hashlib
from typing import Optional

_INT64 = 2**63
_KEY_HASH_BYTES = 4


def key_hash(sample_key: str) -> int:
    """A stable non-negative number for a sample key (the same on every machine and Python run)."""
    return int.from_bytes(hashlib.sha256(sample_key.encode("utf-8")).digest()[:_KEY_HASH_BYTES], "big")


def proposal_seed(seed: Optional[int], sample_hash: Optional[int], sample_key: str) -> Optional[int]:
    """``seed + sample_hash`` (or + :func:`key_hash` of the key), kept inside the signed 64-bit range that
    chat APIs accept; ``None`` when seeding is off (``proposer.seed: null``)."""
    if seed is None:
        return None
    offset = sample_hash if sample_hash is not None else key_hash(sample_key)
    value = seed + offset
    return value if -_INT64 <= value < _INT64 else value % _INT64
