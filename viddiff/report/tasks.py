"""Report pages for single-video tasks (``caption``, ``qa``): one page per group of samples, all its videos,
and every question with the answer about each video beside how it was scored.

A group is what the benchmark puts in one ``Sample.action`` (VidPair-Halluc: one pair and aspect), so a page
shows both videos of a pair with each question asked of them. What a cell says about scoring comes from the
benchmark (:meth:`~viddiff.benchmarks.base.Benchmark.task_verdicts`); a sample without a result says why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from viddiff.benchmarks.base import Benchmark, TaskVerdict
from viddiff.data.dataset import Dataset
from viddiff.report import media
from viddiff.report.build import PageContext, cost_view
from viddiff.report.render import write_page
from viddiff.report.views import IndexEntry, NavLink, TaskCell, TaskPage, TaskRow, TaskVideo
from viddiff.schema import Sample, SampleResult

QUESTION_MARK = "Question: "


def group_page_name(position: int, group: str) -> str:
    return f"{position:04d}-{media.safe_name(group)}.html"


def task_video(sample: Sample) -> str:
    assert sample.task is not None
    return sample.videos[sample.task.video].path


def question_text(sample: Sample, verdict: Optional[TaskVerdict]) -> str:
    """What to show as the question: the benchmark's own words when it gives them, else the prompt's part after
    ``Question:`` (or the whole prompt)."""
    if verdict is not None and verdict.question:
        return verdict.question
    prompt = sample.task.prompt if sample.task else ""
    return prompt.rsplit(QUESTION_MARK, 1)[-1]


def write_task_pages(
    report_dir: Path,
    benchmark: Benchmark,
    dataset: Dataset,
    results: dict[str, SampleResult],
    metrics: Any,
    ctx: PageContext,
    failures: list[dict],
    env: Any,
    mode: str,
) -> list[IndexEntry]:
    """Write one page per group and return the index's lines (one per group)."""
    verdicts = benchmark.task_verdicts(metrics)
    failed = {f.get("sample_key"): str(f.get("error", "failed")) for f in failures}
    groups: dict[str, list[Sample]] = {}
    for sample in dataset:
        groups.setdefault(sample.action, []).append(sample)
    names = {group: group_page_name(i, group) for i, group in enumerate(groups)}
    order = list(groups)
    entries = []
    for position, (group, samples) in enumerate(groups.items()):
        nav = [NavLink(href="index.html", label="← all groups")]
        if position > 0:
            nav.append(NavLink(href=names[order[position - 1]], label="← previous"))
        if position + 1 < len(order):
            nav.append(NavLink(href=names[order[position + 1]], label="next →"))
        page = _page(group, samples, results, verdicts, failed, ctx, nav, mode)
        write_page(report_dir / names[group], page, env)
        scored = [verdicts[s.sample_key].correct for s in samples if s.sample_key in verdicts]
        right = sum(c is True for c in scored)
        judged = sum(c is not None for c in scored)
        entries.append(
            IndexEntry(
                href=names[group], sample_key=group, split=", ".join(dict.fromkeys(s.split for s in samples)),
                action=samples[0].action_name, n_differences=len(samples),
                score=f"{right} of {judged} right" if judged else "–",
                failed=None if any(s.sample_key in results for s in samples) else "no result",
            )
        )
    return entries


def _page(
    group: str,
    samples: list[Sample],
    results: dict[str, SampleResult],
    verdicts: dict[str, TaskVerdict],
    failed: dict[str, str],
    ctx: PageContext,
    nav: list[NavLink],
    mode: str,
) -> TaskPage:
    paths = list(dict.fromkeys(task_video(s) for s in samples))
    roles = {task_video(s): verdicts[s.sample_key].role for s in samples if s.sample_key in verdicts}
    videos = [_video(f"Video {i + 1}", path, roles.get(path), ctx) for i, path in enumerate(paths)]
    rows: dict[tuple[str, str], TaskRow] = {}
    for s in samples:
        verdict = verdicts.get(s.sample_key)
        question = question_text(s, verdict)
        row = rows.setdefault((s.split, question), TaskRow(kind=s.split, question=question, cells=[None] * len(paths)))
        result = results.get(s.sample_key)
        cell = TaskCell(
            sample_key=s.sample_key,
            answer=result.response if result else None,
            failed=None if result else failed.get(s.sample_key, "no result"),
            pair_aware=bool(s.task and s.task.pair_aware),
        )
        if verdict is not None:
            cell = cell.model_copy(
                update={"reading": verdict.reading, "expected": verdict.expected, "outcome": verdict.outcome, "correct": verdict.correct}
            )
        row.cells[paths.index(task_video(s))] = cell
    used = [u for s in samples if (r := results.get(s.sample_key)) for u in r.usage.values()]
    return TaskPage(
        title=samples[0].action_name or group,
        mode=f"{mode}, pair-aware" if any(s.task and s.task.pair_aware for s in samples) else mode,
        videos=videos,
        rows=list(rows.values()),
        models=ctx.models,
        cost=cost_view(used),
        stand_ins=list(ctx.endpoint_stand_ins),
        notes=list(dict.fromkeys(n for s in samples if (r := results.get(s.sample_key)) for n in r.notes)),
        nav=nav,
        version=ctx.version,
    )


def _video(label: str, path_text: str, role: Optional[str], ctx: PageContext) -> TaskVideo:
    path = Path(path_text)
    src, note = media.player_source(path, ctx.page_dir, ctx.embed_videos)
    return TaskVideo(label=label, role=role, path=str(path), name=path.name, src=src, embedded=bool(src) and ctx.embed_videos, note=note)
