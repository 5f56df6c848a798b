"""Evaluation: VidDiffBench closed accuracy and open recall@N_diff, and their reports.

See ``closed.py`` and ``open.py`` for the protocols. Other benchmarks' scorers live in their plug-ins
(``viddiff.benchmarks``), which reuse the statistics, tables and report writer here.
"""

from viddiff.eval.closed import ClosedMetrics, ClosedRecord, score_closed
from viddiff.eval.open import OpenMetrics, OpenRecord, score_open
from viddiff.eval.predictions import load_predictions
from viddiff.eval.prompts import PROMPT_VERSION
from viddiff.eval.report import format_table, write_report
from viddiff.eval.runner import evaluate

__all__ = [
    "PROMPT_VERSION",
    "ClosedMetrics",
    "ClosedRecord",
    "OpenMetrics",
    "OpenRecord",
    "evaluate",
    "format_table",
    "load_predictions",
    "score_closed",
    "score_open",
    "write_report",
]
