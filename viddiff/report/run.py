"""``viddiff run --report`` / ``run.save_visuals``: pages and figures for every finished sample.

Called once at the end of a run, from the results as written (``samples.jsonl``) and the metrics,
so a resumed run gets pages and figures for all its samples, not only those it processed itself.
Each sample's videos are read again at the inference fps (one sample in memory at a time).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, Union

from viddiff.benchmarks.base import Benchmark
from viddiff.config import Config, ModelCallConfig
from viddiff.data.dataset import Dataset
from viddiff.errors import VideoError
from viddiff.eval.closed import ClosedMetrics, ClosedRecord
from viddiff.eval.open import OpenMetrics, OpenRecord
from viddiff.report.build import PageContext, build_page, cost_view
from viddiff.report.media import safe_name
from viddiff.report.pages import page_context
from viddiff.report.render import environment, write_page
from viddiff.report.standins import localised_with_clip
from viddiff.report.views import CheckView, IndexEntry, IndexPage, MetricRow, MetricTable, NavLink
from viddiff.schema import VIDEO_TASK_MODES, Sample, SampleResult
from viddiff.video import VideoFrames, read_video_ref, thumbnail, with_stills

log = logging.getLogger(__name__)
REPORT_DIR = "report"
VISUALS_DIR = "visuals"
INDEX_FILE = "index.html"
_THUMB = 64
"""Longest side, in pixels, of the sampled frames a report keeps while it reads a video (it shows only keyframes)."""

Record = Union[ClosedRecord, OpenRecord]


def sample_page_name(index: int, sample_key: str) -> str:
    """Unique, file-system-safe page name (dataset order first, so a listing reads in order)."""
    return f"{index:04d}-{safe_name(sample_key)}.html"


def write_run_outputs(
    out_dir: Path,
    benchmark: Benchmark,
    dataset: Dataset,
    results: dict[str, SampleResult],
    metrics: Any,
    cfg: Config,
    mode: str,
    failures: list[dict],
    *,
    variant: Callable[[Sample], Sample],
    report: bool,
    visuals: bool,
    embed_videos: bool = False,
    method_calls: Optional[Sequence[tuple[str, ModelCallConfig]]] = None,
) -> Optional[Path]:
    """Write ``report/`` (index + one page per sample) and/or ``visuals/``; return the index path if written.

    ``variant`` maps a dataset sample to the pair the method actually saw (``--swap-videos`` /
    ``--same-video``), so pages and figures show the videos in the order they were judged.
    ``method_calls``: the chat models of the method that ran, by role (its ``model_calls()``).
    """
    out_dir = Path(out_dir)
    report_dir = out_dir / REPORT_DIR
    ctx = None
    if report:
        report_dir.mkdir(parents=True, exist_ok=True)
        ctx = page_context(
            cfg, report_dir, judges=benchmark.judge_calls(cfg, mode), method_calls=method_calls,
            clip_used=localised_with_clip(cfg, results.values()), embed_videos=embed_videos,
        )
    if mode in VIDEO_TASK_MODES and benchmark.report_pages == "group":
        return _write_task_report(report_dir, benchmark, dataset, results, metrics, ctx, mode, failures, visuals)
    records = _records_by_sample(metrics)
    done = [(i, s) for i, s in enumerate(dataset) if s.sample_key in results]
    env = environment()
    undrawable = 0
    for position, (index, sample) in enumerate(done):
        result = results[sample.sample_key]
        drawable = result.segmentations is not None
        if visuals and not drawable:
            undrawable += 1
        if not report and not drawable:
            continue
        shown = variant(sample)
        videos, notes = _read_videos(shown, cfg, result)
        if visuals and drawable and videos is not None:
            from viddiff.report.figures import save_sample_visuals

            save_sample_visuals(out_dir / VISUALS_DIR, shown, result, videos)
        if ctx is not None:
            nav = [NavLink(href=INDEX_FILE, label="← all samples")]
            if position > 0:
                nav.append(NavLink(href=sample_page_name(*_key(done[position - 1])), label="← previous"))
            if position + 1 < len(done):
                nav.append(NavLink(href=sample_page_name(*_key(done[position + 1])), label="next →"))
            checks = [CheckView(**c.model_dump()) for c in benchmark.sample_checks(metrics, sample.sample_key)]
            page = build_page(
                shown, result, videos, ctx, records=records.get(sample.sample_key, []), nav=nav, notes=notes,
                benchmark=True, checks=checks,
            )
            write_page(report_dir / sample_page_name(index, sample.sample_key), page, env)
    if undrawable:
        log.warning("run.save_visuals: %d sample(s) have no stage segmentation (e.g. an LMM baseline); no figures for them", undrawable)
    if ctx is None:
        return None
    index_page = IndexPage(
        title=f"viddiff run · {dataset.benchmark} · {mode}",
        headline=benchmark.headline(metrics),
        tables=metric_tables(benchmark, metrics),
        samples=[
            _index_entry(i, s, results.get(s.sample_key), records, failures, benchmark.sample_score(metrics, s.sample_key))
            for i, s in enumerate(dataset)
        ],
        models=ctx.models,
        cost=cost_view(u for r in results.values() for u in r.usage.values()),
        stand_ins=[*ctx.endpoint_stand_ins, *([ctx.clip_stand_in] if ctx.clip_stand_in else [])],
        dataset=dataset.source,
        version=ctx.version,
    )
    return write_page(report_dir / INDEX_FILE, index_page, env)


def _write_task_report(
    report_dir: Path, benchmark: Benchmark, dataset: Dataset, results: dict[str, SampleResult], metrics: Any,
    ctx: Optional[PageContext], mode: str, failures: list[dict], visuals: bool,
) -> Optional[Path]:
    """Single-video tasks: one page per group of samples (a pair's videos with each question and answer)."""
    if visuals:
        log.warning("run.save_visuals: %s mode has no stage segmentation to draw; no figures", mode)
    if ctx is None:
        return None
    from viddiff.report.tasks import write_task_pages

    env = environment()
    entries = write_task_pages(report_dir, benchmark, dataset, results, metrics, ctx, failures, env, mode)
    index_page = IndexPage(
        title=f"viddiff run · {dataset.benchmark} · {mode}",
        headline=benchmark.headline(metrics),
        tables=metric_tables(benchmark, metrics),
        samples=entries,
        sample_heading=["group", "question types", "videos", "questions", "score"],
        models=ctx.models,
        cost=cost_view(u for r in results.values() for u in r.usage.values()),
        stand_ins=list(ctx.endpoint_stand_ins),
        dataset=dataset.source,
        version=ctx.version,
    )
    return write_page(report_dir / INDEX_FILE, index_page, env)


def _key(item: tuple[int, Sample]) -> tuple[int, str]:
    return item[0], item[1].sample_key


def _read_videos(
    sample: Sample, cfg: Config, result: SampleResult
) -> tuple[Optional[tuple[VideoFrames, ...]], list[str]]:
    """The sample's videos at the fps the method used (a task's own rate, where it has one; the ``pose`` method
    segments the same frames, and estimates its pose on its own), with only the keyframes kept whole (pages and
    figures show no other frame); a video that became unreadable leaves the page without frames."""
    task_fps = sample.task.fps if sample.task is not None else None
    fps = cfg.data.fps_by_domain.get(sample.domain, task_fps or cfg.data.default_fps)
    shown = ([f for k in result.keyframes for f in k.a.frame_indices], [f for k in result.keyframes for f in k.b.frame_indices])
    try:
        videos = tuple(
            with_stills(read_video_ref(ref, fps, cfg.data.max_side, cfg.data.video_backend, shrink=thumbnail(_THUMB)), keyframes)
            for ref, keyframes in zip(sample.videos, shown)
        )
    except VideoError as exc:
        log.warning("report: sample %s: %s", sample.sample_key, exc)
        return None, [f"the videos could not be read when this report was written: {exc}"]
    return videos, []


def _records_by_sample(metrics: Any) -> dict[str, list[Record]]:
    out: dict[str, list[Record]] = {}
    if isinstance(metrics, (ClosedMetrics, OpenMetrics)):
        for record in metrics.records:
            out.setdefault(record.sample_key, []).append(record)
    return out


def _index_entry(
    index: int,
    sample: Sample,
    result: Optional[SampleResult],
    records: dict[str, list[Record]],
    failures: list[dict],
    benchmark_score: Optional[str] = None,
) -> IndexEntry:
    failed = next((f.get("error", "failed") for f in failures if f.get("sample_key") == sample.sample_key), None)
    counted = [r for r in records.get(sample.sample_key, []) if r.counted]
    score = benchmark_score or "–"
    if counted:
        what = "found" if isinstance(counted[0], OpenRecord) else "right"
        score = f"{sum(r.correct for r in counted)} of {len(counted)} {what}"
    return IndexEntry(
        href=sample_page_name(index, sample.sample_key) if result is not None else None,
        sample_key=sample.sample_key,
        split=sample.split,
        action=sample.action_name,
        n_differences=len(result.predictions) if result else 0,
        score=score,
        failed=None if result is not None else (failed or "no result"),
    )


def metric_tables(benchmark: Benchmark, metrics: Any) -> list[MetricTable]:
    """The run's score tables (the same rows as ``report.md``)."""
    return [
        MetricTable(title=title, header=header, rows=[MetricRow(cells=[str(c) for c in row]) for row in rows])
        for title, header, rows in benchmark.report_tables(metrics)
    ]
