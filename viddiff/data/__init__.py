"""Benchmark data: the VidDiffBench loader, the synthetic benchmark, video downloads and dataset checks.

Which benchmark a command means, and its loader, is the business of ``viddiff.benchmarks``.
"""

from viddiff.data.dataset import Dataset
from viddiff.data.viddiffbench import load_dataset, parse_row

__all__ = ["Dataset", "load_dataset", "parse_row"]
