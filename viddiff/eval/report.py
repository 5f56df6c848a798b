"""Evaluation outputs: ``metrics.json``, ``differences.csv``, ``report.md``, console tables.

Everything needed to interpret or reproduce a number is written next to it
(judge and flip models, prompt version, seed, dataset source and revision),
because an open-mode recall without its judge is not comparable to anything.
"""

from __future__ import annotations

import csv
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional, Union

from viddiff.config import Config
from viddiff.eval.closed import ClosedMetrics, ClosedRecord
from viddiff.eval.open import OpenMetrics, OpenRecord
from viddiff.eval.stats import Accuracy

Metrics = Union[ClosedMetrics, OpenMetrics]

METRICS_FILE = "metrics.json"
DIFFERENCES_FILE = "differences.csv"
REPORT_FILE = "report.md"


def write_report(
    out_dir: Path, metrics: Metrics, *, cfg: Config, dataset_source: str, dataset_revision: Optional[str]
) -> None:
    """Write the three report files into ``out_dir`` (created if needed)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    summary = metrics_summary(metrics, cfg=cfg, dataset_source=dataset_source, dataset_revision=dataset_revision)
    (out_dir / METRICS_FILE).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    _write_csv(out_dir / DIFFERENCES_FILE, metrics)
    (out_dir / REPORT_FILE).write_text(format_markdown(metrics, summary), encoding="utf-8")


def metrics_summary(
    metrics: Metrics, *, cfg: Config, dataset_source: str, dataset_revision: Optional[str]
) -> dict[str, Any]:
    """The ``metrics.json`` payload: metrics without per-difference records, plus provenance."""
    from viddiff import __version__

    is_open = isinstance(metrics, OpenMetrics)
    counts: dict[str, int] = {
        "samples": metrics.n_samples,
        "differences": metrics.n_differences,
        "counted": metrics.overall.n,
    }
    if is_open:
        counts.update(
            predictions=metrics.n_predictions,
            unmatched_predictions=metrics.unmatched_predictions,
            judge_issues=len(metrics.judge_issues),
            truncated_samples=len(metrics.truncations),
        )
    return {
        "mode": metrics.mode,
        "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "viddiff_version": __version__,
        "dataset": {"source": dataset_source, "revision": dataset_revision, "splits": list(metrics.splits)},
        "seed": cfg.run.seed,
        "judge": cfg.eval.judge.model_dump(mode="json", exclude={"endpoint"}) if is_open else None,
        "flip": cfg.eval.flip.model_dump(mode="json", exclude={"endpoint"}) if is_open else None,
        "prompt_version": metrics.prompt_version if is_open else None,
        "eval_settings": (
            {"flip_batch_size": cfg.eval.flip_batch_size, "n_diff_policy": cfg.eval.n_diff_policy, "max_reasks": cfg.eval.max_reasks}
            if is_open
            else None
        ),
        "counts": counts,
        "metrics": metrics.model_dump(mode="json", exclude={"records"}),
    }


def _write_csv(path: Path, metrics: Metrics) -> None:
    record_type = OpenRecord if isinstance(metrics, OpenMetrics) else ClosedRecord
    fields = list(record_type.model_fields)
    rows = [r.model_dump(mode="json") for r in metrics.records]
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


# ---------------------------------------------------------------------- cells


def _pct(x: Optional[float]) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def _p(x: Optional[float]) -> str:
    return "-" if x is None else f"{x:.3g}"


def _ci(a: Accuracy) -> str:
    return "-" if a.ci_low is None or a.ci_high is None else f"[{_pct(a.ci_low)}, {_pct(a.ci_high)}]"


_CLOSED_HEAD = ["n", "correct", "acc %", "p (vs 50%)", "95% CI"]
_OPEN_HEAD = ["n", "found", "recall %", "matched %", "wrong letter %", "not matched %", "flip unverified %"]


def _closed_cells(a: Accuracy) -> list[str]:
    return [str(a.n), str(a.correct), _pct(a.accuracy), _p(a.p_value), _ci(a)]


def _open_cells(s: Any) -> list[str]:
    return [
        str(s.n),
        str(s.found),
        _pct(s.recall),
        _pct(s.matched_rate),
        _pct(s.wrong_letter_rate),
        _pct(s.not_matched_rate),
        _pct(s.flip_unverified_rate),
    ]


def _cells(metrics: Metrics):
    return (_OPEN_HEAD, _open_cells) if isinstance(metrics, OpenMetrics) else (_CLOSED_HEAD, _closed_cells)


def _split_rows(metrics: Metrics) -> tuple[list[str], list[list[str]]]:
    head, cells = _cells(metrics)
    rows = [[split, *cells(stats)] for split, stats in metrics.splits.items()]
    blank = [""] * len(head)
    blank[2] = _pct(metrics.avg)  # column 2 is accuracy (closed) / recall (open) in both headers
    rows.append(["Avg", *blank])
    rows.append(["all (pooled)", *cells(metrics.overall)])
    return ["split", *head], rows


def _action_rows(metrics: Metrics) -> tuple[list[str], list[list[str]]]:
    head, cells = _cells(metrics)
    rows = [[r.split, r.action, r.action_name, *cells(r.stats)] for r in metrics.by_action]
    return ["split", "action", "name", *head], rows


def _difference_rows(metrics: Metrics) -> tuple[list[str], list[list[str]]]:
    head, cells = _cells(metrics)
    rows = [[r.action, r.key, r.name, r.description, *cells(r.stats)] for r in metrics.by_difference]
    return ["action", "key", "name", "description", *head], rows


def _title(metrics: Metrics) -> str:
    if isinstance(metrics, OpenMetrics):
        return (
            f"Open recall@N_diff (judge {metrics.judge_model}, flip {metrics.flip_model}, "
            f"prompts {metrics.prompt_version})"
        )
    return "Closed accuracy (ground truth a/b only; chance = 50%)"


def _notes(metrics: Metrics) -> list[str]:
    if isinstance(metrics, OpenMetrics):
        notes = [
            f"{metrics.n_predictions} predicted differences, {metrics.unmatched_predictions} matched to no ground truth.",
        ]
        if metrics.judge_issues:
            notes.append(f"{len(metrics.judge_issues)} judge answer(s) stayed invalid after re-asks (see metrics.json).")
        if metrics.truncations:
            notes.append(f"{len(metrics.truncations)} sample(s) truncated to N_diff predictions.")
        return notes
    b = metrics.balance
    return [
        f"Prediction balance: 'a' in {_pct(b.pred_a_fraction)}% of a/b predictions vs {_pct(b.gt_a_fraction)}% "
        f"of ground truth; {b.pred_c} 'c', {b.pred_null} null, {b.missing} missing (all counted wrong)."
    ]


# ---------------------------------------------------------------------- text tables


def _text_table(head: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(head, *rows)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(head, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)


def format_table(metrics: Metrics) -> str:
    """Console summary: metrics by split with Avg, then per action."""
    parts = [_title(metrics), _text_table(*_split_rows(metrics)), *_notes(metrics)]
    if metrics.by_action:
        parts += ["", "Per action", _text_table(*_action_rows(metrics))]
    return "\n".join(parts) + "\n"


def _md_cell(value: str) -> str:
    return value.replace("|", "\\|").replace("\n", " ")


def _md_table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(_md_cell(h) for h in head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def format_markdown(metrics: Metrics, summary: dict[str, Any]) -> str:
    """``report.md``: provenance, then split, action and difference tables."""
    dataset = summary["dataset"]
    lines = [
        f"# VidDiffBench evaluation ({metrics.mode})",
        "",
        f"- dataset: {dataset['source']} (revision {dataset['revision'] or 'unspecified'})",
        f"- samples: {metrics.n_samples}; differences: {metrics.n_differences}; counted: {metrics.overall.n}",
        f"- seed: {summary['seed']}; evaluated {summary['timestamp']} with viddiff {summary['viddiff_version']}",
    ]
    if isinstance(metrics, OpenMetrics):
        lines.append(
            f"- judge: {metrics.judge_model}; flip check: {metrics.flip_model}; prompt version: {metrics.prompt_version}"
        )
    lines += ["", f"## {_title(metrics)}", "", _md_table(*_split_rows(metrics)), ""]
    lines += [f"{note}" for note in _notes(metrics)]
    lines += ["", "## Per action", "", _md_table(*_action_rows(metrics))]
    lines += ["", "## Per difference", "", _md_table(*_difference_rows(metrics))]
    if isinstance(metrics, OpenMetrics) and metrics.judge_issues:
        lines += ["", "## Judge issues", ""]
        lines += [
            f"- item {i.index} ({i.sample_key}), {i.stage}, keys {', '.join(i.gt_keys) or '-'}: {i.problem}"
            for i in metrics.judge_issues
        ]
    if isinstance(metrics, OpenMetrics) and metrics.truncations:
        lines += ["", "## Truncated to N_diff", ""]
        lines += [
            f"- item {t.index} ({t.sample_key}): {t.given} > {t.allowed}, dropped keys {', '.join(t.dropped_keys)}"
            for t in metrics.truncations
        ]
    return "\n".join(lines) + "\n"
