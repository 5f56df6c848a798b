"""The three runs of an audit, through the benchmark runner, and their finished results.

Each variant is an ordinary run in its own directory (``original/``, ``swapped/``, ``same/``): resumable,
scored and reported like ``viddiff run``, with ``run.swap_videos`` / ``run.same_video`` recorded in its
``config.yaml``. All three use one cache and, for VidDiff, one CLIP embedder, so a request that two
variants share (VidDiff's proposals: same prompts, same per-sample seeds) is paid for once, and a second
audit on the same cache makes no model calls.

Open mode fixes the statements first: the original-order run proposes them, and the swapped and
identical-video runs are closed-mode runs asking about exactly those statements (unlabelled).

This module is the audit's only contact with the runner's interface (``run_benchmark``, the results store).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import logging
from pathlib import Path
from typing import Literal, Optional

from viddiff.audit.records import Results, statement_samples
from viddiff.config import Config
from viddiff.data.dataset import Dataset
from viddiff.errors import ViddiffError
from viddiff.methods import MethodFactory, get_method
from viddiff.report.views import StandInView
from viddiff.runs.failures import FailureLog
from viddiff.schema import Sample
from viddiff.runs.shared_models import check_shared_cache, shared_models
from viddiff.store import ResultsStore

log = logging.getLogger(__name__)
Variant = Literal["original", "swapped", "same"]
VARIANTS: dict[Variant, tuple[str, list[str]]] = {
    "original": ("original order", []),
    "swapped": ("A and B swapped", ["run.swap_videos=true"]),
    "same": ("each video against itself", ["run.same_video=true"]),
}
"""Variant -> (what it is, the config it runs with); also the names of the runs' directories."""


@dataclasses.dataclass(frozen=True)
class AuditedMethod:
    """The method under audit, built from the command line."""

    label: str
    """``viddiff`` or ``lmm:<model>``."""
    factory: MethodFactory
    cfg: Config
    forced_choice: Optional[str]
    """Why the method can only answer ``a``/``b`` (so identical videos always get a decisive answer), or
    ``None`` when it may answer ``c``."""


@dataclasses.dataclass
class VariantRun:
    variant: Variant
    output_dir: Path
    mode: Literal["closed", "open"]
    n_samples: int
    n_failed: int
    results: Results
    n_invalid: int = 0
    """Answers that stayed invalid (null predictions, counted wrong)."""
    n_verdicts: int = 0
    stand_ins: list[StandInView] = dataclasses.field(default_factory=list)
    """The stand-ins that produced this run's answers (empty for real models)."""


@dataclasses.dataclass
class AuditRuns:
    dataset: Dataset
    asked: list[Sample]
    """What the swapped and identical-video runs asked about: the dataset's samples (closed), or each
    finished sample with the original run's statements as its differences (open)."""
    runs: dict[Variant, VariantRun]


def audited_method(cfg: Config, method: str, model: Optional[str]) -> AuditedMethod:
    """VidDiff (``differencer.options`` decides whether ``c`` is allowed) or an LMM baseline (``a``/``b`` only)."""
    if cfg.run.swap_videos or cfg.run.same_video:
        raise ViddiffError(
            "viddiff audit runs the swapped and identical-video variants itself; remove run.swap_videos/run.same_video"
        )
    if method == "viddiff":
        if model:
            raise ViddiffError(
                "--model names the LMM baseline's model (with --method baseline); for VidDiff set "
                "proposer.model and differencer.model with --set"
            )
        from viddiff.methods.viddiff import VidDiffMethod

        check_shared_cache(cfg, "viddiff audit")
        forced = None
        if cfg.differencer.options == "ab":
            forced = (
                "differencer.options=ab (the released setting): the differencer must pick a or b, so "
                "same_video_decisive_rate is 1.0 by construction; --set differencer.options=abc lets it answer c "
                "and makes that rate measure invented differences"
            )
        return AuditedMethod("viddiff", VidDiffMethod, cfg, forced)
    if method == "baseline":
        from viddiff.methods.lmm.baseline import LMMBaseline, resolve_config

        resolved = resolve_config(cfg, model)
        forced = (
            "the LMM baseline answers a or b only (its answer schema has no third option), so "
            "same_video_decisive_rate is 1.0 by construction"
        )
        return AuditedMethod(f"lmm:{resolved.baseline.model}", LMMBaseline, resolved, forced)
    if model:
        raise ViddiffError(f"--model is for --method baseline; configure method {method} with --set")
    check_shared_cache(cfg, "viddiff audit")
    return AuditedMethod(method, get_method(method), cfg, None)  # a plug-in: its answers decide


def check_not_started(output_dir: Path) -> None:
    """Without ``--resume``, refuse before any model call if one of the variant runs already holds results."""
    for variant in VARIANTS:
        run_dir = output_dir / variant
        if ResultsStore(run_dir).has_records() or FailureLog(run_dir).has_records():
            raise ViddiffError(
                f"{output_dir} already holds an audit ({run_dir} has results); pass --resume to continue it, "
                "or choose a new --output"
            )


def run_variants(
    method: AuditedMethod,
    dataset: Dataset,
    *,
    mode: Literal["closed", "open"],
    splits: Optional[list[str]],
    output_dir: Path,
    resume: bool,
) -> AuditRuns:
    """Run the original order, then the swapped and identical-video variants, into ``output_dir/<variant>/``."""
    from viddiff.runs.pipeline import run_benchmark

    runs: dict[Variant, VariantRun] = {}
    with shared_models(method.cfg, method.factory) as factory:

        def run(variant: Variant, run_mode: Literal["closed", "open"], data: Dataset) -> VariantRun:
            what, overrides = VARIANTS[variant]
            run_dir = output_dir / variant
            log.info("audit run %d of %d: %s -> %s", len(runs) + 1, len(VARIANTS), what, run_dir)
            # Each run's own tables stay in its directory: printed here, a same-video "accuracy" (its
            # right answer, c, is never counted) would read like one of the audit's numbers.
            with contextlib.redirect_stdout(io.StringIO()):
                outcome = run_benchmark(
                    method.cfg.with_overrides(overrides),
                    mode=run_mode,
                    splits=splits,
                    output_dir=run_dir,
                    resume=resume,
                    method=factory,
                    dataset=data,
                )
            return VariantRun(
                variant, run_dir, run_mode, outcome.n_samples, outcome.n_failed, ResultsStore(run_dir).load(),
                n_invalid=outcome.n_invalid, n_verdicts=outcome.n_verdicts, stand_ins=outcome.stand_ins,
            )

        runs["original"] = run("original", mode, dataset)
        asked = dataset
        if mode == "open":
            asked = dataclasses.replace(
                dataset,
                samples=statement_samples(dataset.samples, runs["original"].results),
                source=f"{dataset.source}; statements proposed by the original-order run",
            )
        for variant in ("swapped", "same"):
            runs[variant] = run(variant, "closed", asked)
    return AuditRuns(dataset=dataset, asked=asked.samples, runs=runs)
