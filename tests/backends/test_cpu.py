"""Thread-pool sizing for CPU inference: lower to the granted cores, never clobber a user's choice."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from viddiff.backends.cpu import available_cores, cgroup_cpu_limit, threads_to_set


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.parametrize(
    "cpu_max, expected", [("200000 100000\n", 2), ("150000 100000\n", 2), ("50000 100000\n", 1), ("max 100000\n", None)]
)
def test_cgroup_v2_quota(tmp_path: Path, cpu_max: str, expected):
    write(tmp_path / "cpu.max", cpu_max)
    assert cgroup_cpu_limit(tmp_path) == expected


def test_cgroup_v1_quota(tmp_path: Path):
    write(tmp_path / "cpu" / "cpu.cfs_quota_us", "300000\n")
    write(tmp_path / "cpu" / "cpu.cfs_period_us", "100000\n")
    assert cgroup_cpu_limit(tmp_path) == 3
    write(tmp_path / "cpu" / "cpu.cfs_quota_us", "-1\n")
    assert cgroup_cpu_limit(tmp_path) is None


def test_no_cgroup_files_means_no_limit(tmp_path: Path):
    assert cgroup_cpu_limit(tmp_path) is None
    assert available_cores(tmp_path) == len(os.sched_getaffinity(0))


def test_quota_caps_the_affinity_mask(tmp_path: Path):
    write(tmp_path / "cpu.max", "100000 100000\n")
    assert available_cores(tmp_path) == 1


@pytest.mark.parametrize(
    "requested, current, available, environ, expected",
    [
        (None, 16, 2, {}, 2),  # torch counted the host's cores: lower to the granted ones
        (None, 2, 2, {}, None),  # already right
        (None, 1, 4, {}, None),  # a smaller pool someone chose is kept, never raised
        (None, 16, 2, {"OMP_NUM_THREADS": "16"}, None),  # the user's environment wins
        (None, 16, 2, {"MKL_NUM_THREADS": "8"}, None),
        (3, 16, 2, {"OMP_NUM_THREADS": "1"}, 3),  # the config names a size: that size
        (2, 2, 2, {}, None),
    ],
)
def test_threads_to_set(requested, current, available, environ, expected):
    assert threads_to_set(requested, current, available, environ) == expected


def _threads_after_loading(extra_env: dict[str, str], setup: str) -> int:
    """torch's pool size after an embedder loads, in a fresh process (the pool is process-global)."""
    code = textwrap.dedent(
        f"""
        import numpy as np, torch
        from viddiff.backends.clip import ClipEmbedder
        from viddiff.config import ClipConfig
        from viddiff.testing import TINY_CLIP_CONFIG, TINY_CLIP_MODEL
        {setup}
        cfg = ClipConfig(model=TINY_CLIP_MODEL, arch_config=str(TINY_CLIP_CONFIG), pretrained=None, device="cpu")
        ClipEmbedder(cfg).embed_images(np.zeros((1, 8, 8, 3), np.uint8))
        print(torch.get_num_threads())
        """
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2]), **extra_env}
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        if name not in extra_env:
            env.pop(name, None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1])


@pytest.mark.slow
def test_loading_an_embedder_fits_the_pool_and_respects_the_user():
    cores = available_cores()
    assert _threads_after_loading({}, f"torch.set_num_threads({cores + 6})") == cores
    assert _threads_after_loading({"OMP_NUM_THREADS": "1"}, "") == 1
