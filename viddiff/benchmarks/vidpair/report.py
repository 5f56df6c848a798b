"""VidPair-Halluc outputs: ``metrics.json``, ``questions.csv``, ``report.md`` and the console tables.

Two tables, never merged: the release's metrics (x100, as the paper's tables print them) and ours (the
open-ended score, strict accuracy, pair consistency), so no number of ours stands in a column of the paper's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

from viddiff.eval.stats import Rate
from viddiff.benchmarks.vidpair.scoring import GroupScores, VidPairMetrics, VidPairRecord
from viddiff.config import Config
from viddiff.eval.csv_cells import write_records_csv
from viddiff.eval.report import make_output_dir, provenance, write_scored
from viddiff.eval.tables import md_table, pct, signed_pct, text_table

QUESTIONS_FILE = "questions.csv"
PUBLISHED_NOTE = (
    "Published for comparison (project page jethrojames.github.io/VidPair-Halluc, model table; the paper's text "
    "was not available): Binary wAcc / MCQ F1 - Human 74.32 / 89.21, Gemini-2.5-Pro 49.15 / 67.32, GPT-5-mini "
    "29.33 / 64.82, Qwen2.5-VL-Instruct 41.66 / 61.50, Video-LLaMA2 21.48 / 62.91; GPT-4o Binary wAcc 26.97 (bar "
    "chart). The page's \"Table 2\" is background consistency (DINOv2, LPIPS, SSIM), not model results. "
    "See docs/vidpair-halluc.md."
)

_RELEASE_HEAD = [
    "group", "Bin Q-pair", "Bin V-pair", "Bin wAcc", "FP rate", "Pct diff", "MCQ F1 (=acc)", "MCQ pair", "units", "MC answered",
]


def _group_row(label: str, g: GroupScores) -> list[str]:
    b, m = g.binary, g.mcq
    units = f"{b.counts.vid_pair_total}+{b.counts.text_pair_total}" if b else "-"
    return [
        label,
        pct(b.question_pair_acc) if b else "-",
        pct(b.video_pair_acc) if b else "-",
        pct(b.weighted_acc) if b else "-",
        pct(b.fp_rate) if b else "-",
        signed_pct(b.pct_diff) if b else "-",
        pct(m.f1) if m else "-",
        pct(m.pair_acc) if m else "-",
        units,
        str(m.counts.tp + m.counts.fp) if m else "-",
    ]


def release_rows(metrics: VidPairMetrics) -> tuple[list[str], list[list[str]]]:
    assumed = " (assumed split)" if metrics.dimension_assumed else ""
    rows = [_group_row("overall", metrics.overall)]
    rows += [_group_row(f"{g.name}{assumed}", g) for g in metrics.by_dimension]
    rows += [_group_row(g.name, g) for g in metrics.by_aspect]
    return _RELEASE_HEAD, rows


def _share(s: Rate) -> str:
    return "-" if s.value is None else f"{pct(s.value)} ({s.count}/{s.n})"


def ours_rows(metrics: VidPairMetrics) -> tuple[list[str], list[list[str]]]:
    c = metrics.consistency
    rows = [
        ["binary accuracy, every missing/invalid answer wrong", _share(metrics.strict_accuracy["binary"]) if "binary" in metrics.strict_accuracy else "-"],
        ["multiple-choice accuracy, every missing answer wrong", _share(metrics.strict_accuracy["multiple_choice"]) if "multiple_choice" in metrics.strict_accuracy else "-"],
        ["open-ended score (our judge, 0-100)", _open(metrics.overall)],
        ["pair: answer flips where the truth does", _share(c.answer_flip_rate)],
        ["pair: answer steady where the truth is", _share(c.steady_rate)],
        ["pair: right on both videos", _share(c.pair_accuracy)],
        ["yes share (truth's share)", f"{_share(c.yes_share)} ({pct(c.gt_yes_share)})"],
        ["yes share difference", signed_pct(c.yes_share_diff)],
        ["false yes rate (truth no)", _share(c.false_yes_rate)],
        ["false yes rate, adversarial video", _share(c.adversarial_false_yes_rate)],
    ]
    return ["ours (not in the paper)", "value %"], rows


def _open(g: GroupScores) -> str:
    if g.open is None or g.open.mean is None:
        return "-"
    return f"{pct(g.open.mean)} (n={g.open.n})"


def title(metrics: VidPairMetrics) -> str:
    mode = "pair-aware answering (beyond the paper)" if metrics.pair_aware else "single-video answering"
    return f"VidPair-Halluc, the release's metrics x100 (binary scorer {metrics.binary_scorer}; {mode})"


def notes(metrics: VidPairMetrics) -> list[str]:
    out = []
    invalid = sum(metrics.invalid_answers.values())
    missing = sum(metrics.no_response.values())
    out.append(
        f"Left out as the release leaves them out: {invalid} invalid answer(s), {missing} question(s) without an answer, "
        f"{len(metrics.skipped_entries)} skipped entr{'y' if len(metrics.skipped_entries) == 1 else 'ies'}."
    )
    f = metrics.fragile
    if f.yes_no or f.mcq_form_only:
        words = ", ".join(f"{w}: {n}" for w, n in f.by_word.items())
        out.append(
            f"Fragile readings: {f.yes_no} yes/no answer(s) decided by another word ({words or 'none'}); "
            f"{f.mcq_form_only} multiple-choice answer(s) wrong by form only."
        )
    if metrics.dimension_assumed:
        out.append("The spatial/temporal split is an ASSUMPTION (not published): vidpair.temporal_aspects.")
    out.append("Units: question pairs + video pairs. MCQ F1 is exact-match accuracy, as the release computes it.")
    return out


def format_vidpair_table(metrics: VidPairMetrics) -> str:
    parts = [title(metrics), text_table(*release_rows(metrics)), *notes(metrics), "", text_table(*ours_rows(metrics))]
    if metrics.judge_model:
        parts.append(f"Open-ended judge (ours): {metrics.judge_model}, prompt {metrics.prompt_version}.")
    return "\n".join(parts) + "\n"


def vidpair_summary(metrics: VidPairMetrics, *, cfg: Config, dataset_source: str, dataset_revision: Optional[str]) -> dict[str, Any]:
    return {
        **provenance(metrics, dataset_source, dataset_revision),
        "binary_scorer": metrics.binary_scorer,
        "unanswered_question": metrics.unanswered_question,
        "pair_aware": metrics.pair_aware,
        "judge": cfg.vidpair.judge.model_dump(mode="json", exclude={"endpoint"}) if metrics.judge_model else None,
        "prompt_version": metrics.prompt_version,
        "scale": "fractions in [0, 1]; report.md and the console show x100",
        "counts": {
            "samples": metrics.n_samples,
            "questions": metrics.n_questions,
            "invalid_answers": sum(metrics.invalid_answers.values()),
            "no_response": sum(metrics.no_response.values()),
            "skipped_entries": len(metrics.skipped_entries),
            "fragile_yes_no": metrics.fragile.yes_no,
            "mcq_form_only": metrics.fragile.mcq_form_only,
        },
        "metrics": metrics.model_dump(mode="json", exclude={"records"}),
    }


def write_vidpair_report(
    out_dir: Path, metrics: VidPairMetrics, *, cfg: Config, dataset_source: str, dataset_revision: Optional[str],
    failed_samples: Sequence[str] = (),
) -> None:
    make_output_dir(out_dir)
    summary = vidpair_summary(metrics, cfg=cfg, dataset_source=dataset_source, dataset_revision=dataset_revision)
    write_records_csv(Path(out_dir) / QUESTIONS_FILE, list(VidPairRecord.model_fields), (r.model_dump(mode="json") for r in metrics.records))
    write_scored(
        out_dir, summary, format_vidpair_markdown(metrics, summary), metrics.n_samples, failed_samples,
        failed_effect="are left out of the release's metrics, as it leaves out missing answers (counted wrong in ours)",
    )


def format_vidpair_markdown(metrics: VidPairMetrics, summary: dict[str, Any]) -> str:
    dataset = summary["dataset"]
    counts = ", ".join(f"{n} {t.replace('_', ' ')}" for t, n in metrics.n_questions.items())
    lines = [
        "# VidPair-Halluc evaluation (qa)",
        "",
        f"- dataset: {dataset['source']} (revision {dataset['revision'] or 'unspecified'})",
        f"- questions: {metrics.n_samples} ({counts})",
        f"- binary scorer: {metrics.binary_scorer} (a question answered on no video: {metrics.unanswered_question}, "
        "an assumption); answering: {'pair-aware (beyond the paper)' if metrics.pair_aware else 'single video'}",
        f"- evaluated {summary['timestamp']} with viddiff {summary['viddiff_version']}",
        "",
        f"## {title(metrics)}",
        "",
        md_table(*release_rows(metrics)),
        "",
        *[f"- {n}" for n in notes(metrics)],
        "",
        PUBLISHED_NOTE,
        "",
        "## Ours, not the paper's",
        "",
        "The open-ended score uses our own judge prompt and scale (the release publishes none); it is not the "
        "paper's \"Open Desc.\" column. The pair numbers are `viddiff audit`'s questions asked of the pairs.",
        "",
        md_table(*ours_rows(metrics)),
    ]
    if metrics.judge_model:
        lines += ["", f"Open-ended judge: {metrics.judge_model}, prompt {metrics.prompt_version}."]
    if metrics.assumptions:
        lines += ["", "## Assumptions made when reading the rows", "", *[f"- {a}" for a in metrics.assumptions]]
    if metrics.skipped_entries:
        lines += ["", "## Skipped entries (as the release skips them)", ""]
        lines += [f"- {e.entry} ({e.question_type}): {e.reason}" for e in metrics.skipped_entries]
    if metrics.fragile.examples:
        lines += ["", "## Fragile yes/no readings (examples)", ""]
        lines += [f"- {example!r}" for example in metrics.fragile.examples]
    if metrics.judge_failures:
        lines += ["", "## Judge failures (left out of our open-ended score)", "", *[f"- {f}" for f in metrics.judge_failures]]
    return "\n".join(lines) + "\n"
