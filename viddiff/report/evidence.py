"""A difference's body-pose evidence as the report shows it: the numbers (or why there are none), the quantity
against stage-normalised time for A and B with its values at the keyframes, and skeletons on the keyframes."""

from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np

from viddiff.pose.drawing import draw_skeleton
from viddiff.pose.measure import shown_value
from viddiff.report.timeline import stage_colour
from viddiff.report.views import EvidencePlot, EvidenceView, PlotLine, PlotMarker, PlotStage, PlotTick
from viddiff.schema import Evidence, EvidencePoint

_W, _H = 720.0, 240.0
_LEFT, _RIGHT, _TOP, _BOTTOM = 64.0, 12.0, 14.0, 38.0


def evidence_view(evidence: Evidence, stage_names: Sequence[str]) -> EvidenceView:
    measured = evidence.status == "measured"
    frames = f"{len(evidence.frames_a)} frames of A, {len(evidence.frames_b)} of B" if evidence.frames_a or evidence.frames_b else ""
    return EvidenceView(
        label=evidence.label,
        measured=measured,
        value_a=shown_value(evidence.value_a, evidence.unit) if measured else "",
        value_b=shown_value(evidence.value_b, evidence.unit) if measured else "",
        reason=evidence.reason,
        estimator=evidence.estimator or "stage durations from the segmentation (no pose model)",
        frames=frames,
        plot=_plot(evidence, stage_names),
    )


def _plot(evidence: Evidence, stage_names: Sequence[str]) -> Optional[EvidencePlot]:
    curve = evidence.curve
    if curve is None or not curve.stage_time:
        return None
    points = [p for p in (*evidence.keyframes_a, *evidence.keyframes_b) if p.value is not None and p.stage_time is not None]
    values = np.array([v for v in (*curve.a, *curve.b, *(p.value for p in points)) if v is not None], dtype=float)
    if not len(values):
        return None
    low, high = float(values.min()), float(values.max())
    pad = max((high - low) * 0.08, 1e-6 if high else 1.0, abs(high) * 0.02)
    low, high = low - pad, high + pad
    n_stages = max(len(stage_names), math.ceil(max(curve.stage_time)))

    def x(u: float) -> float:
        return round(_LEFT + (u / n_stages) * (_W - _LEFT - _RIGHT), 2)

    def y(v: float) -> float:
        return round(_H - _BOTTOM - (v - low) / (high - low) * (_H - _TOP - _BOTTOM), 2)

    stages = [
        PlotStage(x0=x(k), x1=x(k + 1), name=name, colour=stage_colour(k)) for k, name in enumerate(stage_names)
    ]
    lines = [
        PlotLine(video=video, segments=_segments(curve.stage_time, series, x, y))
        for video, series in (("A", curve.a), ("B", curve.b))
    ]
    markers = [
        PlotMarker(video=video, x=x(p.stage_time), y=y(p.value), label=_number(p.value))
        for video, kept in (("A", evidence.keyframes_a), ("B", evidence.keyframes_b))
        for p in kept if p.value is not None and p.stage_time is not None
    ]
    stage = evidence.measurement.stage
    return EvidencePlot(
        width=_W, height=_H, left=_LEFT, right=_W - _RIGHT, top=_TOP, bottom=_H - _BOTTOM,
        stages=stages, lines=lines, markers=markers,
        ticks=[PlotTick(y=y(v), label=_number(v)) for v in np.linspace(low + pad, high - pad, 4)],
        highlight=stages[stage] if stage is not None and stage < len(stages) else None,
    )


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


def skeleton_frame(pixels: np.ndarray, point: Optional[EvidencePoint]) -> np.ndarray:
    """The keyframe with the pose drawn that was measured there (unchanged where none was)."""
    if point is None or not point.keypoints:
        return pixels
    height, width = pixels.shape[:2]
    return draw_skeleton(pixels, point.keypoints, scale=(width, height))
