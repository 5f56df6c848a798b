"""``--save-visuals``: figures for papers, as PNG (matplotlib, no pyplot state).

Per sample: ``segmentation.png`` (both videos' stages on one axis of seconds, so a 2x slower
performance is twice as long, with numbered keyframe ticks) and ``keyframes_<key>.png`` per
difference (A's keyframes above B's, each labelled with its time, titled with the sample, the
action, the statement and the verdict). The time geometry is the HTML report's
(``viddiff.report.timeline``), so the two never disagree.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from viddiff.report.media import safe_name
from viddiff.report.timeline import ClipClock, stage_colour, stage_spans
from viddiff.schema import Keyframes, Prediction, Sample, SampleResult
from viddiff.video import VideoFrames

if TYPE_CHECKING:
    from matplotlib.figure import Figure

VERDICT_WORDS = {"a": "more true of A", "b": "more true of B", "c": "similar / can't tell", None: "no valid answer"}
PANEL_INCHES = 4.0
"""Long side of one keyframe panel; at ``DPI`` that is 400 px (a person stays judgeable)."""
DPI = 100


def _title(sample: Sample) -> str:
    return f"{sample.sample_key} · {sample.action_name}"


def segmentation_figure(sample: Sample, result: SampleResult, videos: tuple[VideoFrames, VideoFrames]) -> "Figure":
    """Stages of A (top) and B on one axis of seconds, keyframe ticks numbered by difference."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    clocks = (ClipClock.of(videos[0]), ClipClock.of(videos[1]))
    names = [s.name for s in result.proposal.stages] if result.proposal else []
    numbers = {p.key: i + 1 for i, p in enumerate(result.predictions)}
    fig = Figure(figsize=(11, 3.4), dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    rows = {0: 1.0, 1: 0.0}  # A above B
    height = 0.5
    for side in (0, 1):
        y = rows[side]
        ax.barh(y, clocks[side].duration_s, height=height, left=0, color="#eaeef2", edgecolor="#d0d7de")
        seg = result.segmentations[side] if result.segmentations else None
        for span in stage_spans(seg.frame_indices, seg.spans, names, clocks[side]) if seg else []:
            ax.barh(
                y, span.end_s - span.start_s, height=height, left=span.start_s,
                color=stage_colour(span.stage), edgecolor="white", linewidth=1.2,
            )
        _keyframe_ticks(ax, result.keyframes, numbers, side, y, height)
    for kf in result.keyframes:
        if kf.key in numbers and kf.a.times_s and kf.b.times_s:
            ta, tb = kf.a.times_s[len(kf.a.times_s) // 2], kf.b.times_s[len(kf.b.times_s) // 2]
            ax.plot([ta, tb], [rows[0] - height / 2, rows[1] + height / 2], color="#8c959f", lw=0.8, ls="--", zorder=1)
    extent = max(c.duration_s for c in clocks)
    ax.set_xlim(0, extent * 1.01)
    ax.set_ylim(-0.7, 1.75)
    ax.set_yticks([rows[0], rows[1]], [f"A  ({clocks[0].duration_s:.2f} s)", f"B  ({clocks[1].duration_s:.2f} s)"])
    ax.set_xlabel("seconds from the start of each clip")
    ax.grid(axis="x", color="#eaeef2", zorder=0)
    ax.set_axisbelow(True)
    for spine in ("top", "right", "left"):
        ax.spines[spine].set_visible(False)
    ax.set_title(_title(sample), loc="left", fontsize=12, parse_math=False)
    if names:
        handles = [Patch(color=stage_colour(i), label=name) for i, name in enumerate(names)]
        legend = fig.legend(handles=handles, loc="outside lower center", ncols=min(len(names), 4), frameon=False, fontsize=9)
        for text in legend.get_texts():
            text.set_parse_math(False)
    return fig


def _keyframe_ticks(ax, keyframes: list[Keyframes], numbers: dict[str, int], side: int, y: float, height: float) -> None:
    """Ticks at every keyframe; each time labelled once with the differences whose middle keyframe it is."""
    labels: dict[float, list[int]] = {}
    for kf in keyframes:
        if kf.key not in numbers:
            continue
        times = (kf.a if side == 0 else kf.b).times_s
        for t in times:
            ax.plot([t, t], [y - height / 2, y + height / 2], color="#1f2328", lw=1.2, zorder=3)
        if times:
            labels.setdefault(round(times[len(times) // 2], 3), []).append(numbers[kf.key])
    edge = y + height / 2 if side == 0 else y - height / 2
    offset, va, marker = (0.06, "bottom", "v") if side == 0 else (-0.06, "top", "^")
    for t, nums in labels.items():
        ax.plot([t], [edge + offset / 2], marker=marker, color="#1f2328", markersize=5, zorder=4)
        ax.text(t, edge + offset * 1.6, ",".join(map(str, sorted(nums))), ha="center", va=va, fontsize=8, fontweight="bold")


def keyframe_figure(
    sample: Sample,
    number: int,
    pred: Optional[Prediction],
    kf: Keyframes,
    videos: tuple[VideoFrames, VideoFrames],
    stages: Sequence[str] = (),
) -> "Figure":
    """A's keyframes above B's, each with its time; the statement, the verdict and the linked stages in the title."""
    from matplotlib.figure import Figure

    frames = (videos[0].at(kf.a.frame_indices), videos[1].at(kf.b.frame_indices))
    times = (kf.a.times_s, kf.b.times_s)
    indices = (kf.a.frame_indices, kf.b.frame_indices)
    cols = max(len(frames[0]), len(frames[1]), 1)
    h, w = (frames[0] or frames[1])[0].shape[:2] if (frames[0] or frames[1]) else (9, 16)
    panel = (PANEL_INCHES, PANEL_INCHES * h / w) if w >= h else (PANEL_INCHES * w / h, PANEL_INCHES)
    statement = pred.description if pred else kf.key
    verdict = VERDICT_WORDS[pred.prediction] if pred else "not judged"
    fig = Figure(figsize=(panel[0] * cols + 0.6, panel[1] * 2 + 1.6), dpi=DPI, layout="constrained")
    where = f"  (stage: {', '.join(stages)})" if stages else ""
    title = textwrap.fill(f"{number}. {statement}  →  {verdict}{where}", 110)
    fig.suptitle(f"{_title(sample)}\n{title}", x=0.01, ha="left", fontsize=11, parse_math=False)
    axes = fig.subplots(2, cols, squeeze=False)
    for row, label in enumerate("AB"):
        for col in range(cols):
            ax = axes[row][col]
            ax.set_axis_off()
            if col >= len(frames[row]):
                continue
            ax.imshow(np.asarray(frames[row][col]))
            ax.set_title(f"{label} · {times[row][col]:.2f} s (frame {indices[row][col]})", fontsize=10)
    return fig


def save_sample_visuals(
    out_dir: Path, sample: Sample, result: SampleResult, videos: tuple[VideoFrames, VideoFrames]
) -> Path:
    """Write ``<out_dir>/<sample>/segmentation.png`` and ``keyframes_<key>.png``; return the folder."""
    out = Path(out_dir) / safe_name(sample.sample_key)
    out.mkdir(parents=True, exist_ok=True)
    _save(segmentation_figure(sample, result, videos), out / "segmentation.png")
    preds = {p.key: p for p in result.predictions}
    numbers = {p.key: i + 1 for i, p in enumerate(result.predictions)}
    proposal = result.proposal
    local = {d.key for d in proposal.differences if d.scope == "local"} if proposal else set()
    for kf in result.keyframes:
        stages = [proposal.stages[i].name for i in proposal.links.get(kf.key, [])] if kf.key in local else []
        figure = keyframe_figure(sample, numbers.get(kf.key, 0), preds.get(kf.key), kf, videos, stages)
        _save(figure, out / f"keyframes_{safe_name(kf.key)}.png")
    return out


def _save(fig: "Figure", path: Path) -> None:
    fig.savefig(path, dpi=DPI)
