"""One difference's measurement in both videos, and the verdict the numbers alone support.

:func:`measure` reads the kinematics series a :class:`~viddiff.schema.MeasurementSpec` names, restricted to
its stage in each video (the stages come from the localizer's segmentation, so A and B are compared on the
same part of the action), summarises them on stage-normalised time, and returns an
:class:`~viddiff.schema.Evidence`: both values, or, when too few frames of the stage give a confident value
in either video, the reason and no number. :func:`decide` turns a measured evidence into ``a``/``b``/``c``
with a stated margin. Pure: arrays and pydantic models in and out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional, Sequence

import numpy as np

from viddiff.pose.align import resample, stage_grid, stage_time, warp_onto
from viddiff.pose.kinematics import OK, Kinematics, REASON_PRIORITY, describe_reasons
from viddiff.pose.vocabulary import QUANTITIES, label, normalised, series_names
from viddiff.schema import Evidence, EvidenceCurve, EvidencePoint, Letter, MeasurementSpec, VideoKeyframes

_DIGITS = 4


@dataclass(frozen=True)
class VideoMeasures:
    """What one video contributes to a measurement."""

    windows: np.ndarray
    """(K, 2) seconds of each stage (:func:`viddiff.pose.align.stage_windows`)."""
    frame_indices: np.ndarray
    times_s: np.ndarray
    """The frames the segmentation was made on (their frames count for durations)."""
    kinematics: Optional[Kinematics] = None
    """``None`` when no measurement of this sample needs a pose."""
    keyframes: Optional[VideoKeyframes] = None


@dataclass(frozen=True)
class Settings:
    min_coverage: float = 0.5
    points_per_stage: int = 20
    alignment: Literal["stages", "dtw"] = "stages"


def measure(
    key: str,
    spec: MeasurementSpec,
    a: VideoMeasures,
    b: VideoMeasures,
    stage_names: Sequence[str],
    *,
    estimator: Optional[str],
    settings: Settings = Settings(),
) -> Evidence:
    """The evidence for the difference ``key`` (see the module docstring)."""
    spec = normalised(spec)
    if spec.stage is not None and not 0 <= spec.stage < len(stage_names):
        raise ValueError(f"measurement stage {spec.stage} is not one of the {len(stage_names)} stages")
    stage_name = stage_names[spec.stage] if spec.stage is not None else None
    quantity = QUANTITIES[spec.quantity]
    common = dict(key=key, measurement=spec, label=label(spec, stage_name), unit=quantity.unit, stage=stage_name)
    if not quantity.needs_pose:
        return _duration(common, spec, a, b)
    if a.kinematics is None or b.kinematics is None:
        raise ValueError(f"measurement {spec.quantity} needs the pose of both videos")
    names = series_names(spec)
    series = [_combined(video.kinematics, names) for video in (a, b)]
    windows = [_window(video.windows, spec.stage) for video in (a, b)]
    problems, used = [], []
    for which, video, (values, reasons), (start, end) in zip("AB", (a, b), series, windows):
        kin = video.kinematics
        inside = _inside(kin.times_s, start, end)
        n_inside = int(inside.sum())
        valid = inside & np.isfinite(values)
        used.append([int(f) for f in kin.frame_indices[valid]])
        where = f"'{stage_name}'" if stage_name else "the action"
        if n_inside == 0:
            problems.append(f"video {which}: no pose frame falls in {where} (it is shorter than the time between pose frames)")
        elif valid.sum() < settings.min_coverage * n_inside:
            why = describe_reasons(reasons[inside]) or "no confident value"
            problems.append(f"video {which}: {why} in {n_inside - int(valid.sum())} of {n_inside} frames of {where}")
    curve_a, curve_b = (
        resample(video.kinematics.times_s, values, video.windows, settings.points_per_stage)
        for video, (values, _) in zip((a, b), series)
    )
    if settings.alignment == "dtw":
        curve_b = _warped(curve_a, curve_b, len(stage_names), settings.points_per_stage)
    grid = stage_grid(len(stage_names), settings.points_per_stage)
    curve = EvidenceCurve(stage_time=_rounded(grid), a=_rounded(curve_a), b=_rounded(curve_b))
    points = [_points(video, values) for video, (values, _) in zip((a, b), series)]
    evidence = Evidence(
        **common, estimator=estimator, curve=curve, frames_a=used[0], frames_b=used[1],
        keyframes_a=points[0], keyframes_b=points[1], status="uncertain", reason="; ".join(problems),
    )
    if problems:
        return evidence
    points = settings.points_per_stage
    in_stage = slice(spec.stage * points, (spec.stage + 1) * points) if spec.stage is not None else slice(None)
    value_a, value_b = (
        _statistic(spec.statistic, samples=values[_inside(video.kinematics.times_s, start, end)], curve=c[in_stage])
        for video, (values, _), (start, end), c in zip((a, b), series, windows, (curve_a, curve_b))
    )
    if value_a is None or value_b is None:
        return evidence.model_copy(update={"reason": f"the {spec.statistic} is undefined: the curve has a gap there"})
    return evidence.model_copy(update={"status": "measured", "value_a": value_a, "value_b": value_b, "reason": ""})


def decide(evidence: Evidence, margins: dict[str, float]) -> tuple[Optional[Letter], str]:
    """``a``/``b`` where A and B differ by more than the quantity's margin (``c`` otherwise), with the reason;
    ``None`` for an uncertain measurement (no number, no verdict).

    ``margins``: ``angle_deg`` and ``length`` (absolute differences), ``speed_ratio`` and ``duration_ratio``.
    """
    if evidence.status != "measured":
        return None, f"not measured: {evidence.reason}"
    a, b = evidence.value_a, evidence.value_b
    kind = QUANTITIES[evidence.measurement.quantity].margin
    unit = evidence.unit
    numbers = f"{evidence.label}: A {shown_value(a, unit)}, B {shown_value(b, unit)}"
    if kind in ("angle", "length"):
        margin = margins["angle_deg" if kind == "angle" else "length"]
        decisive = abs(a - b) > margin
        gap = f"B − A = {shown_value(b - a, unit, signed=True)}, margin {shown_value(margin, unit)}"
    else:
        ratio = margins[f"{kind}_ratio"]
        low, high = sorted((abs(a), abs(b)))
        decisive = high > 0 and (low == 0 or high / low >= ratio)
        gap = f"ratio {(high / low if low else float('inf')):.3g}, margin ×{ratio:g}"
    if not decisive:
        return "c", f"{numbers} ({gap}): within the margin"
    greater = "a" if a > b else "b"
    letter: Letter = greater if evidence.measurement.direction == "greater" else ("b" if greater == "a" else "a")
    side = "greater" if evidence.measurement.direction == "greater" else "smaller"
    return letter, f"{numbers} ({gap}); the statement holds for the {side} value"


def describe_evidence(evidence: Evidence) -> str:
    """One line for people and prompts: "minimum knee angle during 'descent': video A 92.1°, video B 104°"."""
    if evidence.status != "measured":
        return f"{evidence.label}: not measured reliably ({evidence.reason})"
    return (
        f"{evidence.label}: video A {shown_value(evidence.value_a, evidence.unit)}, "
        f"video B {shown_value(evidence.value_b, evidence.unit)}"
    )


def _duration(common: dict, spec: MeasurementSpec, a: VideoMeasures, b: VideoMeasures) -> Evidence:
    values, used = [], []
    for video in (a, b):
        start, end = _window(video.windows, spec.stage)
        values.append(round(float(end - start), _DIGITS))
        used.append([int(f) for f in video.frame_indices[_inside(video.times_s, start, end)]])
    return Evidence(
        **common, status="measured", value_a=values[0], value_b=values[1], frames_a=used[0], frames_b=used[1]
    )


def _combined(kin: Kinematics, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """One series from one or two (left and right: the mean of the sides found in each frame), with gap reasons."""
    stacked = np.stack([kin.values[n] for n in names])
    reasons = np.stack([kin.reasons[n] for n in names])
    found = np.isfinite(stacked)
    count = found.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(count > 0, np.where(found, stacked, 0.0).sum(axis=0) / count, np.nan)
    combined = np.full(values.shape, OK, dtype=np.int8)
    for code in reversed(REASON_PRIORITY):
        combined[(reasons == code).any(axis=0)] = code
    combined[found.any(axis=0)] = OK
    return values, combined


def _window(windows: np.ndarray, stage: Optional[int]) -> tuple[float, float]:
    if stage is None:
        return float(windows[0, 0]), float(windows[-1, 1])
    return float(windows[stage, 0]), float(windows[stage, 1])


def _inside(times: np.ndarray, start: float, end: float) -> np.ndarray:
    return (times >= start - 1e-9) & (times < end - 1e-9)


def _statistic(statistic: str, *, samples: np.ndarray, curve: np.ndarray) -> Optional[float]:
    """Extremes and ends from the frames themselves (interpolation would shave peaks); the mean over
    stage-normalised time, from the resampled (and, with DTW, warped) curve, so a slow part weighs no more."""
    values = curve if statistic == "mean" else samples
    finite = values[np.isfinite(values)]
    if not len(finite):
        return None
    if statistic == "start":
        result = finite[0]
    elif statistic == "end":
        result = finite[-1]
    elif statistic == "min":
        result = finite.min()
    elif statistic == "max":
        result = finite.max()
    elif statistic == "range":
        result = finite.max() - finite.min()
    else:
        result = finite.mean()
    return round(float(result), _DIGITS)


def _warped(curve_a: np.ndarray, curve_b: np.ndarray, n_stages: int, points: int) -> np.ndarray:
    """B's curve warped onto A's within each stage (stages stay aligned; DTW only moves time inside them)."""
    out = np.array(curve_b, dtype=np.float64)
    for k in range(n_stages):
        part = slice(k * points, (k + 1) * points)
        out[part] = warp_onto(curve_a[part], curve_b[part])
    return out


def _points(video: VideoMeasures, values: np.ndarray) -> list[EvidencePoint]:
    """The quantity and the pose at each keyframe, from the pose frame nearest to it in time."""
    if video.keyframes is None or video.kinematics is None:
        return []
    kin = video.kinematics
    step = float(np.median(np.diff(kin.times_s))) if len(kin.times_s) > 1 else 0.0
    points = []
    for frame_index, time_s in zip(video.keyframes.frame_indices, video.keyframes.times_s):
        u = float(stage_time(np.array([time_s]), video.windows)[0])
        point = EvidencePoint(frame_index=frame_index, time_s=time_s, stage_time=None if np.isnan(u) else round(u, _DIGITS))
        if len(kin.times_s):
            nearest = int(np.argmin(np.abs(kin.times_s - time_s)))
            if abs(kin.times_s[nearest] - time_s) <= step / 2 + 1e-6:
                value = values[nearest]
                point.value = round(float(value), _DIGITS) if np.isfinite(value) else None
                point.pose_frame_index = int(kin.frame_indices[nearest])
                size = (max(kin.width, 1), max(kin.height, 1))
                point.keypoints = [
                    (round(float(x) / size[0], 5), round(float(y) / size[1], 5), round(float(c), 3))
                    if np.isfinite(x) and np.isfinite(y) else None
                    for (x, y), c in zip(kin.xy[nearest], kin.confidence[nearest])
                ]
        points.append(point)
    return points


def _rounded(values: np.ndarray) -> list[Optional[float]]:
    return [round(float(v), _DIGITS) if np.isfinite(v) else None for v in values]


def shown_value(value: float, unit: str, *, signed: bool = False) -> str:
    """A measured value as people read it: three significant digits and its unit ("92.1°", "0.41 s")."""
    number = f"{value:+.3g}" if signed else f"{value:.3g}"
    return f"{number}{unit}" if unit == "°" else f"{number} {unit}"


__all__ = ["Settings", "VideoMeasures", "decide", "describe_evidence", "measure", "shown_value"]
