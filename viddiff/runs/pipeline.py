"""``viddiff run``: the VidDiff method over a benchmark split, resumable, then scored.

All samples' model calls run concurrently (bounded by the chat client and by
``run.max_samples_in_flight``); each finished sample is appended to
``samples.jsonl`` at once, so a killed run resumes without losing or
repeating work. Samples are isolated from each other (``sample_runner.py``):
one that fails is recorded and retried by ``--resume``.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import functools
import logging
from pathlib import Path
from typing import Callable, Iterable, NamedTuple, Optional, Sequence

from pydantic import BaseModel

from viddiff import benchmarks
from viddiff.benchmarks.base import Benchmark
from viddiff.config import Config
from viddiff.runs.cost_guard import CostGuard, check_prices, dollars, total_cost
from viddiff.data.dataset import Dataset
from viddiff.errors import CostLimitError, ViddiffError
from viddiff.eval.report import METRICS_FILE, note_in_metrics, note_in_report, note_invalid_answers
from viddiff.methods import Method, MethodFactory, check_mode, get_method
from viddiff.runs.failures import ERRORS_FILE, FAILURES_FILE, FailureLog, SampleFailure
from viddiff.runs.output_lock import LOCK_FILE, OutputDirLock
from viddiff.runs.ray_method import build_method
from viddiff.runs.resume import check_resume
from viddiff.runs.sample_runner import SampleRunner, error_entries, latest_failures
from viddiff.schema import Mode, RetrievalFrames, Sample, SampleResult, StageUsage
from viddiff.report.standins import RUN_SHOWS, localised_with_clip, note_lines, notice_of, stand_in_views
from viddiff.report.views import StandInView
from viddiff.store import (
    SAMPLES_FILE,
    ResultsStore,
    output_error,
    prepare_output_dir,
    refuse_links,
    write_json_atomic,
    write_text_atomic,
)

log = logging.getLogger(__name__)


class RunOutcome(BaseModel):
    output_dir: str
    n_samples: int
    n_failed: int
    metrics: dict
    n_verdicts: int = 0
    """Verdicts the finished samples hold (one per difference asked about)."""
    invalid_answers: dict[str, list[str]] = {}
    """Sample key → difference keys whose answers stayed invalid (null predictions, counted wrong)."""
    incomplete_scores: str = ""
    """Why the scores are incomplete (the judge's answers stayed invalid), or ``""``."""
    stand_ins: list[StandInView] = []
    """The stand-ins (scripted server, random CLIP) that produced these numbers; empty when real models did.
    Commands made of several runs (``audit``, ``ablate``) repeat them beside their own tables."""

    @property
    def n_invalid(self) -> int:
        """Answers that stayed invalid, over all samples."""
        return sum(len(keys) for keys in self.invalid_answers.values())

    def invalid_answers_line(self) -> str:
        """What the end of a run says when some answers stayed invalid ('' when none did)."""
        if not self.invalid_answers:
            return ""
        n_finished = self.n_samples - self.n_failed
        return (
            f"viddiff: {self.n_invalid} of {self.n_verdicts} answers in {len(self.invalid_answers)} of {n_finished} "
            "samples stayed invalid after the re-asks; their predictions are null and count as wrong "
            f"(the answers are under raw_answers in {self.output_dir}/{SAMPLES_FILE})"
        )


def invalid_answers_across(what: str, counts: dict[str, tuple[int, int]]) -> str:
    """The end line of a command made of several runs (``audit``, ``ablate``) when answers stayed invalid in
    any: ``counts`` maps each run's name to (invalid answers, answers); '' when none stayed invalid."""
    if not any(invalid for invalid, _ in counts.values()):
        return ""
    listed = ", ".join(f"{name}: {invalid} of {total}" for name, (invalid, total) in counts.items())
    return (
        f"viddiff: answers stayed invalid in {what}: {listed}; their predictions are null and count as wrong "
        "(the answers are under raw_answers in each run's samples.jsonl)"
    )


class _Scored(NamedTuple):
    outcome: RunOutcome
    metrics: BaseModel
    results: dict[str, SampleResult]
    failures: list[SampleFailure]
    dataset: Dataset
    """The samples scored: the selection, or those that ran when the budget stopped the run."""
    stopped: Optional[CostLimitError]
    """Raised once the outputs are written: the budget stopped the run before every sample ran."""


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


def invalid_answers(results: dict[str, SampleResult]) -> dict[str, list[str]]:
    """Sample key → keys of the verdicts that got no valid answer (recorded, never guessed)."""
    found = {
        key: [p.key for p in result.predictions if p.prediction is None and not p.votes and p.raw_answers]
        for key, result in results.items()
    }
    return {key: keys for key, keys in found.items() if keys}


def total_usage(
    results: dict[str, SampleResult], failures: Sequence[SampleFailure] = ()
) -> dict[str, StageUsage]:
    """Per-stage usage of the finished samples plus every failed attempt (those calls were paid for too)."""
    totals: dict[str, StageUsage] = {}
    for by_stage in [r.usage for r in results.values()] + [f.usage for f in failures]:
        for stage, usage in by_stage.items():
            totals[stage] = totals.get(stage, StageUsage()).add(usage)
    return totals


def _write_usage(
    out_dir: Path, vd, results: dict[str, SampleResult], failures: list[SampleFailure]
) -> dict[str, StageUsage]:
    usage = total_usage(results, failures)
    clip_stats = getattr(vd, "clip_stats", lambda: None)()
    write_json_atomic(
        out_dir / "usage.json",
        {
            "by_stage": {k: v.model_dump() for k, v in usage.items()},
            "clip": clip_stats,
            "n_samples": len(results),
            "failed_attempts": len(failures),
        },
    )
    return usage


def _save_usage_after_stop(out_dir: Path, vd, results: dict[str, SampleResult], failure_log: FailureLog) -> None:
    """Record what the stopped run paid for; a full disk must not hide the error that stopped it."""
    try:
        _write_usage(out_dir, vd, results, failure_log.load())
    except ViddiffError as exc:
        log.info("usage.json not updated: %s", exc)


def _with_resume_hint(exc: ViddiffError, *, finished: bool, wrote: bool) -> ViddiffError:
    """The run-ending error (same type), saying how to go on once the directory holds something."""
    if not (finished or wrote) or "--resume" in str(exc):
        return exc
    kept = "finished samples are kept: " if finished else ""
    hinted = copy.copy(exc)
    hinted.args = (f"{exc}; {kept}fix this, then re-run with --resume",)
    return hinted


def run_benchmark(
    cfg: Config,
    *,
    mode: Mode,
    splits: Optional[list[str]],
    output_dir: Path,
    resume: bool = False,
    method: Optional[MethodFactory] = None,
    report: bool = False,
    report_embed_videos: bool = False,
    dataset: Optional[Dataset] = None,
) -> RunOutcome:
    """Run a method (``method(cfg)``: VidDiff by default; any :class:`viddiff.methods.Method` factory) over
    the selection of ``cfg.data.benchmark`` and score it with that benchmark.

    The output directory is locked for the whole run (one writer per directory). Failed samples are
    recorded and retried by ``--resume``; errors that every sample would hit stop the run at once.
    ``report`` writes ``report/`` (HTML, see ``viddiff.report.run``); ``run.save_visuals`` writes ``visuals/``.
    Both are drawn at the end from every finished sample, so a resumed run gets them for all its samples.
    ``dataset``: samples already loaded (or derived from the selection, as ``viddiff audit`` does) instead of
    loading ``cfg``'s selection.
    """
    benchmark = benchmarks.of(cfg)
    if dataset is None:
        dataset = benchmark.load(cfg, splits)
    benchmark.check_selection(dataset, mode)
    out_dir = prepare_output_dir(output_dir)
    _refuse_linked_outputs(out_dir)
    variant_of = functools.partial(sanity_variant, swap_videos=cfg.run.swap_videos, same_video=cfg.run.same_video)
    with OutputDirLock(out_dir):
        vd = build_method(cfg, method or get_method("viddiff"), dataset.samples)
        try:
            check_mode(vd, mode)
            scored = _run_locked(cfg, benchmark, dataset, mode, splits, out_dir, resume, vd, variant_of)
        finally:
            asyncio.run(vd.aclose())
        if report or cfg.run.save_visuals:
            from viddiff.report.run import write_run_outputs

            try:
                index = write_run_outputs(
                    out_dir, benchmark, scored.dataset, scored.results, scored.metrics, cfg, mode,
                    error_entries(scored.failures), variant=variant_of, report=report, visuals=cfg.run.save_visuals,
                    embed_videos=report_embed_videos, method_calls=list(vd.model_calls().items()),
                )
            except OSError as exc:
                raise output_error(Path(exc.filename or out_dir), exc) from None
            if index is not None:
                print(f"report in {index}")
        if scored.stopped is not None:
            raise scored.stopped
        return scored.outcome


def _refuse_linked_outputs(out_dir: Path) -> None:
    """Files a run appends to or writes into, as links, would take its writes outside ``out_dir``.

    (Files written whole are replaced atomically, which replaces a link instead of following it.)
    """
    from viddiff.report.run import REPORT_DIR, VISUALS_DIR

    refuse_links(out_dir, (LOCK_FILE, SAMPLES_FILE, FAILURES_FILE, REPORT_DIR, VISUALS_DIR))


def _run_locked(
    cfg: Config,
    benchmark: Benchmark,
    dataset: Dataset,
    mode: Mode,
    splits: Optional[list[str]],
    out_dir: Path,
    resume: bool,
    vd: Method,
    variant_of: Callable[[Sample], Sample],
) -> "_Scored":
    store = ResultsStore(out_dir)
    failure_log = FailureLog(out_dir)
    run_info = {
        "mode": mode,
        "splits": sorted(splits) if splits else None,
        "dataset": dataset.source,
        "method": vd.name,
    }
    if store.has_records() or failure_log.has_records():
        if not resume:
            raise ViddiffError(f"{out_dir} already holds results; pass --resume to continue it, or choose a new --output")
        check_resume(out_dir, cfg, run_info)
    done = store.load()
    past_failures = failure_log.load()
    unknown = set(done) - {s.sample_key for s in dataset}
    if unknown:
        raise ViddiffError(f"cannot resume {out_dir}: it holds samples not in this dataset selection ({len(unknown)})")
    check_prices(cfg, vd.model_calls())
    write_text_atomic(out_dir / "config.yaml", cfg.to_yaml())
    write_json_atomic(out_dir / "run.json", run_info)
    todo = [(i, s) for i, s in enumerate(dataset) if s.sample_key not in done]
    if done:
        log.info("resuming: %d of %d samples already done", len(done), len(dataset))

    spent_before = total_cost([r.usage for r in done.values()] + [f.usage for f in past_failures])
    guard = CostGuard(cfg.run.max_cost_usd, len(todo), spent_before)
    runner = SampleRunner(vd, cfg, mode, store, failure_log, guard, variant_of)
    try:
        progress = asyncio.run(runner.run(todo))
    except ViddiffError as exc:
        if runner.progress.wrote:
            _save_usage_after_stop(out_dir, vd, done | runner.progress.results, failure_log)
        raise _with_resume_hint(exc, finished=bool(done or runner.progress.results), wrote=runner.progress.wrote) from None
    done.update(progress.results)
    failures = latest_failures(progress.failures, {s.sample_key for s in dataset} - set(done))
    failed_keys = frozenset(f.sample_key for f in failures)
    n_selected = len(dataset)
    if guard.stop_reason is not None:  # score what ran; --resume runs the rest and scores the whole selection
        dataset = dataclasses.replace(dataset, samples=[s for s in dataset if s.sample_key in done or s.sample_key in failed_keys])
    predictions = benchmark.predictions(dataset, done, mode, failed_keys)
    write_json_atomic(out_dir / "predictions.json", predictions)
    if failures:
        write_json_atomic(out_dir / ERRORS_FILE, error_entries(failures))
    else:
        (out_dir / ERRORS_FILE).unlink(missing_ok=True)  # a resume fixed what failed before
    usage = _write_usage(out_dir, vd, done, failure_log.load())
    metrics = benchmark.score(dataset, predictions, mode, cfg, vd.client)
    benchmark.write_report(
        out_dir, metrics, cfg=cfg, dataset_source=dataset.source, dataset_revision=dataset.revision,
        failed_samples=sorted(failed_keys),
    )
    invalid = invalid_answers(done)
    n_verdicts = sum(len(r.predictions) for r in done.values())
    if invalid:
        note_invalid_answers(out_dir, invalid, n_verdicts)
    print(benchmark.format_table(metrics))
    print(_format_usage(usage, len(done)))
    stand_ins = _stand_ins(cfg, benchmark, mode, vd, done.values())
    if stand_ins:
        print(notice_of(stand_ins, RUN_SHOWS))
        note_in_report(out_dir, notice_of(stand_ins, RUN_SHOWS))
        note_in_metrics(out_dir, "stand_ins", note_lines(stand_ins))
    stopped = None
    if guard.stop_reason is not None:
        stopped = guard.stop_error(total_cost([usage]), len(done), n_selected)
        note_in_report(out_dir, f"Incomplete: {len(dataset)} of {n_selected} samples are scored. {stopped}")
    outcome = RunOutcome(
        output_dir=str(out_dir), n_samples=len(dataset), n_failed=len(failures), metrics=metrics.model_dump(mode="json"),
        n_verdicts=n_verdicts, invalid_answers=invalid,
        incomplete_scores=benchmark.incomplete_scores(metrics, out_dir / METRICS_FILE), stand_ins=stand_ins,
    )
    return _Scored(outcome, metrics, done, failures, dataset, stopped)


def _stand_ins(
    cfg: Config, benchmark: Benchmark, mode: Mode, vd: Method, results: Iterable[SampleResult]
) -> list[StandInView]:
    """What the HTML report's banner names, for the console and the files: the models that answered were stand-ins.
    CLIP counts when it localised any of the results scored, also those of an earlier session (``--resume``)."""
    roles = [*vd.model_calls().items(), *benchmark.judge_calls(cfg, mode)]
    return stand_in_views(cfg, roles, clip_used=localised_with_clip(cfg, results))


def _format_usage(usage: dict[str, StageUsage], n_samples: int) -> str:
    lines = ["stage        calls  cached  images  tokens(in/out)   est. cost"]
    for stage, u in sorted(usage.items()):
        cost = "unknown" if u.cost_usd is None else dollars(u.cost_usd)[0]
        lines.append(
            f"{stage:<12} {u.calls:>5}  {u.cache_hits:>6}  {u.images:>6}  {u.prompt_tokens:>7}/{u.completion_tokens:<7}  {cost}"
        )
    total = StageUsage()
    for u in usage.values():
        total = total.add(u)
    if n_samples and total.cost_usd is not None:
        lines.append(f"per sample: {dollars(total.cost_usd / n_samples)[0]}")
    return "\n".join(lines)
