"""``viddiff run``: the VidDiff method over a benchmark split, resumable, then scored.

All samples' model calls run concurrently (bounded by the chat client and by
``run.max_samples_in_flight``); each finished sample is appended to
``samples.jsonl`` at once, so a killed run resumes without losing or
repeating work.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Optional

from pydantic import BaseModel

from viddiff.api import VidDiff
from viddiff.config import Config, config_from_args, resolve_mode
from viddiff.console import stage_progress
from viddiff.data import load_benchmark
from viddiff.data.viddiffbench import Dataset
from viddiff.errors import InvalidAnswerError, VideoError, ViddiffError
from viddiff.eval import evaluate_dataset, format_table, write_report
from viddiff.schema import Mode, RetrievalFrames, Sample, SampleResult, StageUsage
from viddiff.store import ResultsStore, prepare_output_dir, write_json_atomic, write_text_atomic

log = logging.getLogger(__name__)


class RunOutcome(BaseModel):
    output_dir: str
    n_samples: int
    n_failed: int
    metrics: dict


def sanity_variant(sample: Sample, *, swap_videos: bool, same_video: bool) -> Sample:
    """Paper sanity checks: A↔B (predictions should flip) or B := A (should split evenly)."""
    if not (swap_videos or same_video):
        return sample
    a, b = sample.videos
    rf = sample.retrieval_frames
    if swap_videos:
        videos = (b, a)
        if rf is not None:
            rf = RetrievalFrames(
                stages=(rf.stages[1], rf.stages[0]) if rf.stages else None,
                keyframes={k: (v[1], v[0]) for k, v in rf.keyframes.items()},
            )
    else:
        videos = (a, a)
        if rf is not None:
            rf = RetrievalFrames(
                stages=(rf.stages[0], rf.stages[0]) if rf.stages else None,
                keyframes={k: (v[0], v[0]) for k, v in rf.keyframes.items()},
            )
    return sample.model_copy(update={"videos": videos, "retrieval_frames": rf})


def predictions_file(dataset: Dataset, results: dict[str, SampleResult], mode: Mode) -> list[dict]:
    """Official VidDiffBench prediction format, aligned with dataset order.

    Closed: ``{key: "a"|"b"|"c"|null}`` (null = no valid answer, scored wrong).
    Open: only differences predicted ``a``/``b`` are claims; ``c`` and invalid ones are left out.
    Describe (ViDiC-1K responses): ``{"id": sample_key, "response": text}`` ("" when the sample failed).
    """
    out: list[dict] = []
    for sample in dataset:
        result = results.get(sample.sample_key)
        if mode == "describe":
            out.append({"id": sample.sample_key, "response": (result.description or "") if result else ""})
            continue
        if result is None:
            out.append({})
            continue
        if mode == "closed":
            out.append({p.key: p.prediction for p in result.predictions})
        else:
            out.append(
                {
                    p.key: {"description": p.description, "prediction": p.prediction}
                    for p in result.predictions
                    if p.prediction in ("a", "b")
                }
            )
    return out


def total_usage(results: dict[str, SampleResult]) -> dict[str, StageUsage]:
    totals: dict[str, StageUsage] = {}
    for result in results.values():
        for stage, usage in result.usage.items():
            totals[stage] = totals.get(stage, StageUsage()).add(usage)
    return totals


def _check_resume(out_dir: Path, cfg: Config, run_info: dict) -> None:
    """Refuse to resume a directory made with a different config / mode / dataset (results would mix)."""
    import json

    import yaml

    saved_cfg = out_dir / "config.yaml"
    saved_run = out_dir / "run.json"
    if not saved_cfg.exists() or not saved_run.exists():
        raise ViddiffError(f"{out_dir} has samples.jsonl but no config.yaml/run.json; it was not made by viddiff run")
    old = yaml.safe_load(saved_cfg.read_text())
    new = cfg.model_dump(mode="json")
    diffs = sorted(_diff_keys(old, new))
    if diffs:
        raise ViddiffError(f"cannot resume {out_dir}: config differs in {', '.join(diffs)}; use a new --output")
    old_run = json.loads(saved_run.read_text())
    changed = [k for k in run_info if old_run.get(k) != run_info[k]]
    if changed:
        raise ViddiffError(f"cannot resume {out_dir}: {', '.join(changed)} changed since the run started; use a new --output")


def _diff_keys(old, new, prefix: str = "") -> list[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        keys = set(old) | set(new)
        return [d for k in keys for d in _diff_keys(old.get(k), new.get(k), f"{prefix}{k}.")]
    return [] if old == new else [prefix.rstrip(".")]


async def _process_all(
    vd, todo: list[tuple[int, Sample]], mode: Mode, store: ResultsStore, cfg: Config
) -> tuple[dict[str, SampleResult], list[dict]]:
    sem = asyncio.Semaphore(cfg.run.max_samples_in_flight)
    bars = stage_progress(vd.stages, len(todo))
    results: dict[str, SampleResult] = {}
    failures: list[dict] = []

    async def one(index: int, sample: Sample) -> None:
        async with sem:
            try:
                variant = sanity_variant(sample, swap_videos=cfg.run.swap_videos, same_video=cfg.run.same_video)
                videos = await vd.load_videos(variant)
                result = await vd.aprocess(
                    variant, mode, index=index, videos=videos, on_stage=lambda s: bars[s].update(1)
                )
            except (InvalidAnswerError, VideoError) as exc:
                log.error("sample %s failed: %s", sample.sample_key, exc)
                failures.append({"sample_key": sample.sample_key, "index": index, "error": str(exc)})
                return
            store.append(result)
            results[sample.sample_key] = result

    try:
        await asyncio.gather(*(one(i, s) for i, s in todo))
    finally:
        for bar in bars.values():
            bar.close()
        await vd.client.aclose()
    return results, failures


def run_benchmark(
    cfg: Config,
    *,
    mode: Mode,
    splits: Optional[list[str]],
    output_dir: Path,
    resume: bool = False,
    method_factory=VidDiff,
    report: bool = False,
    report_embed_videos: bool = False,
) -> RunOutcome:
    """Run a method (VidDiff by default; or e.g. ``LMMBaseline``) over a dataset selection and score it.

    ``report`` writes ``report/`` (HTML, see ``viddiff.report.run``); ``run.save_visuals`` writes ``visuals/``.
    Both are drawn at the end from every finished sample, so a resumed run gets them for all its samples.
    """
    dataset = load_benchmark(cfg, splits=splits)
    out_dir = prepare_output_dir(output_dir)
    store = ResultsStore(out_dir)
    run_info = {"mode": mode, "splits": sorted(splits) if splits else None, "dataset": dataset.source}
    if store.path.exists() and store.path.stat().st_size > 0:
        if not resume:
            raise ViddiffError(f"{out_dir} already holds results; pass --resume to continue it, or choose a new --output")
        _check_resume(out_dir, cfg, run_info)
    done = store.load()
    unknown = set(done) - {s.sample_key for s in dataset}
    if unknown:
        raise ViddiffError(f"cannot resume {out_dir}: it holds samples not in this dataset selection ({len(unknown)})")
    write_text_atomic(out_dir / "config.yaml", cfg.to_yaml())
    write_json_atomic(out_dir / "run.json", run_info)
    todo = [(i, s) for i, s in enumerate(dataset) if s.sample_key not in done]
    if done:
        log.info("resuming: %d of %d samples already done", len(done), len(dataset))

    vd = method_factory(cfg)
    try:
        new, failures = asyncio.run(_process_all(vd, todo, mode, store, cfg))
        done.update(new)
        predictions = predictions_file(dataset, done, mode)
        write_json_atomic(out_dir / "predictions.json", predictions)
        if failures:
            write_json_atomic(out_dir / "errors.json", failures)
        else:
            (out_dir / "errors.json").unlink(missing_ok=True)  # a resume fixed what failed before
        usage = total_usage(done)
        clip_stats = getattr(vd, "clip_stats", lambda: None)()
        write_json_atomic(
            out_dir / "usage.json",
            {"by_stage": {k: v.model_dump() for k, v in usage.items()}, "clip": clip_stats, "n_samples": len(done)},
        )
        metrics = evaluate_dataset(dataset, predictions, mode, cfg, client=vd.client)
        write_report(out_dir, metrics, cfg=cfg, dataset_source=dataset.source, dataset_revision=dataset.revision)
    finally:
        asyncio.run(vd.aclose())
    print(format_table(metrics))
    print(_format_usage(usage, len(done)))
    if report or cfg.run.save_visuals:
        from viddiff.report.run import write_run_outputs

        def variant(sample: Sample) -> Sample:
            return sanity_variant(sample, swap_videos=cfg.run.swap_videos, same_video=cfg.run.same_video)

        index = write_run_outputs(
            out_dir, dataset, done, metrics, cfg, mode, failures,
            variant=variant, report=report, visuals=cfg.run.save_visuals, embed_videos=report_embed_videos,
        )
        if index is not None:
            print(f"report in {index}")
    return RunOutcome(
        output_dir=str(out_dir), n_samples=len(dataset), n_failed=len(failures), metrics=metrics.model_dump(mode="json")
    )


def _format_usage(usage: dict[str, StageUsage], n_samples: int) -> str:
    lines = ["stage        calls  cached  images  tokens(in/out)   est. cost"]
    for stage, u in sorted(usage.items()):
        cost = "unknown" if u.cost_usd is None else f"${u.cost_usd:.4f}"
        lines.append(
            f"{stage:<12} {u.calls:>5}  {u.cache_hits:>6}  {u.images:>6}  {u.prompt_tokens:>7}/{u.completion_tokens:<7}  {cost}"
        )
    total = StageUsage()
    for u in usage.values():
        total = total.add(u)
    if n_samples and total.cost_usd is not None:
        lines.append(f"per sample: ${total.cost_usd / n_samples:.4f}")
    return "\n".join(lines)


def cli_run(args) -> int:
    cfg = config_from_args(args)
    args.mode = resolve_mode(cfg, args.mode)
    updates = {flag: True for flag in ("swap_videos", "same_video", "save_visuals") if getattr(args, flag)}
    if updates:
        cfg = cfg.model_copy(update={"run": cfg.run.model_copy(update=updates)})
    return cli_run_method(cfg, args, VidDiff, Path(f"runs/{selection_name(cfg, args.split)}-{args.mode}"))


def selection_name(cfg: Config, splits: Optional[list[str]]) -> str:
    """Default results-directory stem: the benchmark (ViDiC-1K) or the splits run."""
    if cfg.data.benchmark == "vidic":
        return "vidic"
    return "-".join(splits) if splits else "all"


def cli_run_method(cfg: Config, args, method_factory, default_output: Path) -> int:
    """Shared tail of ``viddiff run`` and ``viddiff baseline``: run, report, exit code."""
    if cfg.run.swap_videos and cfg.run.same_video:
        raise ViddiffError("--swap-videos and --same-video are exclusive")
    output = Path(args.output or cfg.run.output_dir or default_output)
    report, embed = getattr(args, "report", False), getattr(args, "report_embed_videos", False)
    if embed and not report:
        raise ViddiffError("--report-embed-videos needs --report")
    args.output = str(output)  # named by the Ctrl-C hint (viddiff.cli.interrupted_message)
    outcome = run_benchmark(
        cfg, mode=args.mode, splits=args.split, output_dir=output, resume=args.resume, method_factory=method_factory,
        report=report, report_embed_videos=embed,
    )
    print(f"results in {outcome.output_dir}")
    if outcome.n_failed:
        print(
            f"viddiff: {outcome.n_failed} of {outcome.n_samples} samples failed (see {outcome.output_dir}/errors.json); "
            "fix the cause and re-run with --resume"
        )
        return 1
    return 0
