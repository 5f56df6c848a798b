"""Benchmark data: the VidDiffBench and ViDiC-1K loaders, the synthetic benchmark, video downloads and dataset checks."""

from __future__ import annotations

from typing import Optional, Sequence

from viddiff.config import Config
from viddiff.data.viddiffbench import Dataset, load_dataset, parse_row

__all__ = ["Dataset", "load_benchmark", "load_dataset", "parse_row"]


def load_benchmark(cfg: Config, splits: Optional[Sequence[str]] = None, *, fetch_videos: bool = True) -> Dataset:
    """The dataset that ``cfg.data.benchmark`` names, filtered like every command filters it.

    ``fetch_videos=False`` when only the annotations are needed (scoring): ViDiC-1K otherwise
    downloads the selected pairs' videos from the hub.
    """
    if cfg.data.benchmark == "vidic":
        from viddiff.data.vidic import load_vidic

        return load_vidic(cfg.data, cfg.vidic, splits=splits, fetch_videos=fetch_videos)
    return load_dataset(cfg.data, splits=splits)
