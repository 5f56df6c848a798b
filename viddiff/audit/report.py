"""What an audit writes and prints: ``metrics.json``, ``report.md``, ``differences.csv`` and a console table.

Every number is shown with its ``n`` (and in the files its 95% interval), because a flip rate over three
statements says little; the per-action and per-difference tables come worst first, so the differences a
method guesses on are at the top.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional

from viddiff.audit.metrics import AuditMetrics, AuditRecord, AuditStats, GroupStats, Rate
from viddiff.audit.runs import VARIANTS, AuditedMethod, AuditRuns
from viddiff.eval.csv_cells import write_records_csv
from viddiff.eval.tables import md_table, pct, text_table
from viddiff.report.standins import distinct, note_lines
from viddiff.report.views import StandInView
from viddiff.store import write_text_atomic
from viddiff.console import count_of

METRICS_FILE = "metrics.json"
REPORT_FILE = "report.md"
DIFFERENCES_FILE = "differences.csv"
_FLIP = {"a": "b", "b": "a", "c": "c"}

READING = [
    (
        "**flip**: of the statements answered a/b in the original order, the share whose answer flips when A and "
        "B are swapped. 100% = the answers follow the videos; near 0 = they follow the position."
    ),
    (
        "**same: decisive**: of the statements answered about two identical videos, the share answered a or b "
        "instead of c. 0% = no invented differences. **same: a**: the share of a among those a/b answers (an "
        "unbiased method splits evenly)."
    ),
    (
        "**a**: the share of a among the a/b answers in the original order, beside the ground truth's share of a "
        "over the same statements (**gt a**); **a diff** is their difference (near 0 balanced, near ±1 an answer "
        "bias)."
    ),
    (
        "**acc**, **acc swapped**: accuracy in the original order and with A and B swapped (against the flipped "
        "ground truth); **debiased**: their mean. **pair**: right in both orders; a guesser scores about 25%, a "
        "position-biased method about 0."
    ),
    (
        "A statement without a valid answer counts as wrong and as not flipped; the same-video rates leave it out "
        "(see `unanswered` in metrics.json)."
    ),
]


def audit_summary(metrics: AuditMetrics, method: AuditedMethod, audit: AuditRuns) -> dict[str, Any]:
    """``metrics.json``: the audit's numbers without per-statement records, plus what produced them."""
    from viddiff import __version__

    dataset = audit.dataset
    return {
        "mode": metrics.mode,
        "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "viddiff_version": __version__,
        "method": method.label,
        "dataset": {"source": dataset.source, "revision": dataset.revision, "splits": list(metrics.splits)},
        "seed": method.cfg.run.seed,
        "same_video_forced_choice": method.forced_choice is not None,
        "notes": audit_notes(metrics, method, audit),
        "stand_ins": note_lines(audit_stand_ins(audit)),
        "runs": {
            variant: {
                "output_dir": str(run.output_dir),
                "mode": run.mode,
                "samples": run.n_samples,
                "failed_samples": run.n_failed,
            }
            for variant, run in audit.runs.items()
        },
        "counts": {"samples": len(dataset), "statements": len(metrics.records)},
        "metrics": metrics.model_dump(mode="json", exclude={"records"}),
    }


def audit_stand_ins(audit: AuditRuns) -> list[StandInView]:
    """The stand-ins behind any of the audit's runs, each once."""
    return distinct(view for run in audit.runs.values() for view in run.stand_ins)


def audit_notes(metrics: AuditMetrics, method: AuditedMethod, audit: AuditRuns) -> list[str]:
    """Caveats a reader must see next to the numbers."""
    notes = []
    if method.forced_choice:
        notes.append(f"Forced choice: {method.forced_choice}.")
    if metrics.mode == "open":
        notes.append(
            "Open mode: the statements are the method's own proposals in the original order, asked again with the "
            "videos swapped and identical; they have no ground truth, so the accuracy columns are empty."
        )
    failed = {v: r.n_failed for v, r in audit.runs.items() if r.n_failed}
    if failed:
        listed = ", ".join(f"{n} in {v}/" for v, n in failed.items())
        notes.append(
            f"Failed samples: {listed} (see each run's errors.json); their statements have no answer there, and "
            "viddiff audit --resume retries them."
        )
    return notes


def write_audit(out_dir: Path, metrics: AuditMetrics, summary: dict[str, Any]) -> None:
    write_text_atomic(out_dir / METRICS_FILE, json.dumps(summary, indent=2) + "\n")
    write_records_csv(out_dir / DIFFERENCES_FILE, CSV_FIELDS, (csv_row(r) for r in metrics.records))
    write_text_atomic(out_dir / REPORT_FILE, format_audit_markdown(metrics, summary))


CSV_FIELDS = [
    "split", "action", "action_name", "sample_key", "key", "description", "gt", "original", "swapped",
    "swapped_flipped_back", "same", "flipped", "correct_original", "correct_swapped",
]


def csv_row(r: AuditRecord) -> dict[str, Any]:
    """One statement: the answers as given, the swapped one also in the original order's terms."""
    decided = r.original in ("a", "b")
    return {
        "split": r.split,
        "action": r.action,
        "action_name": r.action_name,
        "sample_key": r.sample_key,
        "key": r.key,
        "description": r.description,
        "gt": r.gt,
        "original": r.original,
        "swapped": r.swapped,
        "swapped_flipped_back": _FLIP.get(r.swapped) if r.swapped else None,
        "same": r.same,
        "flipped": (r.swapped == _FLIP[r.original]) if decided else None,  # type: ignore[index]
        "correct_original": (r.original == r.gt) if r.labelled else None,
        "correct_swapped": (r.swapped == _FLIP[r.gt]) if r.labelled else None,  # type: ignore[index]
    }


# ---------------------------------------------------------------------- tables

_HEAD = ["n", "flip %", "same: decisive %", "same: a %", "a %", "gt a %", "a diff", "acc %", "acc swapped %",
         "debiased %", "pair %"]
"""Columns: n, swap-flip, same-video decisive and a-share, a-share, its ground-truth share and difference,
accuracy original/swapped/debiased, pair accuracy."""


def _rate(r: Rate) -> str:
    return f"{pct(r.value)} ({r.n})" if r.value is not None else "-"


def _rate_ci(r: Rate) -> str:
    if r.value is None or r.ci_low is None or r.ci_high is None:
        return "-"
    return f"{pct(r.value)} [{pct(r.ci_low)}, {pct(r.ci_high)}] ({r.n})"


def _signed(r: Rate, with_ci: bool) -> str:
    if r.value is None or r.ci_low is None or r.ci_high is None:
        return "-"
    text = f"{r.value:+.2f}"
    return f"{text} [{r.ci_low:+.2f}, {r.ci_high:+.2f}]" if with_ci else text


def _cells(s: AuditStats, with_ci: bool) -> list[str]:
    show = _rate_ci if with_ci else _rate
    return [
        str(s.n_differences),
        show(s.swap_flip_rate),
        show(s.same_video_decisive_rate),
        show(s.same_video_a_share),
        show(s.a_share),
        pct(s.gt_a_share),
        _signed(s.a_share_diff, with_ci),
        show(s.accuracy_original),
        show(s.accuracy_swapped),
        show(s.accuracy_debiased),
        show(s.pair_accuracy),
    ]


def _split_rows(metrics: AuditMetrics, with_ci: bool) -> list[list[str]]:
    rows = [[split, *_cells(stats, with_ci)] for split, stats in metrics.splits.items()]
    return rows + [["all", *_cells(metrics.overall, with_ci)]]


def _group_rows(rows: list[GroupStats], with_ci: bool) -> list[list[str]]:
    out = []
    for row in rows:
        label = [row.split, row.action, row.action_name]
        if row.key is not None:
            label += [row.key, row.description or ""]
        out.append([*label, *_cells(row.stats, with_ci)])
    return out


def _title(metrics: AuditMetrics) -> str:
    return f"Answer-consistency audit ({metrics.mode}): original order, A and B swapped, identical videos"


def format_audit_table(metrics: AuditMetrics, notes: list[str], top_actions: Optional[int] = 10) -> str:
    """Console summary: per split and overall (value and n), the worst actions, the notes."""
    parts = [_title(metrics), text_table(["split", *_HEAD], _split_rows(metrics, with_ci=False))]
    if metrics.by_action:
        shown = metrics.by_action[:top_actions] if top_actions else metrics.by_action
        more = len(metrics.by_action) - len(shown)
        parts += ["", "Per action, worst first" + (f" ({more} more in report.md)" if more > 0 else "")]
        parts.append(text_table(["split", "action", "name", *_HEAD], _group_rows(shown, with_ci=False)))
    parts += ["", *notes] if notes else []
    return "\n".join(parts) + "\n"


def format_audit_markdown(metrics: AuditMetrics, summary: dict[str, Any]) -> str:
    """``report.md``: provenance, how to read it, then split, action and difference tables (95% intervals)."""
    dataset = summary["dataset"]
    runs = summary["runs"]
    lines = [
        f"# {_title(metrics)}",
        "",
        f"- method: {summary['method']}",
        f"- dataset: {dataset['source']} (revision {dataset['revision'] or 'unspecified'})",
        f"- samples: {summary['counts']['samples']}; statements: {summary['counts']['statements']}",
        f"- seed: {summary['seed']}; audited {summary['timestamp']} with viddiff {summary['viddiff_version']}",
        *[
            f"- {VARIANTS[v][0]}: `{r['output_dir']}` "
            f"({r['mode']}, {count_of(r['samples'], 'sample')}, {r['failed_samples']} failed)"
            for v, r in runs.items()
        ],
        "",
        *[line for note in summary["notes"] for line in (f"> {note}", "")],
        "## How to read it",
        "",
        *[f"- {line}" for line in READING],
        "",
        "Cells: value in %, 95% interval, (n).",
        "",
        "## By split",
        "",
        md_table(["split", *_HEAD], _split_rows(metrics, with_ci=True)),
        "",
        "## Per action, worst first",
        "",
        md_table(["split", "action", "name", *_HEAD], _group_rows(metrics.by_action, with_ci=True)),
        "",
        "## Per difference, worst first",
        "",
        md_table(["split", "action", "name", "key", "description", *_HEAD], _group_rows(metrics.by_difference, True)),
    ]
    return "\n".join(lines) + "\n"
