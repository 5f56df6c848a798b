"""ViDiC-1K outputs: the ``metrics.json`` payload, ``checklist.csv``, ``report.md`` and console tables.

Scores are shown for all pairs and without the pairs ViDiC-1K took from
VidDiffBench, so a method tuned on VidDiffBench can be reported both ways.
The judge model and prompt version go next to every number: checklist
accuracy from another judge or prompt is not comparable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

from viddiff.config import Config
from viddiff.eval.csv_cells import write_records_csv
from viddiff.eval.report import make_output_dir, provenance, write_scored
from viddiff.eval.tables import md_table, pct, text_table
from viddiff.benchmarks.vidic.scoring import CategoryScores, VidicMetrics, VidicRecord, VidicStats, VidicSubset

CHECKLIST_FILE = "checklist.csv"
REFERENCE_NOTE = (
    "Published reference (ViDiC-1K paper, GPT-5-mini judge): Gemini-2.5-Pro Avg 69.3 (Diff 66.8, Sim 76.3); "
    "humans 94.5 Avg."
)


def write_vidic_report(
    out_dir: Path,
    metrics: VidicMetrics,
    *,
    cfg: Config,
    dataset_source: str,
    dataset_revision: Optional[str],
    failed_samples: Sequence[str] = (),
) -> None:
    """Write ``metrics.json``, ``checklist.csv`` and ``report.md`` into ``out_dir``."""
    make_output_dir(out_dir)
    summary = vidic_summary(metrics, cfg=cfg, dataset_source=dataset_source, dataset_revision=dataset_revision)
    write_vidic_csv(Path(out_dir) / CHECKLIST_FILE, metrics)
    write_scored(out_dir, summary, format_vidic_markdown(metrics, summary), metrics.n_samples, failed_samples)


def vidic_summary(
    metrics: VidicMetrics, *, cfg: Config, dataset_source: str, dataset_revision: Optional[str]
) -> dict[str, Any]:
    """The ``metrics.json`` payload: metrics without per-item records, plus provenance."""
    return {
        **provenance(metrics, dataset_source, dataset_revision),
        "seed": cfg.run.seed,
        "judge": cfg.vidic.judge.model_dump(mode="json", exclude={"endpoint"}),
        "prompt_version": metrics.prompt_version,
        "prompt_sha256": metrics.prompt_sha256,
        "prompt_sources": metrics.prompt_sources,
        "eval_settings": {
            "max_reasks": cfg.eval.max_reasks,
            "empty_response": cfg.vidic.empty_response,
            "answer_reading": cfg.vidic.answer_reading,
        },
        "counts": {
            "samples": metrics.n_samples,
            "items": metrics.n_items,
            "difference_items": metrics.overall.diff.n,
            "similarity_items": metrics.overall.sim.n,
            "empty_responses": len(metrics.empty_responses),
            "judge_failures": len(metrics.judge_failures),
            "overlap_samples": len(metrics.overlap_samples),
            "items_without_overlap": metrics.without_overlap.avg.n,
        },
        "metrics": metrics.model_dump(mode="json", exclude={"records"}),
    }


def write_vidic_csv(path: Path, metrics: VidicMetrics) -> None:
    """One row per checklist item: question, correct answer, the judge's answer and explanation."""
    write_records_csv(path, list(VidicRecord.model_fields), (r.model_dump(mode="json") for r in metrics.records))


# ---------------------------------------------------------------------- rows


def _ci(s: VidicStats) -> str:
    return "-" if s.ci_low is None or s.ci_high is None else f"[{pct(s.ci_low)}, {pct(s.ci_high)}]"


_SUBSET_HEAD = ["pairs", "n pairs", "items", "Avg %", "Diff %", "Sim %", "Avg 95% CI"]
_CATEGORY_HEAD = ["category", "items", "diff items", "sim items", "Avg %", "Diff %", "Sim %"]


def _subset_row(label: str, s: VidicSubset) -> list[str]:
    return [label, str(s.n_samples), str(s.avg.n), pct(s.avg.accuracy), pct(s.diff.accuracy), pct(s.sim.accuracy), _ci(s.avg)]


def subset_rows(metrics: VidicMetrics) -> tuple[list[str], list[list[str]]]:
    rows = [_subset_row("all", metrics.overall), _subset_row("without VidDiffBench overlap", metrics.without_overlap)]
    return _SUBSET_HEAD, rows


def _category_row(c: CategoryScores) -> list[str]:
    return [c.name, str(c.avg.n), str(c.diff.n), str(c.sim.n), pct(c.avg.accuracy), pct(c.diff.accuracy), pct(c.sim.accuracy)]


def _category_rows(subset: VidicSubset) -> tuple[list[str], list[list[str]]]:
    return _CATEGORY_HEAD, [_category_row(c) for c in subset.by_category]


def title(metrics: VidicMetrics) -> str:
    return f"ViDiC-1K checklist accuracy (judge {metrics.judge_model}, prompt {metrics.prompt_version})"


def _notes(metrics: VidicMetrics) -> list[str]:
    notes = []
    if metrics.empty_responses:
        items = sum(1 for r in metrics.records if r.status == "no_response")
        notes.append(
            f"{len(metrics.empty_responses)} pair(s) with an empty or missing response: "
            f"{items} of their items not judged, counted wrong."
        )
    unread = sum(1 for r in metrics.records if r.status == "judged" and r.judge_answer not in ("yes", "no"))
    if unread:
        notes.append(
            f"{unread} judge answer(s) read as neither yes nor no (vidic.answer_reading=as_released: counted wrong, "
            "as released)."
        )
    if metrics.judge_failures:
        notes.append(
            f"{len(metrics.judge_failures)} judge answer(s) stayed invalid after the re-asks: counted wrong "
            "(judge_failures in metrics.json)."
        )
    overlap = len(metrics.overlap_samples)
    notes.append(
        f"{overlap} pair(s) come from VidDiffBench." if overlap else "No pair of this selection comes from VidDiffBench."
    )
    return notes


# ---------------------------------------------------------------------- renderings


def format_vidic_table(metrics: VidicMetrics) -> str:
    """Console summary: Avg/Diff/Sim with and without the overlap, then per category over all pairs."""
    parts = [title(metrics), text_table(*subset_rows(metrics)), *_notes(metrics)]
    if metrics.overall.by_category:
        parts += ["", "Per category (all pairs)", text_table(*_category_rows(metrics.overall))]
    return "\n".join(parts) + "\n"


def format_vidic_markdown(metrics: VidicMetrics, summary: dict[str, Any]) -> str:
    """``report.md``: provenance, scores with and without the overlap, per category, failures."""
    dataset = summary["dataset"]
    counts = summary["counts"]
    lines = [
        "# ViDiC-1K evaluation (describe)",
        "",
        f"- dataset: {dataset['source']} (revision {dataset['revision'] or 'unspecified'})",
        f"- pairs: {metrics.n_samples}; checklist items: {metrics.n_items} "
        f"({counts['difference_items']} difference, {counts['similarity_items']} similarity)",
        f"- judge: {metrics.judge_model}; prompt version: {metrics.prompt_version} "
        f"(templates sha256 {metrics.prompt_sha256[:12]}); "
        f"re-asks: {summary['eval_settings']['max_reasks']}; judge replies read "
        f"{summary['eval_settings']['answer_reading']}; blank responses: {summary['eval_settings']['empty_response']}",
        f"- seed: {summary['seed']}; evaluated {summary['timestamp']} with viddiff {summary['viddiff_version']}",
        "",
        f"## {title(metrics)}",
        "",
        md_table(*subset_rows(metrics)),
        "",
        *_notes(metrics),
        "",
        REFERENCE_NOTE,
        "",
        "## Per category (all pairs)",
        "",
        md_table(*_category_rows(metrics.overall)),
    ]
    if metrics.overlap_samples:
        lines += ["", "## Per category (without VidDiffBench overlap)", "", md_table(*_category_rows(metrics.without_overlap))]
        lines += ["", "## Pairs from VidDiffBench", "", ", ".join(metrics.overlap_samples)]
    if metrics.judge_failures:
        lines += ["", "## Judge failures (counted wrong)", ""]
        lines += [f"- pair {f.index} ({f.sample_key}), item {f.key}: {f.problem}" for f in metrics.judge_failures]
    if metrics.empty_responses:
        lines += ["", "## Empty or missing responses", "", ", ".join(metrics.empty_responses)]
    return "\n".join(lines) + "\n"
