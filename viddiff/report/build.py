"""Build a page's view-model from what the method produced and the videos it read.

Inputs are the stage-boundary models (``Sample``, ``SampleResult``), the decoded ``VideoFrames``
(for keyframe pixels and each clip's clock), and, on benchmark runs, the scorer's per-difference
records. Nothing here writes files or renders markup.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence, Union

from viddiff.config import Config
from viddiff.eval.closed import ClosedRecord
from viddiff.eval.open import OpenRecord
from viddiff.report import media
from viddiff.report.evidence import absent_view, evidence_view, skeleton_frame
from viddiff.report.skeleton3d import keyframe_skeletons
from viddiff.report.standins import localised_with_clip
from viddiff.report.timeline import ClipClock, axis_ticks, stage_colour, stage_spans
from viddiff.report.views import (
    AxisTick,
    CheckView,
    CostView,
    DifferenceView,
    EvidenceView,
    FrameView,
    GroundTruthView,
    KeyframeRow,
    LegendEntry,
    MissedTruth,
    ModelEntry,
    NavLink,
    ReportPage,
    SampleInfo,
    StageChip,
    StandInView,
    TaskView,
    TimelineLink,
    TimelineMarker,
    TimelineSegment,
    TimelineTrack,
    TimelineView,
    VideoView,
)
from viddiff.schema import Evidence, EvidencePoint, Keyframes, Prediction, Sample, SampleResult, StageUsage, VideoRef
from viddiff.video import VideoFrames

Record = Union[ClosedRecord, OpenRecord]

VERDICTS = {
    "a": ("a", "More true of video A"),
    "b": ("b", "More true of video B"),
    "c": ("similar", "Similar in both videos (or cannot tell)"),
    None: ("invalid", "No valid answer: the model never answered in the required form"),
}
TRUTH_WORDS = {"a": "video A", "b": "video B", "c": "similar", None: "not labelled"}
OPEN_OUTCOMES = {
    "found": "found: matched, and the verdict agrees",
    "wrong_letter": "matched, but the verdict disagrees",
    "not_matched": "no prediction was matched to it",
    "flip_unverified": "matched, but the opposite check failed, so it is not credited",
    "not_counted": "not scored (ground truth: similar)",
}

# Timeline geometry (SVG user units; the SVG scales to the page width).
_WIDTH, _X0, _RIGHT = 1000.0, 96.0, 16.0
_BAR, _TOP, _GAP = 34.0, 46.0, 70.0
_CHAR_W = 6.6
"""Approximate width of one 12 px character, to decide whether a stage name fits in its bar."""
_LABEL_CHAR_W = 6.4
"""Approximate width of one bold 11 px character of a keyframe label."""
_LABEL_ROWS = 2
_LABEL_ROW_H = 12.0


@dataclass(frozen=True)
class PageContext:
    """What every page of one report shares: config, where the page lives, models, stand-ins."""

    cfg: Config
    page_dir: Path
    models: list[ModelEntry]
    endpoint_stand_ins: list[StandInView]
    clip_stand_in: Optional[StandInView]
    embed_videos: bool = False
    version: str = ""


def seconds(value: float) -> str:
    return f"{value:.2f} s"


def build_page(
    sample: Sample,
    result: SampleResult,
    videos: Optional[tuple[VideoFrames, ...]],
    ctx: PageContext,
    *,
    records: Optional[Sequence[Record]] = None,
    nav: Sequence[NavLink] = (),
    notes: Sequence[str] = (),
    benchmark: bool = False,
    checks: Sequence[CheckView] = (),
    video_names: Optional[Sequence[str]] = None,
    file_names: Optional[Mapping[str, str]] = None,
) -> ReportPage:
    """The page of one comparison, or of one single-video task (``sample.task``: the prompt, the answer and the
    ``checks`` it was scored on). ``videos`` is ``None`` when they could not be read again; ``video_names``
    replace the files' names and paths on the page, ``file_names`` (by path) those of other views and calibrations."""
    clocks = (ClipClock.of(videos[0]), ClipClock.of(videos[1])) if videos and len(videos) == 2 else None
    video_views = [
        _video_view(label, ref, videos[i] if videos else None, ctx, video_names[i] if video_names else None,
                    file_names or {})
        for i, (label, ref) in enumerate(zip("AB", sample.videos))
    ]
    playable = tuple(v.src is not None for v in video_views)
    stage_names = [s.name for s in result.proposal.stages] if result.proposal else []
    predictions = result.predictions
    numbers = {p.key: i + 1 for i, p in enumerate(predictions)}
    keyframes = {k.key: k for k in result.keyframes}
    records = list(records or [])
    differences = [
        _difference_view(
            numbers[p.key], p, result, keyframes.get(p.key), videos, clocks, playable, stage_names, records
        )
        for p in predictions
    ]
    stand_ins = list(ctx.endpoint_stand_ins)
    if ctx.clip_stand_in and localised_with_clip(ctx.cfg, [result]):
        stand_ins.append(ctx.clip_stand_in)
    title = _title(sample, benchmark)
    action = sample.action_description if sample.action_description != sample.action_name else ""
    return ReportPage(
        title=title,
        action=action,
        mode=result.mode,
        videos=video_views,
        any_player=any(playable),
        timeline=_timeline(result, clocks, stage_names, keyframes, numbers) if clocks else None,
        differences=differences,
        missed=_missed(records),
        description=result.description,
        task=_task_view(sample, result, checks),
        models=ctx.models,
        cost=cost_view(result.usage.values()),
        stand_ins=stand_ins,
        notes=[*result.notes, *notes],
        sample=_sample_info(sample, result.mode, records) if benchmark else None,
        nav=list(nav),
        version=ctx.version,
    )


def _task_view(sample: Sample, result: SampleResult, checks: Sequence[CheckView]) -> Optional[TaskView]:
    if sample.task is None:
        return None
    return TaskView(
        prompt=sample.task.prompt, system_prompt=sample.task.system_prompt, response=result.response, checks=list(checks)
    )


def cost_view(usages: Iterable[StageUsage]) -> CostView:
    total = StageUsage()
    for usage in usages:
        total = total.add(usage)
    return CostView(
        calls=total.calls,
        cache_hits=total.cache_hits,
        images=total.images,
        prompt_tokens=total.prompt_tokens,
        completion_tokens=total.completion_tokens,
        cost="unknown (a model has no price in endpoints.prices)" if total.cost_usd is None else f"${total.cost_usd:.4f}",
    )


# ---------------------------------------------------------------------- videos


def _video_view(
    label: str, ref: VideoRef, frames: Optional[VideoFrames], ctx: PageContext, shown_name: Optional[str] = None,
    file_names: Optional[Mapping[str, str]] = None,
) -> VideoView:
    path = Path(ref.path)
    src, note = media.player_source(path, ctx.page_dir, ctx.embed_videos)
    name = shown_name or path.name or str(path)
    common = dict(label=label, path=shown_name or str(path), name=name, src=src, embedded=bool(src) and ctx.embed_videos,
                  views=_views_note(ref, file_names or {}))
    if frames is None:
        unread = "could not be read when this report was written"
        return VideoView(**common, note=f"{note}; {unread}" if note else unread)
    clock = ClipClock.of(frames)
    width, height = frames.size
    trimmed = frames.start > 0 or frames.end < frames.n_frames_source
    return VideoView(
        **common,
        note=note,
        offset_s=clock.offset_s,
        duration_s=round(clock.duration_s, 3),
        fps_original=frames.fps_original,
        fps_used=frames.fps,
        stride=frames.stride,
        n_frames=len(frames.frame_indices),
        frame_size=f"{width}×{height}",
        trim=f"frames {frames.start}–{frames.end} of {frames.n_frames_source}" if trimmed else None,
    )


def _views_note(ref: VideoRef, file_names: Mapping[str, str]) -> Optional[str]:
    """The video's other calibrated views and their calibration, by the names their files had."""
    if not ref.views or ref.calibration is None:
        return None

    def named(path: str) -> str:
        return file_names.get(path) or Path(path).name

    more = "1 more view" if len(ref.views) == 1 else f"{len(ref.views)} more views"
    return f"and {more} for 3D pose: {', '.join(named(v.path) for v in ref.views)}; cameras: {named(ref.calibration)}"


# ---------------------------------------------------------------------- differences


def _difference_view(
    number: int,
    pred: Prediction,
    result: SampleResult,
    kf: Optional[Keyframes],
    videos: Optional[tuple[VideoFrames, ...]],
    clocks: Optional[tuple[ClipClock, ClipClock]],
    playable: tuple[bool, ...],
    stage_names: list[str],
    records: list[Record],
) -> DifferenceView:
    diff = next((d for d in result.proposal.differences if d.key == pred.key), None) if result.proposal else None
    verdict_class, verdict_text = VERDICTS[pred.prediction]
    links = result.proposal.links.get(pred.key, []) if result.proposal else []
    global_scope = diff is not None and diff.scope == "global"
    evidence = next((e for e in result.evidence if e.key == pred.key), None)
    return DifferenceView(
        number=number,
        key=pred.key,
        anchor=f"diff-{number}",
        name=diff.name if diff else pred.key,
        statement=pred.description,
        category=diff.category if diff else None,
        verdict_class=verdict_class,
        verdict_text=verdict_text,
        agreement=pred.agreement.headline if pred.agreement else None,
        disagree=pred.agreement is not None and pred.agreement.outcome == "disagree",
        rationale=pred.rationale,
        stages=[] if global_scope else [StageChip(name=stage_names[i], colour=stage_colour(i)) for i in links],
        scope_note="visible throughout: keyframes spread over the whole clip" if global_scope else None,
        rows=_keyframe_rows(kf, videos, clocks, playable, evidence) if kf else [],
        ground_truth=_ground_truth(pred.key, records),
        evidence=_evidence_view(evidence, result.evidence_absent.get(pred.key), stage_names),
    )


def _evidence_view(evidence: Optional[Evidence], absent: Optional[str], stage_names: list[str]) -> Optional[EvidenceView]:
    """The measurement, or, when pose evidence was asked for and there is none, why (every statement gets a line)."""
    if evidence is not None:
        return evidence_view(evidence, stage_names)
    return absent_view(absent) if absent else None


def _keyframe_rows(
    kf: Keyframes,
    videos: Optional[tuple[VideoFrames, VideoFrames]],
    clocks: Optional[tuple[ClipClock, ClipClock]],
    playable: tuple[bool, bool],
    evidence: Optional[Evidence] = None,
) -> list[KeyframeRow]:
    rows = []
    sides = (kf.a, kf.b)
    poses: tuple[dict[int, EvidencePoint], dict[int, EvidencePoint]] = (
        ({p.frame_index: p for p in evidence.keyframes_a}, {p.frame_index: p for p in evidence.keyframes_b})
        if evidence is not None else ({}, {})
    )
    pairs = itertools.zip_longest(
        zip(sides[0].frame_indices, sides[0].times_s), zip(sides[1].frame_indices, sides[1].times_s)
    )
    for position, (at_a, at_b) in enumerate(pairs):
        row = KeyframeRow(position=position + 1, skeleton3d=keyframe_skeletons(
            poses[0].get(at_a[0]) if at_a else None, poses[1].get(at_b[0]) if at_b else None,
        ))
        for side, at in enumerate((at_a, at_b)):
            if at is None:
                continue
            frame = _frame_view("AB"[side], at[0], at[1], videos[side] if videos else None, poses[side].get(at[0]))
            seek = round(clocks[side].offset_s + at[1], 4) if clocks and playable[side] else None
            if side == 0:
                row.a, row.seek_a = frame, seek
            else:
                row.b, row.seek_b = frame, seek
        rows.append(row)
    return rows


def _frame_view(
    label: str, frame_index: int, time_s: float, frames: Optional[VideoFrames], pose: Optional[EvidencePoint] = None
) -> FrameView:
    """A keyframe's picture, with the measured skeleton drawn on it when the difference has a pose measurement."""
    view = FrameView(video=label, frame_index=frame_index, time_s=time_s)
    if frames is None:
        return view
    pixels, view.skeleton = skeleton_frame(frames.at([frame_index])[0], pose)
    view.src = media.jpeg_data_url(pixels)
    view.width, view.height = media.display_size(pixels.shape[1], pixels.shape[0])
    return view


def _ground_truth(key: str, records: list[Record]) -> list[GroundTruthView]:
    out = []
    for r in records:
        if isinstance(r, ClosedRecord) and r.key == key:
            outcome = "" if r.counted else "not scored (only a/b ground truth is scored)"
            out.append(
                GroundTruthView(answer=TRUTH_WORDS.get(r.gt, str(r.gt)), correct=r.correct if r.counted else None, outcome=outcome)
            )
        elif isinstance(r, OpenRecord) and r.pred_key == key:
            detail = f"matched to the annotated difference “{r.description}”"
            if r.flipped:
                detail += f"; phrased as its opposite, so the verdict counts as {TRUTH_WORDS.get(r.final_letter)}"
            out.append(
                GroundTruthView(
                    answer=TRUTH_WORDS.get(r.gt, str(r.gt)),
                    correct=r.correct if r.counted else None,
                    outcome=OPEN_OUTCOMES.get(r.outcome, r.outcome),
                    detail=detail,
                )
            )
    return out


def _missed(records: list[Record]) -> list[MissedTruth]:
    return [
        MissedTruth(name=r.name, statement=r.description, answer=TRUTH_WORDS.get(r.gt, str(r.gt)), outcome=OPEN_OUTCOMES[r.outcome])
        for r in records
        if isinstance(r, OpenRecord) and r.pred_key is None and r.counted
    ]


def _sample_info(sample: Sample, mode: str, records: list[Record]) -> SampleInfo:
    counted = [r for r in records if r.counted]
    score = None
    if counted:
        right = sum(r.correct for r in counted)
        what = "found" if mode == "open" else "right"
        score = f"{right} of {len(counted)} {what}"
    return SampleInfo(
        sample_key=sample.sample_key, split=sample.split, domain=sample.domain, action_id=sample.action, score=score
    )


# ---------------------------------------------------------------------- timeline


def _timeline(
    result: SampleResult,
    clocks: tuple[ClipClock, ClipClock],
    stage_names: list[str],
    keyframes: dict[str, Keyframes],
    numbers: dict[str, int],
) -> TimelineView:
    extent = max(clocks[0].duration_s, clocks[1].duration_s, 1e-6)
    x1 = _WIDTH - _RIGHT
    unit = (x1 - _X0) / extent

    def x(t: float) -> float:
        return round(_X0 + min(max(t, 0.0), extent) * unit, 2)

    ys = (_TOP, _TOP + _BAR + _GAP)
    tracks = []
    for side, label in enumerate("AB"):
        seg = result.segmentations[side] if result.segmentations else None
        spans = stage_spans(seg.frame_indices, seg.spans, stage_names, clocks[side]) if seg else []
        segments = []
        for span in spans:
            width = round(x(span.end_s) - x(span.start_s), 2)
            fit = int((width - 8) / _CHAR_W)
            text = span.name if len(span.name) <= fit else (span.name[: fit - 1] + "…" if fit >= 4 else "")
            segments.append(
                TimelineSegment(
                    stage=span.stage, name=span.name, x=x(span.start_s), width=width, colour=stage_colour(span.stage),
                    start_s=round(span.start_s, 3), end_s=round(span.end_s, 3), show_label=bool(text), label=text,
                )
            )
        tracks.append(
            TimelineTrack(
                label=label, y=ys[side], end_x=x(clocks[side].duration_s),
                duration_label=seconds(clocks[side].duration_s), segments=segments,
                markers=_markers(side, keyframes, numbers, x),
            )
        )
    axis_y = ys[1] + _BAR + 34 + _LABEL_ROW_H * (_LABEL_ROWS - 1)
    return TimelineView(
        label_row_height=_LABEL_ROW_H,
        width=_WIDTH, height=axis_y + 30, x0=_X0, x1=x1, extent_s=extent, units_per_second=unit,
        bar_height=_BAR, axis_y=axis_y,
        ticks=[AxisTick(x=x(t), label=f"{t:g} s") for t in axis_ticks(extent)],
        tracks=tracks, links=_links(keyframes, numbers, x),
        legend=[LegendEntry(name=name, colour=stage_colour(i)) for i, name in enumerate(stage_names)],
    )


def _middle(times: list[float]) -> Optional[float]:
    return times[len(times) // 2] if times else None


def _markers(side: int, keyframes: dict[str, Keyframes], numbers: dict[str, int], x) -> list[TimelineMarker]:
    """One marker per distinct keyframe time; labelled with the differences whose middle keyframe it is."""
    at: dict[float, tuple[set[int], set[int]]] = {}
    for key, kf in keyframes.items():
        if key not in numbers:
            continue
        times = (kf.a if side == 0 else kf.b).times_s
        middle = _middle(times)
        for t in times:
            tagged, touched = at.setdefault(round(t, 3), (set(), set()))
            touched.add(numbers[key])
            if t == middle:
                tagged.add(numbers[key])
    markers = []
    row_ends = [-math.inf] * _LABEL_ROWS
    for t in sorted(at):
        tagged, touched = at[t]
        label = number_ranges(sorted(tagged))
        half = len(label) * _LABEL_CHAR_W / 2
        # Stagger labels that would overlap the previous one into the next row (the last row takes the rest).
        row = next((r for r, end in enumerate(row_ends) if x(t) - half > end + 4), _LABEL_ROWS - 1)
        if label:
            row_ends[row] = x(t) + half
        markers.append(
            TimelineMarker(
                x=x(t), time_s=t, numbers=sorted(touched), label=label, row=row, href=f"#diff-{min(tagged or touched)}"
            )
        )
    return markers


def number_ranges(numbers: list[int]) -> str:
    """``[1, 2, 3, 5, 7, 8]`` → ``"1–3,5,7–8"``: keyframes shared by many differences stay short labels."""
    parts = []
    for _, run in itertools.groupby(enumerate(numbers), key=lambda item: item[1] - item[0]):
        values = [v for _, v in run]
        parts.append(str(values[0]) if len(values) == 1 else f"{values[0]}–{values[-1]}")
    return ",".join(parts)


def _links(keyframes: dict[str, Keyframes], numbers: dict[str, int], x) -> list[TimelineLink]:
    seen: dict[tuple[float, float], TimelineLink] = {}
    for key, kf in sorted(keyframes.items(), key=lambda kv: numbers.get(kv[0], math.inf)):
        if key not in numbers:
            continue
        ta, tb = _middle(kf.a.times_s), _middle(kf.b.times_s)
        if ta is None or tb is None:
            continue
        link = TimelineLink(x_a=x(ta), x_b=x(tb), number=numbers[key])
        seen.setdefault((link.x_a, link.x_b), link)
    return list(seen.values())


def _title(sample: Sample, benchmark: bool) -> str:
    """A benchmark page: its sample and action (ViDiC-1K's pairs have no action name: "sample 0", not "0 ·")."""
    if not benchmark:
        return f"VidDiff: {sample.action_name}"
    return f"{sample.sample_key} · {sample.action_name}" if sample.action_name else f"sample {sample.sample_key}"
