"""VidDiffBench evaluation: closed accuracy, open recall@N_diff with an LLM judge, reports.

See ``closed.py`` and ``open.py`` for the protocol; ``viddiff eval`` is in ``cli.py``.
"""

from viddiff.eval.closed import ClosedMetrics, ClosedRecord, score_closed
from viddiff.eval.open import OpenMetrics, OpenRecord, score_open
from viddiff.eval.predictions import load_predictions
from viddiff.eval.prompts import PROMPT_VERSION
from viddiff.eval.report import format_table, write_report
from viddiff.eval.runner import evaluate, evaluate_dataset

__all__ = [
    "PROMPT_VERSION",
    "ClosedMetrics",
    "ClosedRecord",
    "OpenMetrics",
    "OpenRecord",
    "evaluate",
    "evaluate_dataset",
    "format_table",
    "load_predictions",
    "score_closed",
    "score_open",
    "write_report",
]
