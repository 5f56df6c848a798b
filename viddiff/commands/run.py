"""``viddiff run`` and ``viddiff baseline``: a method over a benchmark selection, then scored."""

from __future__ import annotations

import argparse
from pathlib import Path

from viddiff import benchmarks
from viddiff.config import Config, config_from_args
from viddiff.errors import ViddiffError
from viddiff.methods import MethodFactory, get_method
from viddiff.runs.pipeline import run_benchmark
from viddiff.schema import VIDEO_TASK_MODES


def cli_run(args: argparse.Namespace) -> int:
    cfg = config_from_args(args)
    args.mode = benchmarks.resolve_mode(cfg, args.mode)
    updates = {flag: True for flag in ("swap_videos", "same_video", "save_visuals") if getattr(args, flag)}
    if getattr(args, "executor", None):
        updates["executor"] = args.executor
    if updates:
        cfg = cfg.model_copy(update={"run": cfg.run.model_copy(update=updates)})
    benchmark = benchmarks.of(cfg)
    method = args.method or benchmark.default_method
    stem = benchmark.output_stem(args.split)
    prefix = "" if method == "viddiff" else f"{method}-"
    return run_method(cfg, args, get_method(method), Path(f"runs/{prefix}{stem}-{args.mode}"))


def cli_baseline(args: argparse.Namespace) -> int:
    """``viddiff baseline``: an LMM baseline over a benchmark selection with the ``viddiff run`` machinery."""
    from viddiff.methods.lmm.baseline import resolve_config

    cfg = resolve_config(config_from_args(args), args.model)
    args.mode = benchmarks.resolve_mode(cfg, args.mode)
    safe_model = "".join(c if c.isalnum() or c in "-_." else "_" for c in args.model)
    stem = benchmarks.of(cfg).output_stem(args.split)
    return run_method(cfg, args, get_method("baseline"), Path(f"runs/baseline-{safe_model}-{stem}-{args.mode}"))


def run_method(cfg: Config, args: argparse.Namespace, method: MethodFactory, default_output: Path) -> int:
    """The shared tail of ``run`` and ``baseline``: run, report, exit code (1 when samples failed, answers stayed
    invalid or the scores are incomplete)."""
    if cfg.run.swap_videos and cfg.run.same_video:
        raise ViddiffError("--swap-videos and --same-video are exclusive")
    if (cfg.run.swap_videos or cfg.run.same_video) and args.mode in VIDEO_TASK_MODES:
        raise ViddiffError(
            f"--swap-videos and --same-video reorder a pair; {args.mode} mode asks about one video "
            "(on VidPair-Halluc, `viddiff audit` compares single-video and pair-aware answering instead)"
        )
    output = Path(args.output or cfg.run.output_dir or default_output)
    report, embed = getattr(args, "report", False), getattr(args, "report_embed_videos", False)
    if embed and not report:
        raise ViddiffError("--report-embed-videos needs --report")
    args.output = str(output)  # named by the Ctrl-C hint (viddiff.cli.interrupted_message)
    outcome = run_benchmark(
        cfg, mode=args.mode, splits=args.split, output_dir=output, resume=args.resume, method=method,
        report=report, report_embed_videos=embed,
    )
    print(f"results in {outcome.output_dir}")
    if outcome.n_failed:
        print(
            f"viddiff: {outcome.n_failed} of {outcome.n_samples} samples failed (see {outcome.output_dir}/errors.json); "
            "fix the cause and re-run with --resume"
        )
    if outcome.invalid_answers:
        print(outcome.invalid_answers_line())
    if outcome.incomplete_scores:
        print(f"viddiff: {outcome.incomplete_scores}")
    return 1 if outcome.n_failed or outcome.invalid_answers or outcome.incomplete_scores else 0
