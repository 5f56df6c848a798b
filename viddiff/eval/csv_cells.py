"""Per-item CSV files that are safe to open in a spreadsheet.

Descriptions come from datasets and model answers, i.e. from strangers. A
spreadsheet treats a cell starting with ``=``, ``+``, ``-`` or ``@`` (or a
tab or carriage return before one) as a formula, which can run commands or
leak data when the file is opened. Such text cells get a leading ``'``,
which spreadsheets show as plain text; numbers are written as they are.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any, Iterable

from viddiff.store import write_text_atomic

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """``value`` as a spreadsheet shows it literally (only text cells can be formulas)."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def write_records_csv(path: Path, fieldnames: list[str], rows: Iterable[dict[str, Any]]) -> None:
    """Header plus one escaped row per record, written atomically."""
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=fieldnames)
    writer.writeheader()
    writer.writerows({k: safe_cell(v) for k, v in row.items()} for row in rows)
    write_text_atomic(path, buffer.getvalue())
