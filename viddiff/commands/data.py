"""``viddiff data synth|check|download``: the benchmark plug-in's data tools."""

from __future__ import annotations

import argparse
from pathlib import Path

from viddiff import benchmarks
from viddiff.config import config_from_args
from viddiff.data.check import check_dataset


def cli_synth(args: argparse.Namespace) -> int:
    """Write the synthetic fixture of ``--benchmark``, then read it back with the real loader as a check."""
    for line in benchmarks.get(args.benchmark).write_synthetic(Path(args.out), pairs=args.pairs, seed=args.seed):
        print(line)
    return 0


def cli_check(args: argparse.Namespace) -> int:
    """Exit 1 and list every missing or unreadable video with how to get it, or confirm all are readable."""
    cfg = config_from_args(args)
    benchmark = benchmarks.of(cfg)
    dataset = benchmark.load(cfg, args.split)
    problems = check_dataset(
        dataset, lambda sample: benchmark.video_advice(sample, dataset, cfg), backend=cfg.data.video_backend
    )
    for p in problems:
        print(f"{p.sample_key} video {p.video}: {p.problem}: {p.path} -> {p.advice}")
    for note in benchmark.check_notes(dataset):
        print(note)
    n_videos = len({ref.path for sample in dataset for side in sample.videos for ref in (side, *side.views)})
    if problems:
        print(f"{len({p.path for p in problems})} of {n_videos} videos cannot be used")
        return 1
    print(f"all {n_videos} videos readable")
    return 0


def cli_download(args: argparse.Namespace) -> int:
    """Fetch the archives the benchmark ships; print the steps for videos owned by others."""
    cfg = config_from_args(args)
    return benchmarks.of(cfg).download(cfg, args.split, args.domain or [], args.keep_archives)
