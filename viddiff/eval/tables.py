"""Plain-text and Markdown tables shared by every benchmark's reports."""

from __future__ import annotations

from typing import Optional


def pct(x: Optional[float]) -> str:
    """A rate as a percentage with one decimal, ``-`` when undefined."""
    return "-" if x is None else f"{100 * x:.1f}"


def signed_pct(x: Optional[float]) -> str:
    """A difference of rates in percentage points with its sign (``+4.2``), ``-`` when undefined."""
    return "-" if x is None else f"{100 * x:+.1f}"


def text_table(head: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(head, *rows)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(head, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)


def _md_cell(value: str) -> str:
    return value.replace("|", "\\|").replace("\n", " ")


def md_table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(_md_cell(h) for h in head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def console_text(markdown: str) -> str:
    """Markdown written for ``report.md`` as the console shows it: tables aligned as :func:`text_table` draws
    them, headings without their ``#``, code spans without backticks."""
    out: list[str] = []
    table: list[list[str]] = []
    for line in [*markdown.splitlines(), ""]:
        if line.startswith("|") and line.rstrip().endswith("|"):
            cells = [c.strip().replace("\\|", "|") for c in _split_row(line.strip()[1:-1])]
            if not all(set(c) <= {"-", ":"} and c for c in cells):  # not the |---| line
                table.append(cells)
            continue
        if table:
            out.append(text_table(table[0], table[1:]))
            table = []
        out.append(line.lstrip("#").strip() if line.startswith("#") else line.replace("`", ""))
    return "\n".join(out).rstrip("\n")


def _split_row(row: str) -> list[str]:
    """A Markdown table row's cells (``\\|`` is a pipe inside a cell)."""
    cells, current, escaped = [], "", False
    for char in row:
        if char == "|" and not escaped:
            cells.append(current)
            current = ""
        else:
            current += char
        escaped = char == "\\" and not escaped
    return [*cells, current]
