"""``viddiff eval``: score a VidDiffBench predictions file or a ViDiC-1K response file.

VidDiffBench (``--mode closed|open``): the official predictions format.
ViDiC-1K (``--benchmark vidic``): a response file, i.e. the ``predictions.json``
that ``viddiff run --benchmark vidic`` writes (``[{"id", "response"}, ...]``), a
mapping ``{sample_key: text}``, or a ViDiC-1K repository response list; see
``viddiff.eval.vidic_responses``.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from viddiff.config import config_from_args, resolve_mode
from viddiff.data import load_benchmark
from viddiff.eval.report import METRICS_FILE, REPORT_FILE, format_table, records_file, write_report
from viddiff.eval.runner import evaluate_dataset

logger = logging.getLogger(__name__)


def cli_eval(args: argparse.Namespace) -> int:
    """Validate, score (describe mode for ViDiC-1K), print the tables, write the report files.

    Files go to ``--output``, or next to the predictions file when it is not
    given, so scoring a run directory's ``predictions.json`` updates that run.
    """
    cfg = config_from_args(args)
    mode = resolve_mode(cfg, args.mode)
    dataset = load_benchmark(cfg, splits=args.split, fetch_videos=False)  # scoring reads only text
    predictions = Path(args.predictions)
    metrics = evaluate_dataset(dataset, predictions, mode, cfg)
    print(format_table(metrics), end="")
    out_dir = Path(args.output) if args.output else predictions.absolute().parent
    write_report(out_dir, metrics, cfg=cfg, dataset_source=dataset.source, dataset_revision=dataset.revision)
    logger.info("wrote %s, %s and %s to %s", METRICS_FILE, records_file(metrics), REPORT_FILE, out_dir)
    return 0
