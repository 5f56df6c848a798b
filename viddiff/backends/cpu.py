"""How many CPU threads torch should use here.

torch sizes its thread pool from the machine's cores, but a container or a
``taskset`` often grants a process fewer (a CPU quota, an affinity mask). More
compute threads than granted cores make every matrix product wait for
descheduled threads, which slows CLIP down instead of speeding it up. So the
pool is lowered to the granted cores, never raised, and left alone when the
user chose a size (``OMP_NUM_THREADS`` / ``MKL_NUM_THREADS``) or the config
names one (``localizer.clip.threads``).
"""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path
from typing import Mapping, Optional

logger = logging.getLogger(__name__)

THREAD_ENV_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
CGROUP_ROOT = Path("/sys/fs/cgroup")


def cgroup_cpu_limit(root: Path = CGROUP_ROOT) -> Optional[int]:
    """Cores allowed by a cgroup CPU quota (v2 ``cpu.max`` or v1 ``cfs_quota_us``), rounded up; None if unlimited."""
    try:
        quota, period = (root / "cpu.max").read_text().split()[:2]
        if quota != "max":
            return max(1, math.ceil(int(quota) / int(period)))
        return None
    except (OSError, ValueError):
        pass
    try:
        quota_us = int((root / "cpu" / "cpu.cfs_quota_us").read_text())
        period_us = int((root / "cpu" / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return max(1, math.ceil(quota_us / period_us)) if quota_us > 0 and period_us > 0 else None


def available_cores(root: Path = CGROUP_ROOT) -> int:
    """Cores this process may run on: its affinity mask, capped by a cgroup CPU quota."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    limit = cgroup_cpu_limit(root)
    return max(1, min(cores, limit) if limit else cores)


def threads_to_set(
    requested: Optional[int], current: int, available: int, environ: Mapping[str, str]
) -> Optional[int]:
    """The thread count to set, or None to leave torch as it is."""
    if requested is not None:
        return requested if requested != current else None
    if any(environ.get(name) for name in THREAD_ENV_VARS):
        return None
    return available if current > available else None


def configure_torch_threads(requested: Optional[int] = None) -> int:
    """Apply :func:`threads_to_set` to torch's intra-op pool; returns the pool size in use."""
    import torch

    current = torch.get_num_threads()
    target = threads_to_set(requested, current, available_cores(), os.environ)
    if target is not None:
        torch.set_num_threads(target)
        logger.debug("torch CPU threads: %d -> %d", current, target)
    return torch.get_num_threads()
