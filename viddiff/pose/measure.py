"""One difference's measurement in both videos, with its interval, and the verdict the numbers alone support.

:func:`measure` reads the kinematics series a :class:`~viddiff.schema.MeasurementSpec` names over its stage in
each video (the stages come from the localizer's segmentation, so A and B are compared on the same part of the
action), over real time (:mod:`viddiff.pose.statistics`), and returns an :class:`~viddiff.schema.Evidence`:
both values with their intervals; or, when too few frames or seconds give a confident value in either video,
the reason and no number; or, when the two cameras see the body from views too different for a 2D quantity to
mean the same thing, both values, the reason and ``not_comparable``. :func:`decide` turns a measured evidence
into ``a``/``b`` only when the difference exceeds both the combined uncertainty and the quantity's smallest
meaningful difference, else ``c`` "within measurement noise". A 2D value is the body's own only where the camera
faces the quantity's plane of motion; elsewhere it is marked as seen in the picture and its interval carries a
calibrated view part, which a verdict between comparable views replaces by the smaller view part of the
difference (docs/pose.md "Accuracy"). Pure: arrays and pydantic models in and out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Literal, Mapping, Optional, Sequence

import numpy as np

from viddiff.pose.align import stage_time, warp_stage_times
from viddiff.pose.difference3d import triangulation_difference
from viddiff.pose.kinematics import OK, Kinematics, REASON_PRIORITY, describe_reasons
from viddiff.pose.statistics import Reading, coverage, frame_noise, inside, read_statistic, running_median, window_samples
from viddiff.pose.view import WORDS, faces_plane, is_triangulated
from viddiff.pose.vocabulary import QUANTITIES, label, normalised, series_names
from viddiff.schema import (
    CameraView, Evidence, EvidenceCurve, EvidenceInterval, EvidencePoint, Letter, MeasurementSpec, Skeleton3D,
    SubjectInfo, VideoKeyframes,
)

_DIGITS = 4
ViewCheck = Callable[[CameraView, CameraView, MeasurementSpec], Optional[str]]
"""Two views and the measurement → ``None`` when it compares between them, else the reason in words."""


@dataclass(frozen=True)
class VideoMeasures:
    """What one video contributes to a measurement."""

    windows: np.ndarray
    """(K, 2) seconds of each stage (:func:`viddiff.pose.align.stage_windows`)."""
    frame_indices: np.ndarray
    times_s: np.ndarray
    """The frames the segmentation was made on (their frames count for durations; their spacing is how
    uncertain a stage boundary is)."""
    kinematics: Optional[Kinematics] = None
    """``None`` when no measurement of this sample needs a pose."""
    keyframes: Optional[VideoKeyframes] = None
    frame_step_s: float = 0.0
    """The source's frame interval: how uncertain the clip's own start and end are."""
    view: Optional[CameraView] = None
    subject: Optional[SubjectInfo] = None
    triangulation_errors: Optional[Mapping[str, float]] = None
    """Per quantity, the triangulation and calibration part of a 3D performance's value (its ``view`` part;
    :attr:`viddiff.pose.multiview.PerformancePose.triangulation_errors`); ``None`` for one video."""
    calibration_errors: Optional[Mapping[str, float]] = None
    """Per quantity, the part of :attr:`triangulation_errors` that the calibration's reported error adds (not shared
    between two setups: it stays in a difference); ``None`` for one video or a calibration that reports none."""
    skeleton: Optional[Callable[[float], Skeleton3D]] = None
    """A 3D performance's body at a time of its main video (:meth:`viddiff.pose.multiview.PerformancePose.skeleton`),
    kept at each keyframe for the report's 3D view; ``None`` for one video."""


@dataclass(frozen=True)
class Settings:
    min_coverage: float = 0.5
    min_frames: int = 10
    min_seconds: float = 0.2
    robust_window_s: float = 0.15
    smoothing_frames: int = 3
    """The kinematics' smoothing (to estimate frame noise from correlated neighbours)."""
    noise_floors: Mapping[str, float] = field(default_factory=dict)
    """:class:`viddiff.config.PoseNoiseFloorsConfig` as a mapping (absent = 0)."""
    alignment: Literal["stages", "dtw"] = "stages"
    views_differ: Optional[ViewCheck] = None
    """The comparability rule for 2D body quantities (``None``: views are not checked)."""
    view_errors: Mapping[str, float] = field(default_factory=dict)
    """:class:`viddiff.config.PoseViewErrorsConfig` as a mapping: the view part of a value seen only in the picture."""
    view_difference_errors: Mapping[str, float] = field(default_factory=dict)
    """The same for a difference between two comparable views (``pose.view_difference_errors``)."""
    plane_tolerance_deg: Optional[float] = None
    """Within this of facing a quantity's plane of motion, a 2D value is the body's own (``None``: values are not
    labelled and get no view part)."""


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
    where = f"'{stage_name}'" if stage_name else "the action"
    floor = settings.noise_floors.get(spec.quantity, 0.0)
    readings, problems, curves, points = [], [], [], []
    for which, video in zip("AB", (a, b)):
        kin = video.kinematics
        raw, reasons = _combined(kin, names)
        series = running_median(raw, window_samples(kin.times_s, settings.robust_window_s))
        start, end = _window(video.windows, spec.stage)
        reading = _reading(spec.statistic, kin.times_s, series, raw, video, start, end, settings)
        readings.append((reading, _interval(reading, spec, kin.times_s, series, raw, video, settings, floor)))
        problems += _problems(which, where, kin.times_s, series, reasons, start, end, reading, settings)
        curves.append((stage_time(kin.times_s, video.windows), series))
        points.append(_points(video, series))
    curve = _curve(curves, len(stage_names), settings.alignment, (a.windows, b.windows))
    (read_a, interval_a), (read_b, interval_b) = readings
    evidence = Evidence(
        **common, estimator=estimator, curve=curve,
        frames_a=[int(f) for f in a.kinematics.frame_indices[read_a.used]],
        frames_b=[int(f) for f in b.kinematics.frame_indices[read_b.used]],
        keyframes_a=points[0], keyframes_b=points[1], status="uncertain", reason="; ".join(problems),
        view_a=a.view, view_b=b.view, subject_a=a.subject, subject_b=b.subject,
    )
    if problems:
        return evidence
    values = dict(value_a=_round(read_a.value), value_b=_round(read_b.value), interval_a=interval_a, interval_b=interval_b)
    if a.triangulation_errors is not None and b.triangulation_errors is not None:
        values["view_difference"] = _round(triangulation_difference(spec.quantity, spec.statistic, a.calibration_errors, b.calibration_errors))
    elif interval_a.in_picture or interval_b.in_picture:
        values["view_difference"] = float(settings.view_difference_errors.get(spec.quantity, 0.0))
    views = comparability(a.view, b.view, settings.views_differ, spec)
    if views is not None:
        return evidence.model_copy(update={**values, "status": "not_comparable", "reason": views})
    return evidence.model_copy(update={**values, "status": "measured", "reason": ""})


def comparability(
    view_a: Optional[CameraView], view_b: Optional[CameraView], views_differ: Optional[ViewCheck], spec: MeasurementSpec
) -> Optional[str]:
    """Why a 2D body quantity does not compare between these two views (``None``: it does, or they are unknown).

    A joint angle, a lean, a width or a speed seen in the image is a projection: the same movement filmed from
    the side and from the front gives different numbers, so comparing them would measure the cameras. Tempo
    and durations need no projection and always compare (they never reach this rule)."""
    if view_a is None or view_b is None or views_differ is None:
        return None
    return views_differ(view_a, view_b, spec)


def decide(evidence: Evidence, margins: Mapping[str, float]) -> tuple[Optional[Letter], str]:
    """``a``/``b`` where A and B differ by more than their combined uncertainty *and* the quantity's smallest
    meaningful difference, in the direction that makes the statement true; ``c`` otherwise, "within measurement
    noise (±x)" or "below the smallest meaningful difference"; ``None`` (no verdict) for an uncertain or
    not comparable measurement.

    ``margins``: ``angle_deg`` and ``length`` (absolute differences), ``speed_ratio`` and ``duration_ratio``.
    """
    if evidence.status == "uncertain":
        return None, f"not measured: {evidence.reason}"
    if evidence.status == "not_comparable":
        return None, f"{describe_evidence(evidence)}; not compared: {evidence.reason}"
    a, b = evidence.value_a, evidence.value_b
    kind = QUANTITIES[evidence.measurement.quantity].margin
    unit = evidence.unit
    numbers = f"{evidence.label}: A {_with_interval(a, evidence.interval_a, unit)}, B {_with_interval(b, evidence.interval_b, unit)}"
    ua, ub = comparison_widths(evidence)
    shared = evidence.view_difference > 0
    if kind in ("angle", "length"):
        margin = margins["angle_deg" if kind == "angle" else "length"]
        gap, noise = abs(b - a), math.hypot(ua, ub, evidence.view_difference)
        gap_text = f"B − A = {shown_value(b - a, unit, signed=True)}"
        noise_text, margin_text = f"±{shown_value(noise, unit)}", shown_value(margin, unit)
        big_enough = gap > margin
    else:
        ratio = margins[f"{kind}_ratio"]
        low, high = sorted((abs(a), abs(b)))
        if low == 0:
            return (None, f"{numbers}: a zero value, no ratio") if high == 0 else _letter(evidence, a, b, f"{numbers}; one value is zero")
        gap = math.log(high / low)
        noise = math.hypot(ua / abs(a), ub / abs(b))
        gap_text = f"ratio {high / low:.3g}"
        noise_text, margin_text = f"±{100 * noise:.2g}%", f"×{ratio:g}"
        big_enough = high / low >= ratio
    if shared:
        noise_text += ", the triangulations' difference" if _both_3d(evidence) else ", the pictures' difference from comparable views"
    if gap <= noise:
        return "c", f"{numbers} ({gap_text}): within measurement noise ({noise_text})"
    if not big_enough:
        return "c", f"{numbers} ({gap_text}, noise {noise_text}): below the smallest meaningful difference ({margin_text})"
    return _letter(evidence, a, b, f"{numbers} ({gap_text}, beyond noise {noise_text} and {margin_text})")


def comparison_widths(evidence: Evidence) -> tuple[float, float]:
    """A's and B's half-widths as they enter the verdict (:func:`decide`), beside ``evidence.view_difference``."""
    both_3d = _both_3d(evidence)
    return _comparison_width(evidence.interval_a, both_3d), _comparison_width(evidence.interval_b, both_3d)


def _both_3d(evidence: Evidence) -> bool:
    return is_triangulated(evidence.view_a) and is_triangulated(evidence.view_b)


def _comparison_width(interval: Optional[EvidenceInterval], both_3d: bool = False) -> float:
    """A value's half-width as it enters a comparison between comparable views: without its view part, which
    both videos largely share; the part of it they do not share is the evidence's ``view_difference``
    (``bench/pose_accuracy.py`` measures hits, reversals and false differences with this rule). Between two 3D
    values likewise without their triangulation parts, for the triangulation part of the difference
    (:mod:`viddiff.pose.difference3d`); a 3D value against one video's keeps its own."""
    if interval is None:
        return 0.0
    if not (interval.in_picture or both_3d):
        return interval.half_width
    return math.sqrt(max(0.0, interval.half_width ** 2 - interval.view ** 2))


def _letter(evidence: Evidence, a: float, b: float, why: str) -> tuple[Letter, str]:
    greater = "a" if a > b else "b"
    letter: Letter = greater if evidence.measurement.direction == "greater" else ("b" if greater == "a" else "a")
    side = "greater" if evidence.measurement.direction == "greater" else "smaller"
    return letter, f"{why}; the statement holds for the {side} value"


def describe_evidence(evidence: Evidence) -> str:
    """One line for people and prompts: "minimum knee angle during 'descent': video A 92.1° ±4.2° (18 frames,
    0.6 s), video B 104° ±3.9° (17 frames, 0.57 s)"."""
    if evidence.status == "uncertain":
        return f"{evidence.label}: not measured reliably ({evidence.reason})"
    sides = ", ".join(
        f"video {which} {_with_interval(value, interval, evidence.unit)}{_support(interval, view)}"
        for which, value, interval, view in (
            ("A", evidence.value_a, evidence.interval_a, evidence.view_a),
            ("B", evidence.value_b, evidence.interval_b, evidence.view_b),
        )
    )
    return f"{evidence.label}: {sides}"


def _with_interval(value: float, interval: Optional[EvidenceInterval], unit: str) -> str:
    if interval is None or interval.half_width <= 0:
        return shown_value(value, unit)
    number, spread = _significant(value), _significant(interval.half_width)
    return f"{number} ±{spread}°" if unit == "°" else f"{number} ±{spread} {unit}"


def _support(interval: Optional[EvidenceInterval], view: Optional[CameraView] = None) -> str:
    if interval is None:
        return ""
    seen = ""
    if interval.in_picture:
        where = WORDS[view.label] if view is not None else WORDS["unknown"]
        seen = f"as seen in the picture, filmed from {where}, not the body's own; "
    return f" ({seen}{interval.frames} frames, {interval.seconds:.2g} s)"


def _duration(common: dict, spec: MeasurementSpec, a: VideoMeasures, b: VideoMeasures) -> Evidence:
    """A stage's (or the whole clip's) length from presentation times. A boundary between two stages is known
    to half a segmentation step; the clip's own ends to half a source frame."""
    values, used, intervals = [], [], []
    for video in (a, b):
        start, end = _window(video.windows, spec.stage)
        values.append(round(float(end - start), _DIGITS))
        rows = inside(video.times_s, start, end)
        used.append([int(f) for f in video.frame_indices[rows]])
        inner = sum(_inner_edges(video.windows, spec.stage))
        step = _step(video.times_s)
        boundaries = math.sqrt(inner) * step / 2
        sampling = math.sqrt(2 - inner) * video.frame_step_s / 2
        intervals.append(EvidenceInterval(
            half_width=_round(math.hypot(boundaries, sampling)), boundaries=_round(boundaries), sampling=_round(sampling),
            frames=int(rows.sum()), seconds=round(float(end - start), _DIGITS),
        ))
    return Evidence(
        **common, status="measured", value_a=values[0], value_b=values[1], frames_a=used[0], frames_b=used[1],
        interval_a=intervals[0], interval_b=intervals[1],
    )


def _reading(
    statistic: str, times: np.ndarray, series: np.ndarray, raw: np.ndarray, video: VideoMeasures,
    start: float, end: float, settings: Settings,
) -> Reading:
    return read_statistic(
        statistic, times, series, start, end, noise=frame_noise(raw, settings.smoothing_frames),
        smoothing_frames=settings.smoothing_frames, edge_samples=window_samples(times, settings.robust_window_s),
    )


def _interval(
    reading: Reading, spec: MeasurementSpec, times: np.ndarray, series: np.ndarray, raw: np.ndarray,
    video: VideoMeasures, settings: Settings, floor: float,
) -> Optional[EvidenceInterval]:
    """The reading's ± half-width: frame noise, sampling, the stage boundaries' uncertainty and the noise floor."""
    if reading.value is None:
        return None
    boundaries = 0.0
    step = _step(video.times_s)
    start, end = _window(video.windows, spec.stage)
    inner_start, inner_end = _inner_edges(video.windows, spec.stage)
    # A stage starts at the first segmented frame labelled with it: the change happened after the frame before.
    for moved in ([(start - step, end)] if inner_start else []) + ([(start, end - step)] if inner_end else []):
        other = _reading(spec.statistic, times, series, raw, video, *moved, settings)
        if other.value is not None:
            boundaries = max(boundaries, abs(other.value - reading.value))
    if QUANTITIES[spec.quantity].relative_floor:
        floor = floor * abs(reading.value)
    in_picture, view = _view_part(spec, video, settings)
    parts = (reading.frame_noise, reading.sampling, boundaries, floor, view)
    at = None if reading.at_s is None else float(stage_time(np.array([reading.at_s]), video.windows)[0])
    return EvidenceInterval(
        half_width=_round(math.sqrt(sum(p * p for p in parts))), frame_noise=_round(parts[0]), sampling=_round(parts[1]),
        boundaries=_round(parts[2]), noise_floor=_round(parts[3]), view=_round(view), in_picture=in_picture,
        frames=reading.frames,
        seconds=round(reading.seconds, _DIGITS), at_s=None if reading.at_s is None else round(reading.at_s, _DIGITS),
        at_stage_time=None if at is None or not np.isfinite(at) else round(at, _DIGITS),
    )


def _view_part(spec: MeasurementSpec, video: VideoMeasures, settings: Settings) -> tuple[bool, float]:
    """Whether the value is only the picture's (the camera does not face the quantity's plane of motion), and the
    view part of its interval that then covers the body's value (docs/pose.md "Accuracy")."""
    if video.triangulation_errors is not None:
        return False, float(video.triangulation_errors.get(spec.quantity, 0.0))
    if settings.plane_tolerance_deg is None:
        return False, 0.0
    quantity = QUANTITIES[spec.quantity]
    if faces_plane(video.view, quantity.plane, settings.plane_tolerance_deg):
        return False, 0.0
    return True, float(settings.view_errors.get(spec.quantity, 0.0))


def _problems(
    which: str, where: str, times: np.ndarray, series: np.ndarray, reasons: np.ndarray, start: float, end: float,
    reading: Reading, settings: Settings,
) -> list[str]:
    """Why this video's reading cannot be trusted (empty: it can)."""
    rows = inside(times, start, end)
    n_inside = int(rows.sum())
    if n_inside == 0:
        return [f"video {which}: no pose frame falls in {where} (it is shorter than the time between pose frames)"]
    valid = int((rows & np.isfinite(series)).sum())
    if valid < settings.min_coverage * n_inside:
        why = describe_reasons(reasons[rows]) or "no confident value"
        return [f"video {which}: {why} in {n_inside - valid} of {n_inside} frames of {where}"]
    seconds = float(coverage(times, start, end)[rows & np.isfinite(series)].sum())
    if valid < settings.min_frames or seconds < settings.min_seconds:
        remedy = "; raise pose.fps" if valid < settings.min_frames else ""
        return [
            f"video {which}: too little to go on in {where}: {valid} pose frames over {seconds:.2g} s "
            f"(at least {settings.min_frames} frames and {settings.min_seconds:g} s are needed{remedy})"
        ]
    if reading.value is None:
        return [f"video {which}: the {where} has no value for this statistic"]
    return []


def _combined(kin: Kinematics, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """One series from one or two (left and right: the mean of the sides found in each frame), with gap reasons.
    A left+right mean also uses the frames whose sides are unresolved where that cannot change it
    (:attr:`~viddiff.pose.kinematics.Kinematics.either_side`)."""
    either = len(names) == 2 and all(n in kin.either_side for n in names)
    stacked = np.stack([(kin.either_side if either else kin.values)[n] for n in names])
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


def _inner_edges(windows: np.ndarray, stage: Optional[int]) -> tuple[bool, bool]:
    """Whether the window's start and end are boundaries between stages (uncertain) rather than the clip's ends."""
    if stage is None:
        return False, False
    return stage > 0, stage < len(windows) - 1


def _step(times: np.ndarray) -> float:
    return float(np.median(np.diff(times))) if len(times) > 1 else 0.0


def _curve(
    curves: list[tuple[np.ndarray, np.ndarray]], n_stages: int, alignment: str, windows: tuple[np.ndarray, np.ndarray]
) -> EvidenceCurve:
    """Each video's series at its own frames against stage time (B re-timed onto A inside each stage with DTW)."""
    (time_a, series_a), (time_b, series_b) = curves
    if alignment == "dtw":
        time_b = warp_stage_times(time_a, series_a, time_b, series_b, n_stages)
    keep_a, keep_b = np.isfinite(time_a), np.isfinite(time_b)
    return EvidenceCurve(
        stage_time_a=[round(float(t), _DIGITS) for t in time_a[keep_a]], a=_rounded(series_a[keep_a]),
        stage_time_b=[round(float(t), _DIGITS) for t in time_b[keep_b]], b=_rounded(series_b[keep_b]),
    )


def _points(video: VideoMeasures, values: np.ndarray) -> list[EvidencePoint]:
    """The quantity and the pose at each keyframe, from the pose frame nearest to it in time."""
    if video.keyframes is None or video.kinematics is None:
        return []
    kin = video.kinematics
    step = _step(kin.times_s)
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
                if video.skeleton is not None:
                    point.skeleton = video.skeleton(time_s)
        points.append(point)
    return points


def _rounded(values: np.ndarray) -> list[Optional[float]]:
    return [round(float(v), _DIGITS) if np.isfinite(v) else None for v in values]


def _round(value: Optional[float]) -> Optional[float]:
    return None if value is None else round(float(value), _DIGITS)


def _significant(value: float) -> str:
    return f"{value:.3g}"


def shown_value(value: float, unit: str, *, signed: bool = False) -> str:
    """A measured value as people read it: three significant digits and its unit ("92.1°", "0.41 s")."""
    number = f"{value:+.3g}" if signed else f"{value:.3g}"
    return f"{number}{unit}" if unit == "°" else f"{number} {unit}"


def shown_interval(value: float, interval: Optional[EvidenceInterval], unit: str) -> str:
    """A value with its interval ("92.1 ±4.2°"); the bare value when it has none."""
    return _with_interval(value, interval, unit)


__all__ = [
    "Settings", "VideoMeasures", "ViewCheck", "comparability", "comparison_widths", "decide", "describe_evidence", "measure",
    "shown_interval", "shown_value",
]
