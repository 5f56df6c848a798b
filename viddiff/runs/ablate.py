"""``viddiff ablate``: the paper's localisation ablation in one command.

Every localizer variant runs over the same split with the same proposer and differencer: each variant is
an ordinary ``viddiff run`` (its own results directory, resumable, scored the same way), and all of them
share one SQLite cache and one CLIP embedder. Proposals are requested with identical prompts and seeds,
so the first variant pays for them and the others read them from the cache; a differencer question on
the same keyframes is likewise asked once. Only the keyframes differ between variants, which is what the
ablation measures.

The result is one table: closed accuracy with its exact 95% interval and ``n`` per variant and split,
beside the paper's numbers (easy split: oracle 78.6, random 50.1, no Viterbi 57.4, full 65.8). For the
oracle it also says how many differences had annotated keyframes; the rest fell back to the method's
own localisation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from pydantic import BaseModel

from viddiff import benchmarks
from viddiff.config import Config, config_from_args
from viddiff.errors import ViddiffError
from viddiff.eval.tables import md_table, pct, text_table
from viddiff.localizer.segmenters import get_segmenter, segmenter_names
from viddiff.schema import Sample
from viddiff.runs.shared_models import check_shared_cache, shared_models
from viddiff.store import write_json_atomic, write_text_atomic

ABLATION_JSON = "ablation.json"
ABLATION_MD = "ablation.md"


@dataclass(frozen=True)
class Variant:
    method: str
    label: str
    definition: str
    paper_easy: Optional[float] = None
    """Closed accuracy (%) on the easy split in the paper's localisation ablation."""


PAPER_EASY = {"oracle": 78.6, "random": 50.1, "no_viterbi": 57.4, "viterbi": 65.8}
"""Closed accuracy (%) on the easy split in the paper's localisation ablation, in the paper's order."""
PAPER_LABELS = {"no_viterbi": "no Viterbi", "viterbi": "full (Viterbi)"}


def all_variants() -> list[Variant]:
    """Every entry of the segmenter table (``localizer.method``), the paper's four first, in table order."""
    names = [*PAPER_EASY, *(name for name in segmenter_names() if name not in PAPER_EASY)]
    return [
        Variant(
            name,
            PAPER_LABELS.get(name, name.replace("_", " ")),
            get_segmenter(name).summary,
            PAPER_EASY.get(name),
        )
        for name in names
    ]


class AblationRow(BaseModel):
    """One variant on one split."""

    variant: str
    label: str
    definition: str
    split: str
    n: int
    correct: int
    accuracy: Optional[float]
    ci_low: Optional[float]
    ci_high: Optional[float]
    paper: Optional[float]
    """The paper's accuracy (%) for this variant and split, where it reports one."""
    annotated: Optional[int] = None
    """Oracle only: counted differences localised by their annotated keyframes (the rest fell back)."""
    failed_samples: int = 0
    output_dir: str


def variants_named(names: Optional[list[str]]) -> list[Variant]:
    """The variants to run, in table order (all of them when ``names`` is empty)."""
    variants = all_variants()
    if not names:
        return variants
    unknown = sorted(set(names) - {v.method for v in variants})
    if unknown:
        raise ViddiffError(f"unknown --variant {', '.join(unknown)}; choose from {', '.join(segmenter_names())}")
    return [v for v in variants if v.method in names]


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
) -> list[AblationRow]:
    """Run every variant into ``output_dir/<method>/`` and collect the table (also written as JSON/Markdown)."""
    from viddiff.methods.viddiff import VidDiffMethod
    from viddiff.runs.pipeline import run_benchmark

    check_ablatable(cfg)
    dataset = benchmarks.load_benchmark(cfg, splits=splits)
    rows: list[AblationRow] = []
    with shared_models(cfg, VidDiffMethod) as method_factory:
        for variant in variants:
            variant_cfg = cfg.with_overrides([f"localizer.method={variant.method}"])
            outcome = run_benchmark(
                variant_cfg,
                mode="closed",
                splits=splits,
                output_dir=output_dir / variant.method,
                resume=resume,
                method=method_factory,
            )
            for split, acc in outcome.metrics["splits"].items():
                rows.append(
                    AblationRow(
                        variant=variant.method,
                        label=variant.label,
                        definition=variant.definition,
                        split=split,
                        n=acc["n"],
                        correct=acc["correct"],
                        accuracy=acc["accuracy"],
                        ci_low=acc["ci_low"],
                        ci_high=acc["ci_high"],
                        paper=variant.paper_easy if split == "easy" else None,
                        annotated=annotated_count(dataset.samples, split) if variant.method == "oracle" else None,
                        failed_samples=outcome.n_failed,
                        output_dir=outcome.output_dir,
                    )
                )
    write_json_atomic(
        output_dir / ABLATION_JSON,
        {"dataset": dataset.source, "splits": splits, "rows": [r.model_dump(mode="json") for r in rows]},
    )
    write_text_atomic(output_dir / ABLATION_MD, format_ablation_markdown(rows, dataset.source))
    return rows


_HEAD = ["variant", "split", "n", "correct", "acc %", "95% CI", "paper %", "annotated keyframes"]


def _cells(row: AblationRow) -> list[str]:
    ci = "-" if row.ci_low is None or row.ci_high is None else f"[{pct(row.ci_low)}, {pct(row.ci_high)}]"
    annotated = "-" if row.annotated is None else f"{row.annotated} of {row.n} ({row.n - row.annotated} fell back)"
    paper = "-" if row.paper is None else f"{row.paper:.1f}"
    acc = pct(row.accuracy) + (f" ({row.failed_samples} samples failed)" if row.failed_samples else "")
    return [row.label, row.split, str(row.n), str(row.correct), acc, ci, paper, annotated]


def format_ablation_table(rows: list[AblationRow]) -> str:
    """Console table of the ablation."""
    return "Localisation ablation (closed accuracy; chance = 50%)\n" + text_table(_HEAD, [_cells(r) for r in rows])


def format_ablation_markdown(rows: list[AblationRow], dataset_source: str) -> str:
    lines = [
        "# Localisation ablation (closed)",
        "",
        f"- dataset: {dataset_source}",
        "- paper: the paper's localisation ablation on the easy split (closed accuracy).",
        "",
        md_table(_HEAD, [_cells(r) for r in rows]),
        "",
        "## Variants",
        "",
        *[f"- **{v.label}** (`localizer.method={v.method}`): {v.definition}" for v in all_variants()],
    ]
    return "\n".join(lines) + "\n"


def cli_ablate(args) -> int:
    """``viddiff ablate``: all localizer variants over one selection, one table."""
    cfg = config_from_args(args)
    check_ablatable(cfg)
    if benchmarks.resolve_mode(cfg, args.mode) != "closed":
        raise ViddiffError("viddiff ablate measures closed accuracy: use --mode closed")
    variants = variants_named(args.variant)
    split_name = "-".join(args.split) if args.split else "all"
    output = Path(args.output or f"runs/ablate-{split_name}-closed")
    rows = run_ablation(cfg, splits=args.split, output_dir=output, variants=variants, resume=args.resume)
    print(format_ablation_table(rows))
    print(f"results in {output} ({ABLATION_MD}, {ABLATION_JSON}, one directory per variant)")
    failed = sum({r.variant: r.failed_samples for r in rows}.values())
    if failed:
        print(f"viddiff: {failed} sample runs failed (see each variant's errors.json); re-run with --resume")
        return 1
    return 0

