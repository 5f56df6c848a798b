"""Evaluation: VidDiffBench closed accuracy and open recall@N_diff, ViDiC-1K checklist accuracy, reports.

See ``closed.py``, ``open.py`` and ``vidic.py`` for the protocols; ``viddiff eval`` is in ``cli.py``.
"""

from viddiff.eval.closed import ClosedMetrics, ClosedRecord, score_closed
from viddiff.eval.open import OpenMetrics, OpenRecord, score_open
from viddiff.eval.predictions import load_predictions
from viddiff.eval.prompts import PROMPT_VERSION
from viddiff.eval.report import format_table, write_report
from viddiff.eval.runner import evaluate, evaluate_dataset
from viddiff.eval.vidic import VidicMetrics, evaluate_vidic, load_responses, score_vidic

__all__ = [
    "PROMPT_VERSION",
    "ClosedMetrics",
    "ClosedRecord",
    "OpenMetrics",
    "OpenRecord",
    "VidicMetrics",
    "evaluate",
    "evaluate_dataset",
    "evaluate_vidic",
    "format_table",
    "load_predictions",
    "load_responses",
    "score_closed",
    "score_open",
    "score_vidic",
    "write_report",
]
