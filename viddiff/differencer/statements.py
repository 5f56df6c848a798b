"""The one rule for which text of a difference a model is asked about.

VidDiff's differencer and the LMM baselines must show a VLM the same text for the same difference, or
their accuracies are not comparable. By default that is the ``description``: the text the benchmark
scores (open mode matches it) and the text the authors' released differencer ended up sending. The
shorter ``query_string`` is an option (``differencer.statement`` / ``baseline.statement``).
"""

from __future__ import annotations

from viddiff.config import Statement
from viddiff.schema import Difference


def statement_text(difference: Difference, which: Statement) -> str:
    """The statement shown to the VLM; a missing or blank ``query_string`` falls back to the description."""
    if which == "query_string" and difference.query_string and difference.query_string.strip():
        return difference.query_string.strip()
    return difference.description
