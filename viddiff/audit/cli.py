"""``viddiff audit``: the original order, A and B swapped, and identical videos, scored together; on a benchmark
of paired single-video questions, answering with and without the pair's other video (``task_pairs``)."""

from __future__ import annotations

from pathlib import Path

from viddiff import benchmarks
from viddiff.config import config_from_args
from viddiff.errors import ViddiffError


def cli_audit(args) -> int:
    """Run the three variants (resumable), score them, write metrics.json/report.md/differences.csv, print."""
    from viddiff.audit.metrics import score_audit
    from viddiff.audit.records import closed_records, open_records
    from viddiff.audit.report import audit_stand_ins, audit_summary, format_audit_table, write_audit
    from viddiff.eval.report import note_in_report
    from viddiff.report.standins import AUDIT_SHOWS, notice_of
    from viddiff.audit.runs import audited_method, check_not_started, run_variants
    from viddiff.runs.output_lock import OutputDirLock
    from viddiff.runs.pipeline import invalid_answers_across
    from viddiff.store import prepare_output_dir

    cfg = config_from_args(args)
    args.method = args.method or benchmarks.of(cfg).default_method
    if benchmarks.of(cfg).pair_aware_override:
        from viddiff.audit.task_pairs import audit_task_pairs

        return audit_task_pairs(args, cfg, benchmarks.of(cfg))
    if cfg.data.benchmark != "viddiffbench":
        raise ViddiffError(
            f"viddiff audit needs a/b answers to swap (VidDiffBench, closed or open) or pairs of single-video "
            f"questions to show together (VidPair-Halluc), not {cfg.data.benchmark}"
        )
    mode = benchmarks.resolve_mode(cfg, args.mode)
    method = audited_method(cfg, args.method, args.model)
    name = _safe(method.label.replace("lmm:", "baseline-", 1))
    output = Path(args.output or f"runs/audit-{name}-{benchmarks.of(cfg).output_stem(args.split)}-{mode}")
    args.output = str(output)  # named by the Ctrl-C hint (viddiff.cli.interrupted_message)
    dataset = benchmarks.load_benchmark(method.cfg, splits=args.split)
    output = prepare_output_dir(output)
    with OutputDirLock(output):
        if not args.resume:
            check_not_started(output)
        audit = run_variants(method, dataset, mode=mode, splits=args.split, output_dir=output, resume=args.resume)
        results = {variant: run.results for variant, run in audit.runs.items()}
        build = closed_records if mode == "closed" else open_records
        records = build(audit.asked, results["original"], results["swapped"], results["same"])
        metrics = score_audit(records, mode)
        summary = audit_summary(metrics, method, audit)
        write_audit(output, metrics, summary)
        notice = notice_of(audit_stand_ins(audit), AUDIT_SHOWS)
        if notice:
            note_in_report(output, notice)
    print()
    print(format_audit_table(metrics, summary["notes"]))
    if notice:
        print(notice)
    print(f"audit in {output} (metrics.json, report.md, differences.csv; one directory per variant)")
    failed = sum(run.n_failed for run in audit.runs.values())
    if failed:
        plural = "s" if failed > 1 else ""
        print(
            f"viddiff: {failed} failed sample{plural} in the audit's runs (see each run's errors.json); "
            "fix the cause and re-run with --resume"
        )
    invalid = invalid_answers_across(
        "the audit's runs", {name: (run.n_invalid, run.n_verdicts) for name, run in audit.runs.items()}
    )
    if invalid:
        print(invalid)
    return 1 if failed or invalid else 0


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)
