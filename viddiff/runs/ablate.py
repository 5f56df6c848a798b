"""``viddiff ablate``: the paper's localisation ablation in one command.

Every variant (:mod:`viddiff.runs.ablation_variants`) runs over the same split with the same proposer and
differencer: each is an ordinary ``viddiff run`` (its own results directory, resumable, scored the same
way), and all of them share one SQLite cache and one CLIP embedder. Proposals are requested with identical
prompts and seeds, so the first variant pays for them and the others read them from the cache; a
differencer question on the same keyframes is likewise asked once.

The result is one table: closed accuracy with its exact 95% interval and ``n`` per variant and split, and
the paper's number (easy split: oracle 78.6 with 3-way questions, random 50.1, no Viterbi 57.4, full 65.8)
only beside a row run as the paper ran it: with the settings its row was run with, and for the oracle with
every counted difference localised by its annotations (the others fall back to the method's own
localisation). Each variant's own tables stay in its directory; the console shows one labelled line per
variant, then the table.
"""

from __future__ import annotations

import contextlib
import io
import textwrap
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel

from viddiff import benchmarks
from viddiff.config import Config, config_from_args
from viddiff.errors import ViddiffError
from viddiff.eval.tables import md_table, pct, text_table
from viddiff.report.standins import ABLATION_SHOWS, note_lines, notice_from_notes
from viddiff.runs.ablation_variants import Variant, all_variants, variant_names
from viddiff.schema import Sample
from viddiff.runs.shared_models import check_shared_cache, shared_models
from viddiff.store import write_json_atomic, write_text_atomic
from viddiff.console import count_of

ABLATION_JSON = "ablation.json"
ABLATION_MD = "ablation.md"
__all__ = ["AblationRow", "Variant", "all_variants", "run_ablation", "variants_named", "cli_ablate"]


class AblationRow(BaseModel):
    """One variant on one split."""

    variant: str
    """The variant's name (``--variant``, and its results directory)."""
    method: str
    label: str
    definition: str
    settings: list[str]
    split: str
    n: int
    correct: int
    accuracy: Optional[float]
    ci_low: Optional[float]
    ci_high: Optional[float]
    paper: Optional[float]
    """The paper's accuracy (%) for this variant and split, only where this row was run as the paper's was."""
    not_comparable: Optional[str] = None
    """Why the paper reports this variant but its number is not shown beside this row."""
    annotated: Optional[int] = None
    """Oracle only: counted differences localised by their annotated keyframes (the rest fell back)."""
    failed_samples: int = 0
    invalid_answers: int = 0
    """Answers of the variant's run (all its splits) that stayed invalid: null predictions, counted wrong."""
    answers: int = 0
    """Answers of the variant's run (all its splits)."""
    output_dir: str
    stand_ins: list[str] = []
    """The stand-ins that produced this accuracy (``report.standins.note_lines``); empty when real models did. The
    table is then followed by the stand-in notice, so the paper's number beside it is not read as reproduced."""


def variants_named(names: Optional[list[str]]) -> list[Variant]:
    """The variants to run, in table order (all of them when ``names`` is empty)."""
    variants = all_variants()
    if not names:
        return variants
    unknown = sorted(set(names) - {v.name for v in variants})
    if unknown:
        raise ViddiffError(f"unknown --variant {', '.join(unknown)}; choose from {', '.join(variant_names())}")
    return [v for v in variants if v.name in names]


def paper_comparison(variant: Variant, cfg: Config, n: int, annotated: Optional[int]) -> Optional[str]:
    """Why this run of ``variant`` is not the paper's row (``None``: it is, or the paper has no such row)."""
    if variant.paper_easy is None:
        return None
    values = cfg.model_dump(mode="json")
    reasons = []
    for key, wanted in variant.paper_settings:
        value: Any = values
        for part in key.split("."):
            value = value[part]
        if value != wanted:
            reasons.append(f"{key}={value} (the paper's row: {wanted})")
    if annotated is not None and annotated < n:
        reasons.append(f"{n - annotated} of {n} differences had no annotated keyframes")
    return "; ".join(reasons) or None


def check_ablatable(cfg: Config) -> None:
    """Only VidDiffBench has the keyframe annotations and a/b labels the ablation is defined on."""
    if cfg.data.benchmark != "viddiffbench":
        raise ViddiffError(
            f"viddiff ablate runs on VidDiffBench (the paper's ablation needs its keyframe annotations), "
            f"not on {cfg.data.benchmark}"
        )
    check_shared_cache(cfg, "viddiff ablate")


def annotated_count(samples: list[Sample], split: str) -> int:
    """Counted (``a``/``b``) differences of ``split`` that have keyframe annotations in both videos."""
    from viddiff.localizer.oracle import annotated_keyframes

    return sum(
        annotated_keyframes(s.retrieval_frames, d.key) is not None
        for s in samples
        if s.split == split
        for d in s.closed_differences()
    )


def run_ablation(
    cfg: Config,
    *,
    splits: Optional[list[str]],
    output_dir: Path,
    variants: list[Variant],
    resume: bool = False,
    announce: bool = False,
) -> list[AblationRow]:
    """Run every variant into ``output_dir/<variant>/`` and collect the table (also written as JSON/Markdown).

    ``announce``: print one labelled line as each variant starts. Each variant's own tables are not printed
    (they are in its directory), so the console never shows a variant's numbers without its name."""
    from viddiff.methods.viddiff import VidDiffMethod
    from viddiff.runs.pipeline import run_benchmark

    check_ablatable(cfg)
    dataset = benchmarks.load_benchmark(cfg, splits=splits)
    rows: list[AblationRow] = []
    with shared_models(cfg, VidDiffMethod) as method_factory:
        for i, variant in enumerate(variants, start=1):
            variant_cfg = cfg.with_overrides(variant.settings)
            run_dir = output_dir / variant.name
            if announce:
                print(f"ablate [{i}/{len(variants)}] {variant.label}: {' '.join(variant.settings)} -> {run_dir}", flush=True)
            with contextlib.redirect_stdout(io.StringIO()):
                outcome = run_benchmark(
                    variant_cfg, mode="closed", splits=splits, output_dir=run_dir, resume=resume, method=method_factory
                )
            for split, acc in outcome.metrics["splits"].items():
                annotated = annotated_count(dataset.samples, split) if variant.method == "oracle" else None
                reported = variant.paper_easy if split == "easy" else None
                why = paper_comparison(variant, variant_cfg, acc["n"], annotated) if reported is not None else None
                rows.append(
                    AblationRow(
                        variant=variant.name,
                        method=variant.method,
                        label=variant.label,
                        definition=variant.definition,
                        settings=variant.settings,
                        split=split,
                        n=acc["n"],
                        correct=acc["correct"],
                        accuracy=acc["accuracy"],
                        ci_low=acc["ci_low"],
                        ci_high=acc["ci_high"],
                        paper=reported if why is None else None,
                        not_comparable=why,
                        annotated=annotated,
                        failed_samples=outcome.n_failed,
                        invalid_answers=outcome.n_invalid,
                        answers=outcome.n_verdicts,
                        output_dir=outcome.output_dir,
                        stand_ins=note_lines(outcome.stand_ins),
                    )
                )
    write_json_atomic(
        output_dir / ABLATION_JSON,
        {
            "dataset": dataset.source, "splits": splits, "stand_ins": ablation_stand_ins(rows),
            "rows": [r.model_dump(mode="json") for r in rows],
        },
    )
    write_text_atomic(output_dir / ABLATION_MD, format_ablation_markdown(rows, dataset.source, variants))
    return rows


def ablation_stand_ins(rows: list[AblationRow]) -> list[str]:
    """The stand-ins behind any row, each once."""
    return list(dict.fromkeys(line for row in rows for line in row.stand_ins))


_HEAD = ["variant", "split", "n", "correct", "acc %", "95% CI", "paper %", "note"]
PAPER_NOTE = (
    "paper %: the paper's localisation ablation (Table 4, easy split), shown only beside a row run as the "
    "paper's was; the rest of the configuration is this run's (configs/paper.yaml is the release's)."
)


def _cells(row: AblationRow, first_of_block: bool) -> list[str]:
    ci = "-" if row.ci_low is None or row.ci_high is None else f"[{pct(row.ci_low)}, {pct(row.ci_high)}]"
    notes = []
    if row.annotated is not None:
        notes.append(f"annotated keyframes: {row.annotated} of {row.n} ({row.n - row.annotated} fell back)")
    if row.not_comparable:
        notes.append(f"not the paper's row: {row.not_comparable}")
    paper = "-" if row.paper is None else f"{row.paper:.1f}"
    acc = pct(row.accuracy) + (f" ({count_of(row.failed_samples, 'sample')} failed)" if row.failed_samples else "")
    label = row.label if first_of_block else ""
    return [label, row.split, str(row.n), str(row.correct), acc, ci, paper, "; ".join(notes) or "-"]


def _table_rows(rows: list[AblationRow]) -> list[list[str]]:
    """One block of rows per variant (its splits), the variant's label on the block's first row."""
    return [_cells(row, i == 0 or rows[i - 1].variant != row.variant) for i, row in enumerate(rows)]


def _legend(variants: list[Variant]) -> list[str]:
    return [f"- **{v.label}** (`{' '.join(v.settings)}`): {v.definition}" for v in variants]


def format_ablation_table(rows: list[AblationRow], variants: Optional[list[Variant]] = None) -> str:
    """Console table of the ablation, one block per variant, then what each variant is."""
    shown = {r.variant for r in rows}
    legend = [
        f"  {v.label}: {' '.join(v.settings)}; {v.definition}" for v in (variants or all_variants()) if v.name in shown
    ]
    return "\n".join(
        [
            "Localisation ablation (closed accuracy; chance = 50%)",
            text_table(_HEAD, _table_rows(rows)),
            textwrap.fill(PAPER_NOTE, 110),
            "variants:",
            *legend,
            *filter(None, [notice_from_notes(ablation_stand_ins(rows), ABLATION_SHOWS)]),
        ]
    )


def format_ablation_markdown(rows: list[AblationRow], dataset_source: str, variants: Optional[list[Variant]] = None) -> str:
    shown = {r.variant for r in rows}
    notice = notice_from_notes(ablation_stand_ins(rows), ABLATION_SHOWS)
    lines = [
        "# Localisation ablation (closed)",
        "",
        *([notice, ""] if notice else []),
        f"- dataset: {dataset_source}",
        f"- {PAPER_NOTE}",
        "",
        md_table(_HEAD, _table_rows(rows)),
        "",
        "## Variants",
        "",
        *_legend([v for v in (variants or all_variants()) if v.name in shown]),
    ]
    return "\n".join(lines) + "\n"


def cli_ablate(args) -> int:
    """``viddiff ablate``: all localizer variants over one selection, one table."""
    from viddiff.runs.pipeline import invalid_answers_across

    cfg = config_from_args(args)
    check_ablatable(cfg)
    if benchmarks.resolve_mode(cfg, args.mode) != "closed":
        raise ViddiffError("viddiff ablate measures closed accuracy: use --mode closed")
    variants = variants_named(args.variant)
    split_name = "-".join(args.split) if args.split else "all"
    output = Path(args.output or f"runs/ablate-{split_name}-closed")
    rows = run_ablation(cfg, splits=args.split, output_dir=output, variants=variants, resume=args.resume, announce=True)
    print(format_ablation_table(rows, variants))
    print(f"results in {output} ({ABLATION_MD}, {ABLATION_JSON}, one directory per variant)")
    failed = sum({r.variant: r.failed_samples for r in rows}.values())
    if failed:
        print(f"viddiff: {count_of(failed, 'sample run')} failed (see each variant's errors.json); re-run with --resume")
    invalid = invalid_answers_across(
        "the ablation's runs", {r.variant: (r.invalid_answers, r.answers) for r in rows}
    )
    if invalid:
        print(invalid)
    return 1 if failed or invalid else 0

