"""VidCapBench outputs: ``metrics.json``, ``qa.csv`` (one row per QA pair and judge run), ``report.md``, tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

from viddiff.benchmarks.vidcapbench.scoring import DimensionScores, QARecord, VidcapbenchMetrics
from viddiff.config import Config
from viddiff.eval.csv_cells import write_records_csv
from viddiff.eval.report import make_output_dir, provenance, write_scored
from viddiff.eval.tables import md_table, text_table

RECORDS_FILE = "qa.csv"
REFERENCE_NOTE = (
    "Published (VidCapBench paper, Table 3, VidCapBench-AE, GPT-4o judge): GPT-4o-20240806 Acc 16.8 / Pre 57.4 / "
    "Cov 86.0 / Con 5.9; Gemini-1.5-Pro-002 17.1 / 54.8 / 87.4 / 9.2 (more rows in docs/captioning.md)."
)
_HEAD = ["dimension", "QA", "Accuracy", "Precision", "Coverage", "Conciseness", "Acc std"]


def _num(x: Optional[float]) -> str:
    return "-" if x is None else f"{x:.1f}"


def _row(d: DimensionScores) -> list[str]:
    r = d.rates
    return [d.name, str(d.n_qa), _num(r.accuracy), _num(r.precision), _num(r.coverage), _num(r.conciseness), _num(d.accuracy_std)]


def score_rows(metrics: VidcapbenchMetrics) -> tuple[list[str], list[list[str]]]:
    return _HEAD, [_row(metrics.overall), *[_row(d) for d in metrics.dimensions]]


def title(metrics: VidcapbenchMetrics) -> str:
    return (
        f"VidCapBench (grader {metrics.grader_model}, {metrics.judge_runs} run(s), grades read {metrics.grade_reading}, "
        f"prompt {metrics.prompt_version})"
    )


def headline(metrics: VidcapbenchMetrics) -> str:
    r = metrics.overall.rates
    return f"Accuracy {_num(r.accuracy)}, Precision {_num(r.precision)}, Coverage {_num(r.coverage)} over {metrics.n_qa} QA pairs"


def notes(metrics: VidcapbenchMetrics) -> list[str]:
    out = [f"Conciseness tokenizer: {metrics.tokenizer}; mean caption length {metrics.mean_tokens:.1f} tokens."]
    if metrics.empty_captions:
        how = ("answered and graded as written" if metrics.empty_caption == "judge"
               else "each of their questions graded C (not mentioned)")
        out.append(f"{len(metrics.empty_captions)} video(s) with a blank or missing caption: {how}.")
    if metrics.left_out:
        out.append(
            f"{len(metrics.left_out)} video(s) without a caption left out of every count "
            "(vidcapbench.missing_caption=leave_out)."
        )
    if metrics.ungraded:
        out.append(f"{len(metrics.ungraded)} reply(ies) gave no grade and are left out of the counts (ungraded in metrics.json).")
    return out


def format_table(metrics: VidcapbenchMetrics) -> str:
    return "\n".join([title(metrics), text_table(*score_rows(metrics)), *notes(metrics)]) + "\n"


def write_report(
    out_dir: Path, metrics: VidcapbenchMetrics, *, cfg: Config, dataset_source: str, dataset_revision: Optional[str],
    failed_samples: Sequence[str] = (),
) -> None:
    make_output_dir(out_dir)
    payload: dict[str, Any] = {
        **provenance(metrics, dataset_source, dataset_revision),
        "answerer": cfg.vidcapbench.answerer.model_dump(mode="json", exclude={"endpoint"}),
        "grader": cfg.vidcapbench.grader.model_dump(mode="json", exclude={"endpoint"}),
        "counts": {"videos": metrics.n_samples, "qa_pairs": metrics.n_qa, "judge_runs": metrics.judge_runs,
                   "empty_captions": len(metrics.empty_captions), "left_out": len(metrics.left_out),
                   "ungraded": len(metrics.ungraded)},
        "metrics": metrics.model_dump(mode="json", exclude={"records"}),
    }
    write_records_csv(Path(out_dir) / RECORDS_FILE, list(QARecord.model_fields), (r.model_dump(mode="json") for r in metrics.records))
    lines = [
        "# VidCapBench evaluation (caption)",
        "",
        f"- dataset: {dataset_source} (revision {dataset_revision or 'unspecified'})",
        f"- videos: {metrics.n_samples}; QA pairs: {metrics.n_qa}; judge runs: {metrics.judge_runs}",
        f"- answerer: {metrics.answerer_model}; grader: {metrics.grader_model}; grades read: {metrics.grade_reading}; "
        f"prompt version {metrics.prompt_version} (sha256 {metrics.prompt_sha256[:12]})",
        f"- evaluated {payload['timestamp']} with viddiff {payload['viddiff_version']}",
        "",
        f"## {title(metrics)}",
        "",
        md_table(*score_rows(metrics)),
        "",
        "Means over the judge runs. Accuracy A/all, Precision (A+B)/(A+B+D), Coverage (A+B+D)/all (A correct, "
        "B partly correct, C not mentioned, D contradiction); Conciseness 100 x Accuracy / mean caption tokens.",
        "",
        *notes(metrics),
        "",
        REFERENCE_NOTE,
    ]
    if metrics.ungraded:
        lines += ["", "## Replies without a grade", "", *[f"- {u}" for u in metrics.ungraded]]
    write_scored(out_dir, payload, "\n".join(lines) + "\n", metrics.n_samples, failed_samples)
