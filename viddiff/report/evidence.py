"""A difference's body-pose evidence as the report shows it: the numbers with their intervals and what they rest
on (or why there are none), the measured series against stage-normalised time for A and B with the quoted
statistic marked where it was read, and skeletons on the keyframes where a pose was found."""

from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np

from viddiff.pose.drawing import draw_skeleton, drawable
from viddiff.pose.measure import shown_interval
from viddiff.pose.view import describe_measured
from viddiff.report.timeline import stage_colour
from viddiff.report.views import (
    EvidencePlot, EvidenceView, PlotLine, PlotMarker, PlotReading, PlotStage, PlotTick,
)
from viddiff.schema import Evidence, EvidenceInterval, EvidencePoint

_W, _H = 720.0, 260.0
_LEFT, _RIGHT, _TOP, _BOTTOM = 78.0, 16.0, 14.0, 52.0
_LABEL_GAP = 15.0
"""Vertical room one reading's label needs (SVG units at 11 px type)."""


def evidence_view(evidence: Evidence, stage_names: Sequence[str]) -> EvidenceView:
    shown = evidence.status != "uncertain"
    return EvidenceView(
        label=evidence.label,
        status=evidence.status,
        value_a=shown_interval(evidence.value_a, evidence.interval_a, evidence.unit) if shown else "",
        value_b=shown_interval(evidence.value_b, evidence.interval_b, evidence.unit) if shown else "",
        reason=evidence.reason,
        estimator=evidence.estimator or "stage durations from the segmentation (no pose model)",
        frames=_support(evidence),
        views=describe_measured(evidence),
        plot=_plot(evidence, stage_names),
    )


def absent_view(reason: str) -> EvidenceView:
    """A statement without a measurement still gets its line: why there is none."""
    return EvidenceView(label="no body measurement", status="absent", reason=reason)


def _support(evidence: Evidence) -> str:
    parts = [
        f"{which}: {interval.frames} frames over {interval.seconds:.2f} s"
        for which, interval in (("A", evidence.interval_a), ("B", evidence.interval_b)) if interval is not None
    ]
    if not parts and (evidence.frames_a or evidence.frames_b):
        parts = [f"{len(evidence.frames_a)} frames of A, {len(evidence.frames_b)} of B"]
    return "; ".join(parts)


def _plot(evidence: Evidence, stage_names: Sequence[str]) -> Optional[EvidencePlot]:
    curve = evidence.curve
    if curve is None or not (curve.stage_time_a or curve.stage_time_b):
        return None
    points = [p for p in (*evidence.keyframes_a, *evidence.keyframes_b) if p.value is not None and p.stage_time is not None]
    bounds = [
        v for interval, value in ((evidence.interval_a, evidence.value_a), (evidence.interval_b, evidence.value_b))
        if value is not None for v in (value - _half(interval), value + _half(interval))
    ]
    values = np.array([v for v in (*curve.a, *curve.b, *(p.value for p in points), *bounds) if v is not None], dtype=float)
    if not len(values):
        return None
    low, high = float(values.min()), float(values.max())
    pad = max((high - low) * 0.08, 1e-6 if high else 1.0, abs(high) * 0.02)
    low, high = low - pad, high + pad
    n_stages = max(len(stage_names), math.ceil(max([*curve.stage_time_a, *curve.stage_time_b, 1.0])))

    def x(u: float) -> float:
        return round(_LEFT + (u / n_stages) * (_W - _LEFT - _RIGHT), 2)

    def y(v: float) -> float:
        return round(_H - _BOTTOM - (v - low) / (high - low) * (_H - _TOP - _BOTTOM), 2)

    stages = [
        PlotStage(x0=x(k), x1=x(k + 1), name=name, colour=stage_colour(k)) for k, name in enumerate(stage_names)
    ]
    lines = [
        PlotLine(video=video, segments=_segments(times, series, x, y))
        for video, times, series in (("A", curve.stage_time_a, curve.a), ("B", curve.stage_time_b, curve.b))
    ]
    markers = [
        PlotMarker(video=video, x=x(p.stage_time), y=y(p.value), label=f"video {video} at its keyframe ({p.time_s:.2f} s): {_number(p.value)}")
        for video, kept in (("A", evidence.keyframes_a), ("B", evidence.keyframes_b))
        for p in kept if p.value is not None and p.stage_time is not None
    ]
    stage = evidence.measurement.stage
    quantity = evidence.measurement.quantity.replace("_", " ")
    return EvidencePlot(
        width=_W, height=_H, left=_LEFT, right=_W - _RIGHT, top=_TOP, bottom=_H - _BOTTOM,
        stages=stages, lines=lines, markers=markers, readings=_readings(evidence, stage, n_stages, x, y),
        ticks=[PlotTick(y=y(v), label=_number(v)) for v in np.linspace(low + pad, high - pad, 4)],
        y_label=f"{quantity} ({evidence.unit})",
        x_label="stage-normalised time: each stage spans the same width in A and B",
        highlight=stages[stage] if stage is not None and stage < len(stages) else None,
    )


def _readings(evidence: Evidence, stage: Optional[int], n_stages: int, x, y) -> list[PlotReading]:
    """Each video's quoted value where it was read, labels moved apart where they would overlap."""
    if evidence.status == "uncertain" or evidence.measurement.statistic == "range":
        return []
    readings = []
    for video, value, interval in (("A", evidence.value_a, evidence.interval_a), ("B", evidence.value_b, evidence.interval_b)):
        if value is None or interval is None:
            continue
        if interval.at_stage_time is not None:
            x0 = x1 = x(interval.at_stage_time)
        else:  # a mean: a level across the window it was taken over
            x0, x1 = (x(0), x(n_stages)) if stage is None else (x(stage), x(stage + 1))
        right_half = x1 > (x(0) + x(n_stages)) / 2
        readings.append(PlotReading(
            video=video, x0=x0, x1=x1, y=y(value), y_low=y(value - _half(interval)), y_high=y(value + _half(interval)),
            label=f"{video} {shown_interval(value, interval, evidence.unit)}",
            label_x=round(x0 - 8 if right_half else x1 + 8, 2), label_y=y(value), anchor="end" if right_half else "start",
        ))
    if len(readings) == 2 and abs(readings[0].label_y - readings[1].label_y) < _LABEL_GAP:
        upper, lower = sorted(readings, key=lambda r: r.label_y)
        middle = (upper.label_y + lower.label_y) / 2
        upper.label_y, lower.label_y = round(middle - _LABEL_GAP / 2, 2), round(middle + _LABEL_GAP / 2, 2)
    for reading in readings:
        reading.label_y = round(reading.label_y + 4, 2)  # the text's baseline, so its middle sits at the value
    return readings


def _half(interval: Optional[EvidenceInterval]) -> float:
    return interval.half_width if interval is not None else 0.0


def _segments(times: Sequence[float], values: Sequence[Optional[float]], x, y) -> list[str]:
    """Polyline point lists, one per run of values without a gap."""
    runs, current = [], []
    for t, v in zip(times, values):
        if v is None:
            if current:
                runs.append(current)
            current = []
            continue
        current.append(f"{x(t)},{y(v)}")
    if current:
        runs.append(current)
    return [" ".join(run) for run in runs if len(run) > 1] + [" ".join(run * 2) for run in runs if len(run) == 1]


def _number(value: float) -> str:
    return f"{value:.3g}"


def skeleton_frame(pixels: np.ndarray, point: Optional[EvidencePoint]) -> tuple[np.ndarray, bool]:
    """The keyframe with the pose drawn that was measured there, and whether anything was drawn (a pose frame
    without a person, or too far from the keyframe, leaves the picture as it is)."""
    if point is None or not drawable(point.keypoints):
        return pixels, False
    height, width = pixels.shape[:2]
    return draw_skeleton(pixels, point.keypoints, scale=(width, height)), True
