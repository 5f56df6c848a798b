"""Benchmark data: the VidDiffBench loader, the synthetic benchmark, and dataset checks."""

from viddiff.data.viddiffbench import Dataset, load_dataset, parse_row

__all__ = ["Dataset", "load_dataset", "parse_row"]
