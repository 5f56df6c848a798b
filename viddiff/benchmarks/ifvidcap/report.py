"""IF-VidCap outputs: ``metrics.json``, ``constraints.csv`` (one row per checked item), ``report.md``, tables.

Both CSRs are shown and labelled: *micro* is what the released code computes (and what produced the
published Table 2), *macro* is the paper's Eq. 1. The judge, its settings and the prompt version go next to
every number.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

from viddiff.benchmarks.ifvidcap.metrics import InstructionOutcome, Rates
from viddiff.benchmarks.ifvidcap.scoring import IfvidcapMetrics
from viddiff.config import Config
from viddiff.eval.csv_cells import write_records_csv
from viddiff.eval.report import make_output_dir, provenance, write_scored
from viddiff.eval.tables import md_table, text_table

RECORDS_FILE = "constraints.csv"
REFERENCE_NOTE = (
    "Published (IF-VidCap paper, Table 2, GPT-5-mini judge; CSR as the released code computes it): "
    "Gemini-2.5-Pro ISR 27.83 / CSR 74.53; GPT-4o 22.90 / 70.74; Qwen2.5-VL-7B 10.92 / 58.12 "
    "(more rows in docs/captioning.md)."
)
_RECORD_FIELDS = [
    "sample_key", "video_id", "prompt_id", "kind", "check_id", "constraint", "group", "question", "spans", "answer",
    "correct_answer", "passed", "verbatim", "stale", "calls", "error",
]
_HEAD = ["constraints", "ISR", "CSR (micro, released)", "CSR (macro, Eq. 1)", "instructions", "constraints n"]


def _num(x: Optional[float]) -> str:
    return "-" if x is None else f"{x:.2f}"


def _row(label: str, r: Rates) -> list[str]:
    return [label, _num(r.isr), _num(r.csr_micro), _num(r.csr_macro), str(r.instructions), str(r.constraints)]


def score_rows(metrics: IfvidcapMetrics) -> tuple[list[str], list[list[str]]]:
    s = metrics.scores
    return _HEAD, [_row("overall", s.overall), _row("rule-based", s.rule), _row("open-ended", s.open)]


def title(metrics: IfvidcapMetrics) -> str:
    return f"IF-VidCap (judge {metrics.judge_model}, prompt {metrics.prompt_version}, spans {metrics.settings.get('span_budget')})"


def headline(metrics: IfvidcapMetrics) -> str:
    o = metrics.scores.overall
    return f"ISR {_num(o.isr)}, CSR {_num(o.csr_micro)} (micro) / {_num(o.csr_macro)} (macro) over {metrics.n_scored} instructions"


def notes(metrics: IfvidcapMetrics) -> list[str]:
    out = []
    if metrics.empty_responses:
        how = "judged as written" if metrics.settings.get("empty_response") == "judge" else "not judged, every constraint unsatisfied"
        out.append(f"{len(metrics.empty_responses)} instruction(s) with a blank or missing response: {how}.")
    if metrics.left_out_videos:
        out.append(
            f"{len(metrics.left_out_videos)} video(s) left out: the response file does not answer all their instructions "
            "(ifvidcap.missing_response=leave_out)."
        )
    if metrics.item_errors:
        how = "their videos are left out" if metrics.dropped_videos else "counted unsatisfied"
        out.append(f"{len(metrics.item_errors)} constraint(s) could not be checked ({how}; item_errors in metrics.json).")
    if metrics.unverified_spans:
        out.append(f"{metrics.unverified_spans} rule item(s) checked on an extraction never found verbatim in the response.")
    if metrics.stale_spans:
        out.append(f"{metrics.stale_spans} rule item(s) scored on a previous item's extraction (shared re-ask budget spent).")
    return out


def format_table(metrics: IfvidcapMetrics) -> str:
    return "\n".join([title(metrics), text_table(*score_rows(metrics)), *notes(metrics)]) + "\n"


def summary(metrics: IfvidcapMetrics, *, cfg: Config, dataset_source: str, dataset_revision: Optional[str]) -> dict[str, Any]:
    return {
        **provenance(metrics, dataset_source, dataset_revision),
        "judge": cfg.ifvidcap.judge.model_dump(mode="json", exclude={"endpoint"}),
        "counts": {
            "instructions": metrics.n_samples,
            "scored_instructions": metrics.n_scored,
            "videos": metrics.n_videos,
            "empty_responses": len(metrics.empty_responses),
            "item_errors": len(metrics.item_errors),
            "dropped_videos": len(metrics.dropped_videos),
            "left_out_videos": len(metrics.left_out_videos),
        },
        "metrics": metrics.model_dump(mode="json", exclude={"outcomes"}),
    }


def records(outcome: InstructionOutcome) -> list[dict[str, Any]]:
    """The rows of one instruction in ``constraints.csv``."""
    base = {"sample_key": outcome.sample_key, "video_id": outcome.video_id, "prompt_id": outcome.prompt_id}
    rows = [
        {
            **base, "kind": "rule", "check_id": r.check_id, "constraint": r.constraint_id, "group": "",
            "question": r.description, "spans": r.spans, "answer": "", "correct_answer": "", "passed": r.passed,
            "verbatim": r.verbatim, "stale": r.stale, "calls": r.calls, "error": r.error or "",
        }
        for r in outcome.rules
    ]
    for g in outcome.groups:
        if not g.items:
            rows.append({**base, "kind": "open", "check_id": "", "constraint": "empty group", "group": g.index,
                         "question": g.check_content, "spans": "", "answer": "", "correct_answer": "", "passed": False,
                         "verbatim": "", "stale": "", "calls": "", "error": "a group without questions never passes"})
        for i in g.items:
            rows.append({**base, "kind": "open", "check_id": i.check_id, "constraint": i.check_type, "group": g.index,
                         "question": i.question, "spans": "", "answer": i.answer or "", "correct_answer": i.correct_answer,
                         "passed": i.passed, "verbatim": "", "stale": "", "calls": "", "error": i.error or ""})
    return rows


def write_report(
    out_dir: Path, metrics: IfvidcapMetrics, *, cfg: Config, dataset_source: str, dataset_revision: Optional[str],
    failed_samples: Sequence[str] = (),
) -> None:
    make_output_dir(out_dir)
    payload = summary(metrics, cfg=cfg, dataset_source=dataset_source, dataset_revision=dataset_revision)
    write_records_csv(Path(out_dir) / RECORDS_FILE, _RECORD_FIELDS, (row for o in metrics.outcomes for row in records(o)))
    write_scored(out_dir, payload, markdown(metrics, payload), metrics.n_samples, failed_samples)


def markdown(metrics: IfvidcapMetrics, payload: dict[str, Any]) -> str:
    settings = ", ".join(f"{k}={v}" for k, v in metrics.settings.items())
    lines = [
        "# IF-VidCap evaluation (caption)",
        "",
        f"- dataset: {payload['dataset']['source']} (revision {payload['dataset']['revision'] or 'unspecified'})",
        f"- instructions: {metrics.n_samples} ({metrics.n_scored} scored) over {metrics.n_videos} videos",
        f"- judge: {metrics.judge_model}; prompt version {metrics.prompt_version} (sha256 {metrics.prompt_sha256[:12]}); {settings}",
        f"- evaluated {payload['timestamp']} with viddiff {payload['viddiff_version']}",
        "",
        f"## {title(metrics)}",
        "",
        md_table(*score_rows(metrics)),
        "",
        "CSR (micro) pools constraints over instructions, as the released metrics.py does; CSR (macro) averages "
        "each instruction's share, as the paper's Eq. 1 states. ISR: instructions with every constraint satisfied.",
        "",
        *notes(metrics),
        "",
        REFERENCE_NOTE,
    ]
    if metrics.dropped_videos:
        lines += ["", "## Videos left out (on_judge_failure=drop_video)", "", ", ".join(metrics.dropped_videos)]
    if metrics.item_errors:
        lines += ["", "## Constraints that could not be checked", "", *[f"- {e}" for e in metrics.item_errors]]
    return "\n".join(lines) + "\n"
