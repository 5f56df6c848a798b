"""``viddiff audit`` on a benchmark of single-video questions grouped in pairs (VidPair-Halluc).

Such a benchmark has no A and B to swap; what the audit can vary is what the model sees. It runs the questions
twice, each run an ordinary resumable run in its own directory: ``single/`` asks about the video alone (the
paper's protocol), ``pair-aware/`` shows the other video of the pair as well (the benchmark's
``pair_aware_override``), both on one cache. The benchmark then puts the two scores side by side
(:meth:`~viddiff.benchmarks.base.Benchmark.pair_audit`): its own metrics, and the consistency and yes-bias
numbers it computes on its pairs.
"""

from __future__ import annotations

import contextlib
import io
import logging
from pathlib import Path
from typing import Any

from viddiff.benchmarks.base import Benchmark
from viddiff.config import Config
from viddiff.errors import ViddiffError
from viddiff.eval.report import under_title
from viddiff.eval.tables import console_text
from viddiff.methods import get_method
from viddiff.runs.failures import FailureLog
from viddiff.runs.output_lock import OutputDirLock
from viddiff.report.standins import AUDIT_SHOWS, distinct, note_lines, notice_of
from viddiff.runs.shared_models import shared_models
from viddiff.store import ResultsStore, prepare_output_dir, write_json_atomic, write_text_atomic

log = logging.getLogger(__name__)
VARIANTS = {"single": "the video alone (the paper's protocol)", "pair-aware": "the pair's other video shown too (beyond the paper)"}


def audit_task_pairs(args: Any, cfg: Config, benchmark: Benchmark) -> int:
    """Run both variants (resumable), compare them, write ``metrics.json`` and ``report.md``, print the table."""
    from viddiff.runs.pipeline import run_benchmark

    if not benchmark.pair_aware_override:
        raise ViddiffError(f"{benchmark.title} has no pairs: viddiff audit cannot run on it")
    mode = benchmark.resolve_mode(args.mode)
    label, factory, cfg = _method(args, cfg)
    output = Path(args.output or f"runs/audit-{_safe(label)}-{benchmark.name}-{mode}")
    args.output = str(output)  # named by the Ctrl-C hint (viddiff.cli.interrupted_message)
    configs = {"single": cfg, "pair-aware": cfg.with_overrides([benchmark.pair_aware_override])}
    datasets = {variant: benchmark.load(c, args.split) for variant, c in configs.items()}
    output = prepare_output_dir(output)
    outcomes = {}
    with OutputDirLock(output):
        if not args.resume:
            for variant in VARIANTS:
                run_dir = output / variant
                if ResultsStore(run_dir).has_records() or FailureLog(run_dir).has_records():
                    raise ViddiffError(f"{output} already holds an audit ({run_dir} has results); pass --resume, or choose a new --output")
        with shared_models(cfg, factory) as shared:
            for n, (variant, what) in enumerate(VARIANTS.items(), start=1):
                log.info("audit run %d of %d: %s -> %s", n, len(VARIANTS), what, output / variant)
                with contextlib.redirect_stdout(io.StringIO()):  # each run's own table stays in its directory
                    outcomes[variant] = run_benchmark(
                        configs[variant], mode=mode, splits=args.split, output_dir=output / variant, resume=args.resume,
                        method=shared, dataset=datasets[variant],
                    )
        summary, markdown = benchmark.pair_audit(outcomes["single"].metrics, outcomes["pair-aware"].metrics)
        stand_ins = distinct(view for o in outcomes.values() for view in o.stand_ins)
        summary = {
            "method": label,
            "runs": {v: {"output_dir": o.output_dir, "samples": o.n_samples, "failed_samples": o.n_failed} for v, o in outcomes.items()},
            **summary,
            "stand_ins": note_lines(stand_ins),
        }
        notice = notice_of(stand_ins, AUDIT_SHOWS)
        write_json_atomic(output / "metrics.json", summary)
        write_text_atomic(output / "report.md", under_title(markdown, notice) if notice else markdown)
    print(console_text(markdown))
    if notice:
        print(notice)
    print(f"audit in {output} (metrics.json, report.md; one directory per variant: {', '.join(VARIANTS)})")
    failed = sum(o.n_failed for o in outcomes.values())
    if failed:
        print(f"viddiff: {failed} failed sample(s) in the audit's runs (see each run's errors.json); fix the cause and re-run with --resume")
        return 1
    return 0


def _method(args: Any, cfg: Config) -> tuple[str, Any, Config]:
    if args.method == "baseline":
        from viddiff.methods.lmm.baseline import LMMBaseline, resolve_config

        resolved = resolve_config(cfg, args.model)
        return f"baseline-{resolved.baseline.model}", LMMBaseline, resolved
    if args.model:
        raise ViddiffError(f"--model is for --method baseline; configure method {args.method} with --set")
    return args.method, get_method(args.method), cfg


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)
