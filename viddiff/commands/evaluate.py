"""``viddiff eval``: score a predictions file in the benchmark's own format."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from viddiff import benchmarks
from viddiff.config import config_from_args
from viddiff.eval.report import METRICS_FILE, REPORT_FILE

logger = logging.getLogger(__name__)


def cli_eval(args: argparse.Namespace) -> int:
    """Validate, score, print the tables, write the report files; exit 1 when the scores are incomplete.

    Files go to ``--output``, or next to the predictions file when it is not
    given, so scoring a run directory's ``predictions.json`` updates that run.
    """
    cfg = config_from_args(args)
    benchmark = benchmarks.of(cfg)
    mode = benchmark.resolve_mode(args.mode)
    dataset = benchmark.load(cfg, args.split, fetch_videos=False)  # scoring reads only text
    benchmark.check_selection(dataset, mode)
    predictions = Path(args.predictions)
    metrics = benchmark.score(dataset, predictions, mode, cfg)
    print(benchmark.format_table(metrics), end="")
    out_dir = Path(args.output) if args.output else predictions.absolute().parent
    benchmark.write_report(out_dir, metrics, cfg=cfg, dataset_source=dataset.source, dataset_revision=dataset.revision)
    logger.info("wrote %s, %s and %s to %s", METRICS_FILE, benchmark.records_file, REPORT_FILE, out_dir)
    incomplete = benchmark.incomplete_scores(metrics, out_dir / METRICS_FILE)
    if incomplete:
        print(f"viddiff: {incomplete}")
        return 1
    return 0
