"""Evaluation outputs: ``metrics.json``, a per-item CSV, ``report.md``, console tables.

:func:`write_scored` is what every benchmark's report shares (the failed-samples note, atomic writes); the
rest renders VidDiffBench's closed and open metrics (``differences.csv``). Everything needed to
interpret or reproduce a number is written next to it (judge and flip models, prompt version, seed,
dataset source and revision), because an open-mode recall without its judge is not comparable to anything.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional, Sequence, Union

from viddiff.config import Config
from viddiff.eval.closed import ClosedMetrics, ClosedRecord
from viddiff.eval.csv_cells import write_records_csv
from viddiff.eval.open import OpenMetrics, OpenRecord
from viddiff.eval.stats import Accuracy
from viddiff.eval.tables import md_table, pct, text_table
from viddiff.store import output_error, write_text_atomic
from viddiff.console import count_of

BenchMetrics = Union[ClosedMetrics, OpenMetrics]
"""VidDiffBench metrics."""

METRICS_FILE = "metrics.json"
DIFFERENCES_FILE = "differences.csv"
REPORT_FILE = "report.md"


def write_report(
    out_dir: Path,
    metrics: BenchMetrics,
    *,
    cfg: Config,
    dataset_source: str,
    dataset_revision: Optional[str],
    failed_samples: Sequence[str] = (),
) -> None:
    """Write VidDiffBench's ``metrics.json``, ``differences.csv`` and ``report.md`` into ``out_dir``."""
    make_output_dir(out_dir)
    summary = metrics_summary(metrics, cfg=cfg, dataset_source=dataset_source, dataset_revision=dataset_revision)
    _write_csv(Path(out_dir) / DIFFERENCES_FILE, metrics)
    write_scored(out_dir, summary, format_markdown(metrics, summary), metrics.n_samples, failed_samples)


def provenance(metrics: Any, dataset_source: str, dataset_revision: Optional[str]) -> dict[str, Any]:
    """The head of a benchmark plug-in's ``metrics.json``: what was scored, when, by which viddiff, on which data."""
    from viddiff import __version__

    return {
        "mode": metrics.mode,
        "benchmark": metrics.benchmark,
        "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "viddiff_version": __version__,
        "dataset": {"source": dataset_source, "revision": dataset_revision},
    }


def make_output_dir(out_dir: Path) -> None:
    try:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise output_error(Path(out_dir), exc) from None


def write_scored(
    out_dir: Path,
    summary: dict[str, Any],
    markdown: str,
    n_samples: int,
    failed_samples: Sequence[str] = (),
    failed_effect: str = "count as wrong",
) -> None:
    """Write ``metrics.json`` (``summary``) and ``report.md`` (``markdown``) atomically, for any benchmark.

    ``failed_samples``: samples the method never finished (their predictions are empty and, by default, count
    wrong: ``failed_effect`` says what the benchmark's scorer does with them); both files say how many.
    """
    if failed_samples:
        summary["counts"]["failed_samples"] = len(failed_samples)
        summary["failed_samples"] = list(failed_samples)
        note = (
            f"**{len(failed_samples)} of {n_samples} samples failed** (see errors.json): their predictions "
            f"are null and {failed_effect}; `--resume` retries them."
        )
        markdown = under_title(markdown, note)
    write_text_atomic(Path(out_dir) / METRICS_FILE, json.dumps(summary, indent=2) + "\n")
    write_text_atomic(Path(out_dir) / REPORT_FILE, markdown)


def note_invalid_answers(out_dir: Path, invalid: dict[str, list[str]], n_verdicts: int) -> None:
    """Add a run's verdicts that never got a valid answer to the ``metrics.json`` and ``report.md`` just written.

    ``invalid``: sample key → difference keys. The predictions file holds only ``null`` for them, so scoring
    alone cannot tell them from a method's deliberate abstention; the run that saw the answers says it here.
    """
    n_invalid = sum(len(keys) for keys in invalid.values())
    metrics_path, report_path = Path(out_dir) / METRICS_FILE, Path(out_dir) / REPORT_FILE
    summary = json.loads(metrics_path.read_text(encoding="utf-8"))
    summary["counts"].update(invalid_answers=n_invalid, samples_with_invalid_answers=len(invalid))
    summary["invalid_answers"] = {key: list(keys) for key, keys in invalid.items()}
    note = (
        f"**{count_of(n_invalid, 'answer')} stayed invalid** (of {n_verdicts} verdicts, in {len(invalid)} samples): "
        "the model never gave a valid answer after the re-asks; their predictions are null and count as wrong "
        "(`invalid_answers` in metrics.json, the answers under `raw_answers` in samples.jsonl)."
    )
    markdown = under_title(report_path.read_text(encoding="utf-8"), note)
    write_text_atomic(metrics_path, json.dumps(summary, indent=2) + "\n")
    write_text_atomic(report_path, markdown)


def note_in_report(out_dir: Path, note: str) -> None:
    """Put ``note`` (markdown) under the title of the ``report.md`` just written (e.g. the stand-in notice)."""
    path = Path(out_dir) / REPORT_FILE
    write_text_atomic(path, under_title(path.read_text(encoding="utf-8"), note))


def note_in_metrics(out_dir: Path, key: str, value: Any) -> None:
    """Add ``key`` to the ``metrics.json`` just written (e.g. ``stand_ins``: who produced its numbers)."""
    path = Path(out_dir) / METRICS_FILE
    summary = json.loads(path.read_text(encoding="utf-8"))
    summary[key] = value
    write_text_atomic(path, json.dumps(summary, indent=2) + "\n")


def under_title(markdown: str, note: str) -> str:
    """``markdown`` with ``note`` as the first paragraph under its title line."""
    title, _, rest = markdown.partition("\n")
    return f"{title}\n\n{note}\n{rest}"


def metrics_summary(
    metrics: BenchMetrics, *, cfg: Config, dataset_source: str, dataset_revision: Optional[str]
) -> dict[str, Any]:
    """VidDiffBench ``metrics.json`` payload: metrics without per-difference records, plus provenance."""
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
        "prompt_sha256": metrics.prompt_sha256 if is_open else None,
        "prompt_sources": metrics.prompt_sources if is_open else None,
        "eval_settings": (
            {"flip_batch_size": cfg.eval.flip_batch_size, "n_diff_policy": cfg.eval.n_diff_policy, "max_reasks": cfg.eval.max_reasks}
            if is_open
            else None
        ),
        "counts": counts,
        "metrics": metrics.model_dump(mode="json", exclude={"records"}),
    }


def _write_csv(path: Path, metrics: BenchMetrics) -> None:
    record_type = OpenRecord if isinstance(metrics, OpenMetrics) else ClosedRecord
    fields = list(record_type.model_fields)
    write_records_csv(path, fields, (r.model_dump(mode="json") for r in metrics.records))


# ---------------------------------------------------------------------- cells


def _p(x: Optional[float]) -> str:
    return "-" if x is None else f"{x:.3g}"


def _ci(a: Accuracy) -> str:
    return "-" if a.ci_low is None or a.ci_high is None else f"[{pct(a.ci_low)}, {pct(a.ci_high)}]"


_CLOSED_HEAD = ["n", "correct", "acc %", "p (vs 50%)", "95% CI"]
_OPEN_HEAD = ["n", "found", "recall %", "matched %", "wrong letter %", "not matched %", "flip unverified %"]


def _closed_cells(a: Accuracy) -> list[str]:
    return [str(a.n), str(a.correct), pct(a.accuracy), _p(a.p_value), _ci(a)]


def _open_cells(s: Any) -> list[str]:
    return [
        str(s.n),
        str(s.found),
        pct(s.recall),
        pct(s.matched_rate),
        pct(s.wrong_letter_rate),
        pct(s.not_matched_rate),
        pct(s.flip_unverified_rate),
    ]


def _cells(metrics: BenchMetrics):
    return (_OPEN_HEAD, _open_cells) if isinstance(metrics, OpenMetrics) else (_CLOSED_HEAD, _closed_cells)


def split_rows(metrics: BenchMetrics) -> tuple[list[str], list[list[str]]]:
    head, cells = _cells(metrics)
    rows = [[split, *cells(stats)] for split, stats in metrics.splits.items()]
    blank = [""] * len(head)
    blank[2] = pct(metrics.avg)  # column 2 is accuracy (closed) / recall (open) in both headers
    rows.append(["Avg", *blank])
    rows.append(["all (pooled)", *cells(metrics.overall)])
    return ["split", *head], rows


def action_rows(metrics: BenchMetrics) -> tuple[list[str], list[list[str]]]:
    head, cells = _cells(metrics)
    rows = [[r.split, r.action, r.action_name, *cells(r.stats)] for r in metrics.by_action]
    return ["split", "action", "name", *head], rows


def _difference_rows(metrics: BenchMetrics) -> tuple[list[str], list[list[str]]]:
    head, cells = _cells(metrics)
    rows = [[r.action, r.key, r.name, r.description, *cells(r.stats)] for r in metrics.by_difference]
    return ["action", "key", "name", "description", *head], rows


def title(metrics: BenchMetrics) -> str:
    if isinstance(metrics, OpenMetrics):
        return (
            f"Open recall@N_diff (judge {metrics.judge_model}, flip {metrics.flip_model}, "
            f"prompts {metrics.prompt_version})"
        )
    return "Closed accuracy (ground truth a/b only; chance = 50%)"


def _notes(metrics: BenchMetrics) -> list[str]:
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
        f"Prediction balance: 'a' in {pct(b.pred_a_fraction)}% of a/b predictions vs {pct(b.gt_a_fraction)}% "
        f"of ground truth; {b.pred_c} 'c', {b.pred_null} null, {b.missing} missing (all counted wrong)."
    ]


# ---------------------------------------------------------------------- text tables


def format_table(metrics: BenchMetrics) -> str:
    """Console summary: metrics by split with Avg, then per action."""
    parts = [title(metrics), text_table(*split_rows(metrics)), *_notes(metrics)]
    if metrics.by_action:
        parts += ["", "Per action", text_table(*action_rows(metrics))]
    return "\n".join(parts) + "\n"


def format_markdown(metrics: BenchMetrics, summary: dict[str, Any]) -> str:
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
            f"- judge: {metrics.judge_model}; flip check: {metrics.flip_model}; prompt version: {metrics.prompt_version} "
            f"(templates sha256 {metrics.prompt_sha256[:12]})"
        )
    lines += ["", f"## {title(metrics)}", "", md_table(*split_rows(metrics)), ""]
    lines += [f"{note}" for note in _notes(metrics)]
    lines += ["", "## Per action", "", md_table(*action_rows(metrics))]
    lines += ["", "## Per difference", "", md_table(*_difference_rows(metrics))]
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
