"""Kinematics from keypoint tracks: joint angles, trunk lean, normalised widths and heights, keypoint speeds.

Pure numpy (arrays in, arrays out; no I/O, no config objects). Every quantity is a time series with a gap
(NaN) wherever it cannot be trusted, and beside it the reason for each gap, so that a measurement can say why
it has no number instead of inventing one. Before anything is derived, low-confidence and out-of-frame
keypoints become gaps, frames where the measured person could not be told apart from someone else become gaps
(``IDENTITY``), frames whose left and right limbs the estimator swapped are relabelled from continuity and the
way the person faces (:func:`fix_side_swaps`; a facing person has their left on the image's right), frames
whose sides stay in doubt are gaps for one-side quantities (``SIDE_UNRESOLVED``), and positions are lightly
smoothed (:func:`smooth`).

Conventions: image pixels (x right, y down); angles in degrees; lengths in body units so that people of any
size, at any distance from the camera, compare: widths in hip or shoulder widths, heights and speeds in torso
lengths (shoulder centre to hip centre, the track's median).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from viddiff.pose.skeleton import INDEX, JOINTS, LOWER_LIMBS, SWAP, UPPER_LIMBS

OK, NO_PERSON, OUT_OF_FRAME, LOW_CONFIDENCE, SIDE_VIEW, NOT_ESTIMATED, IDENTITY, SIDE_UNRESOLVED, VIEWS_APART = range(9)
REASONS = {
    NO_PERSON: "no person was found",
    VIEWS_APART: "each camera view found a person, but their keypoints do not triangulate together (the views may "
                 "have measured different people, e.g. one hidden in a view or an explicit pose.subject rule, which "
                 "chooses in each view on its own; or the calibration or synchronisation is off)",
    IDENTITY: "the measured person could not be told apart from another person (someone else was found instead)",
    SIDE_UNRESOLVED: "left and right could not be told apart (the labels contradict the way the person faces)",
    OUT_OF_FRAME: "the body parts it needs are outside the frame (the person leaves the picture)",
    LOW_CONFIDENCE: "the body parts it needs are hidden or unclear (low keypoint confidence: occlusion)",
    SIDE_VIEW: "the body is seen from the side, so widths cannot be measured against the hip or shoulder width",
    NOT_ESTIMATED: "the pose estimator does not give the body parts it needs",
}
"""Why a value is missing, worst first when several joints are missing for different reasons."""
REASON_PRIORITY = (NOT_ESTIMATED, IDENTITY, NO_PERSON, VIEWS_APART, OUT_OF_FRAME, LOW_CONFIDENCE, SIDE_UNRESOLVED, SIDE_VIEW)
MIN_WIDTH_RATIO = 0.25
"""A hip or shoulder width under this share of the torso length means a side view: widths are then gaps."""
SWAP_PENALTY = 0.5
"""Cost (mean joint displacement, in torso lengths) of relabelling one frame's sides: a relabelling must
explain the motion better than this to be made, so noise never flips sides."""
VIEW_COST = 2.0
"""Cost (same units) of a labelling that contradicts the view (the face towards the camera, the left shoulder
or hip on the image's left): well above any frame's motion, so the view decides where it can be read, and
continuity carries the labels through the frames where it cannot (side views)."""

ANGLES: dict[str, tuple[str, str, str]] = {
    "knee": ("hip", "knee", "ankle"),
    "hip": ("shoulder", "hip", "knee"),
    "elbow": ("shoulder", "elbow", "wrist"),
    "shoulder": ("hip", "shoulder", "elbow"),
    "ankle": ("knee", "ankle", "toe"),
}
"""Joint angle at the middle joint between the two segments: 180° = straight knee, hip or elbow;
shoulder 0° = arm along the torso, 180° = overhead; ankle ≈ 90–120° standing (shin against foot)."""
SPEED_PARTS: dict[str, tuple[str, ...]] = {
    "head": ("nose",),
    **{part: (f"left_{part}", f"right_{part}") for part in ("wrist", "elbow", "shoulder", "hip", "knee", "ankle")},
}


@dataclass(frozen=True)
class Kinematics:
    """Every derived quantity of one track, per sampled frame."""

    times_s: np.ndarray
    frame_indices: np.ndarray
    xy: np.ndarray
    """(T, J, 2) the cleaned positions the quantities were computed from (gaps NaN, sides fixed, smoothed)."""
    confidence: np.ndarray
    """(T, J) the estimator's confidence of each joint (relabelled with the sides)."""
    values: dict[str, np.ndarray]
    """Series name (``left_knee_angle``, ``trunk_lean``, ``stance_width``, ``right_wrist_speed``...) → (T,) values."""
    reasons: dict[str, np.ndarray]
    """Series name → (T,) reason code of each gap (``OK`` where there is a value); see :data:`REASONS`."""
    swapped: np.ndarray
    """(T, 2) frames whose arms (column 0) or legs (column 1) were relabelled left↔right."""
    width: int = 0
    height: int = 0
    """Size of the frames the positions are in (pixels)."""
    side_unresolved: Optional[np.ndarray] = None
    """(T, 2) frames whose arm (column 0) or leg (column 1) labels contradict the view even after relabelling:
    one-side quantities there are gaps (``SIDE_UNRESOLVED``). ``None`` = none (no view given)."""
    either_side: dict[str, np.ndarray] = field(default_factory=dict)
    """One-side series name → (T,) its values *also* in the frames whose sides are unresolved, for the series
    whose joints are all in one limb group (knee, elbow and ankle angles, wrist heights, speeds): a left+right
    mean of them does not depend on which side is which (the group is labelled as one), so it survives a
    frontal view's doubt. Not for hip and shoulder angles, which mix the arm and leg groups."""


def compute_kinematics(
    xy: np.ndarray,
    confidence: np.ndarray,
    times_s: np.ndarray,
    frame_indices: np.ndarray,
    *,
    width: int,
    height: int,
    min_confidence: float = 0.5,
    smoothing_frames: int = 3,
    fix_sides: bool = True,
    estimated: Optional[np.ndarray] = None,
    identity_gap: Optional[np.ndarray] = None,
    facing: Optional[tuple[np.ndarray, np.ndarray]] = None,
) -> Kinematics:
    """All quantities of one track. ``estimated``: (J,) which joints the estimator gives at all (default: all);
    ``identity_gap``: (T,) frames where someone other than the measured person may be what was found;
    ``facing``: (T,) +1 face towards the camera, -1 away, 0 unknown, and (T,) frames where front and back are
    contested (:func:`viddiff.pose.facing.facing_per_frame`): those frames' sides are unresolved."""
    xy = np.asarray(xy, dtype=np.float64)
    joint_reasons = joint_status(xy, confidence, width=width, height=height, min_confidence=min_confidence)
    if identity_gap is not None:
        joint_reasons[np.asarray(identity_gap, dtype=bool)] = IDENTITY
    if estimated is not None:
        joint_reasons[:, ~np.asarray(estimated, dtype=bool)] = NOT_ESTIMATED
    confidence = np.nan_to_num(np.asarray(confidence, dtype=np.float64), nan=0.0).copy()
    clean = np.where((joint_reasons == OK)[..., None], xy, np.nan)
    swapped = np.zeros((len(xy), 2), dtype=bool)
    unresolved = None
    if fix_sides:
        view = None if facing is None else labels_against_view(clean, facing[0])
        clean, swapped, unresolved = resolve_sides(clean, view=view)
        if unresolved is not None and facing is not None:
            unresolved |= np.asarray(facing[1], dtype=bool)[:, None]
        for column, limbs in enumerate((UPPER_LIMBS, LOWER_LIMBS)):
            joints = [INDEX[f"{s}_{limb}"] for limb in limbs for s in ("left", "right")]
            rows = np.flatnonzero(swapped[:, column])
            for per_joint in (joint_reasons, confidence):
                per_joint[np.ix_(rows, joints)] = per_joint[rows][:, SWAP][:, joints]
    clean = smooth(clean, smoothing_frames)
    times = np.asarray(times_s, dtype=np.float64)
    values, reasons = derive(clean, joint_reasons, times, unresolved)
    either = {}
    if unresolved is not None and unresolved.any():
        plain, _ = derive(clean, joint_reasons, times, None)
        either = {name: plain[name] for name in one_group_series(values)}
    return Kinematics(
        times_s=times, frame_indices=np.asarray(frame_indices), xy=clean,
        confidence=confidence, values=values, reasons=reasons, swapped=swapped, width=width, height=height,
        side_unresolved=unresolved, either_side=either,
    )


def one_group_series(names: Sequence[str]) -> list[str]:
    """The one-side series whose joints all belong to one limb group (arms or legs): knee, elbow and ankle
    angles, wrist heights and speeds (see :attr:`Kinematics.either_side`)."""
    out = []
    for name in names:
        if not name.startswith(("left_", "right_")):
            continue
        body = name.split("_", 1)[1]
        joint = body.rsplit("_", 1)[0]  # knee_angle -> knee, wrist_height -> wrist, wrist_speed -> wrist
        if body.endswith("_angle"):
            groups = {_group(part) for part in ANGLES[joint]}
        else:
            groups = {_group(joint)}
        if len(groups) == 1:
            out.append(name)
    return out


def _group(limb: str) -> int:
    return 0 if limb in UPPER_LIMBS else 1


def labels_against_view(xy: np.ndarray, facing: np.ndarray) -> np.ndarray:
    """(T, 2) per frame, arms (from the shoulders) and legs (from the hips): +1 where the labels agree with the
    view (facing the camera: the left on the image's right; back to it: on its left), -1 where they contradict
    it, 0 where the view cannot say (side view, face unknown, joints missing)."""
    facing = np.asarray(facing, dtype=np.int8)
    out = np.zeros((len(xy), 2), dtype=np.int8)
    for column, joint in enumerate(("shoulder", "hip")):
        order = np.sign(xy[:, INDEX[f"left_{joint}"], 0] - xy[:, INDEX[f"right_{joint}"], 0])
        order = np.nan_to_num(order, nan=0.0).astype(np.int8)
        out[:, column] = np.where((facing != 0) & (order != 0), np.where(order == facing, 1, -1), 0)
    return out


def joint_status(
    xy: np.ndarray, confidence: np.ndarray, *, width: int, height: int, min_confidence: float
) -> np.ndarray:
    """(T, J) reason code per joint: ``OK``, ``NO_PERSON``, ``OUT_OF_FRAME`` or ``LOW_CONFIDENCE``."""
    confidence = np.nan_to_num(np.asarray(confidence, dtype=np.float64), nan=0.0)
    status = np.full(confidence.shape, OK, dtype=np.int8)
    x, y = xy[..., 0], xy[..., 1]
    outside = ~((x >= 0) & (x <= width) & (y >= 0) & (y <= height))
    status[confidence < min_confidence] = LOW_CONFIDENCE
    status[outside & (confidence > 0)] = OUT_OF_FRAME
    status[~(confidence > 0).any(axis=1)] = NO_PERSON
    return status


def fix_side_swaps(
    xy: np.ndarray, penalty: float = SWAP_PENALTY, view: Optional[np.ndarray] = None
) -> tuple[np.ndarray, np.ndarray]:
    """The relabelled positions and (T, 2) swapped flags of :func:`resolve_sides`."""
    fixed, swapped, _ = resolve_sides(xy, penalty, view)
    return fixed, swapped


def resolve_sides(
    xy: np.ndarray, penalty: float = SWAP_PENALTY, view: Optional[np.ndarray] = None
) -> tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]:
    """Relabel left↔right in the frames where that makes the motion continuous and agree with the view (arms
    and legs separately).

    Per limb group, a two-state Viterbi over frames (labels kept / swapped): a transition costs the mean
    displacement of the group's joints between consecutive frames (in torso lengths), a swapped frame costs
    ``penalty``, and a labelling that contradicts ``view`` ((T, 2) from :func:`labels_against_view`) costs
    ``VIEW_COST``. Without the view, swapping every frame costs the same motion as swapping none, so the penalty
    keeps the labels the estimator gave in most frames, right or wrong: on a front-view clip whose labels were
    wrong in most frames, continuity alone relabelled the right minority. The view breaks that tie.

    Where the view and continuity disagree, the sides are unresolved: frames whose final labels contradict the
    view, and runs the view relabelled against continuity (the relabelling adds more motion than ``penalty``:
    the face reading flipped, or the person turned faster than the samples show).
    Returns the relabelled positions, the (T, 2) swapped flags (arms, legs) and the (T, 2) unresolved flags
    (``None`` without a view).
    """
    xy = np.array(xy, dtype=np.float64)
    n = len(xy)
    swapped = np.zeros((n, 2), dtype=bool)
    unresolved = None if view is None else np.zeros((n, 2), dtype=bool)
    if n < 2:
        return xy, swapped, unresolved
    scale = torso_length(xy)
    scale = scale if np.isfinite(scale) and scale > 0 else 1.0
    for column, limbs in enumerate((UPPER_LIMBS, LOWER_LIMBS)):
        left = [INDEX[f"left_{limb}"] for limb in limbs]
        right = [INDEX[f"right_{limb}"] for limb in limbs]
        kept = xy[:, left + right]
        flipped = xy[:, right + left]
        states = np.stack([kept, flipped], axis=1)  # (T, 2, G, 2)
        unary = np.zeros((n, 2))
        unary[:, 1] = penalty
        if view is not None:
            unary[:, 0] += VIEW_COST * (view[:, column] < 0)
            unary[:, 1] += VIEW_COST * (view[:, column] > 0)
        path = _two_state_viterbi(states / scale, unary)
        swapped[:, column] = path == 1
        if unresolved is not None and view is not None:
            unresolved[:, column] = np.where(path == 1, view[:, column] > 0, view[:, column] < 0)
            unresolved[:, column] |= _against_continuity(states / scale, path, penalty)
        rows = np.flatnonzero(path == 1)
        xy[np.ix_(rows, left + right)] = flipped[rows]
    return xy, swapped, unresolved


def _step(states: np.ndarray, t: int, previous: int, state: int) -> float:
    moved = np.linalg.norm(states[t, state] - states[t - 1, previous], axis=-1)
    return float(np.nanmean(moved)) if np.isfinite(moved).any() else 0.0


def _against_continuity(states: np.ndarray, path: np.ndarray, penalty: float) -> np.ndarray:
    """(T,) frames of relabelled runs whose relabelling adds more motion at the run's ends than ``penalty``."""
    out = np.zeros(len(path), dtype=bool)
    t = 0
    while t < len(path):
        if path[t] != 1:
            t += 1
            continue
        end = t
        while end + 1 < len(path) and path[end + 1] == 1:
            end += 1
        added = 0.0
        if t > 0:
            added += _step(states, t, path[t - 1], 1) - _step(states, t, path[t - 1], 0)
        if end + 1 < len(path):
            added += _step(states, end + 1, 1, path[end + 1]) - _step(states, end + 1, 0, path[end + 1])
        out[t : end + 1] = added > penalty
        t = end + 1
    return out


def _two_state_viterbi(states: np.ndarray, unary: np.ndarray) -> np.ndarray:
    """Best labelling per frame for (T, 2, G, 2) candidate positions (state 0 = as given, 1 = swapped), with
    (T, 2) costs of each state in each frame."""
    n = len(states)
    cost = unary[0].copy()
    back = np.zeros((n, 2), dtype=np.int8)
    for t in range(1, n):
        step = np.zeros((2, 2))  # step[previous state, state]
        for p in range(2):
            for s in range(2):
                step[p, s] = _step(states, t, p, s)
        total = cost[:, None] + step
        back[t] = np.argmin(total, axis=0)
        cost = total[back[t], [0, 1]] + unary[t]
    path = np.zeros(n, dtype=np.int8)
    path[-1] = int(np.argmin(cost))
    for t in range(n - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    return path


def smooth(values: np.ndarray, frames: int) -> np.ndarray:
    """Centred moving average over ``frames`` samples along axis 0, ignoring gaps; gaps stay gaps."""
    values = np.asarray(values, dtype=np.float64)
    if frames <= 1 or len(values) < 2:
        return values.copy()
    half = frames // 2
    valid = np.isfinite(values)
    filled = np.where(valid, values, 0.0)
    padded = np.pad(filled, [(half, half)] + [(0, 0)] * (values.ndim - 1))
    counts = np.pad(valid.astype(np.float64), [(half, half)] + [(0, 0)] * (values.ndim - 1))
    width = 2 * half + 1
    total = sum(padded[i : i + len(values)] for i in range(width))
    count = sum(counts[i : i + len(values)] for i in range(width))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = total / count
    return np.where(valid, out, np.nan)


def joint_angle(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Angle at ``b`` between ``b→a`` and ``b→c`` in degrees (0–180) for (T, 2) positions; NaN where undefined."""
    u, v = np.asarray(a) - np.asarray(b), np.asarray(c) - np.asarray(b)
    norms = np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cosine = np.sum(u * v, axis=-1) / norms
    angle = np.degrees(np.arccos(np.clip(cosine, -1.0, 1.0)))
    return np.where(norms > 0, angle, np.nan)


def torso_length(xy: np.ndarray) -> float:
    """Median distance from the shoulder centre to the hip centre over the track (NaN if never seen)."""
    lengths = np.linalg.norm(_mid(xy, "shoulder") - _mid(xy, "hip"), axis=-1)
    return float(np.nanmedian(lengths)) if np.isfinite(lengths).any() else float("nan")


def derive(
    xy: np.ndarray, joint_reasons: np.ndarray, times_s: np.ndarray, side_unresolved: Optional[np.ndarray] = None
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Every series, and the reason of each of its gaps, from cleaned positions. ``side_unresolved`` (T, 2):
    frames whose arm or leg labels are in doubt, gaps for the one-side series that use those limbs."""
    values: dict[str, np.ndarray] = {}
    reasons: dict[str, np.ndarray] = {}

    def add(name: str, series: np.ndarray, needs: Sequence[str], extra_gap: Optional[np.ndarray] = None) -> None:
        why = _needed(joint_reasons, needs)
        if side_unresolved is not None and name.startswith(("left_", "right_")):
            groups = [column for column, limbs in enumerate((UPPER_LIMBS, LOWER_LIMBS)) if any(n.split("_", 1)[1] in limbs for n in needs)]
            doubt = side_unresolved[:, groups].any(axis=1)
            why = np.where((why == OK) & doubt, SIDE_UNRESOLVED, why)
        series = np.where(why == OK, series, np.nan)
        if extra_gap is not None:
            why = np.where((why == OK) & extra_gap, SIDE_VIEW, why)
            series = np.where(extra_gap, np.nan, series)
        why = np.where((why == OK) & ~np.isfinite(series), LOW_CONFIDENCE, why)
        values[name], reasons[name] = series, why.astype(np.int8)

    def at(name: str) -> np.ndarray:
        return xy[:, INDEX[name]]

    for side in ("left", "right"):
        for joint, (a, b, c) in ANGLES.items():
            needs = [f"{side}_{a}", f"{side}_{b}", f"{side}_{c}"]
            add(f"{side}_{joint}_angle", joint_angle(*(at(n) for n in needs)), needs)
    torso_needs = ["left_shoulder", "right_shoulder", "left_hip", "right_hip"]
    mid_shoulder, mid_hip = _mid(xy, "shoulder"), _mid(xy, "hip")
    trunk = mid_shoulder - mid_hip
    with np.errstate(invalid="ignore", divide="ignore"):
        lean = np.degrees(np.arccos(np.clip(-trunk[:, 1] / np.linalg.norm(trunk, axis=-1), -1.0, 1.0)))
    add("trunk_lean", lean, torso_needs)

    torso = np.linalg.norm(trunk, axis=-1)
    scale = torso_length(xy)
    hip_width = np.linalg.norm(at("left_hip") - at("right_hip"), axis=-1)
    shoulder_width = np.linalg.norm(at("left_shoulder") - at("right_shoulder"), axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        stance = np.linalg.norm(at("left_ankle") - at("right_ankle"), axis=-1) / hip_width
        grip = np.linalg.norm(at("left_wrist") - at("right_wrist"), axis=-1) / shoulder_width
        hip_side_view = hip_width < MIN_WIDTH_RATIO * torso
        shoulder_side_view = shoulder_width < MIN_WIDTH_RATIO * torso
    add("stance_width", stance, ["left_ankle", "right_ankle", "left_hip", "right_hip", "left_shoulder", "right_shoulder"], hip_side_view)
    add("grip_width", grip, ["left_wrist", "right_wrist", *torso_needs], shoulder_side_view)
    for side in ("left", "right"):
        height = (mid_shoulder[:, 1] - at(f"{side}_wrist")[:, 1]) / scale
        add(f"{side}_wrist_height", height, [f"{side}_wrist", "left_shoulder", "right_shoulder"])
    ankles = _mid(xy, "ankle")
    add("hip_height", (ankles[:, 1] - mid_hip[:, 1]) / scale, ["left_hip", "right_hip", "left_ankle", "right_ankle"])
    for part, joints in SPEED_PARTS.items():
        for name in joints:
            label = "head" if part == "head" else name
            add(f"{label}_speed", point_speed(at(name), times_s) / scale, [name])
    return values, reasons


def point_speed(points: np.ndarray, times_s: np.ndarray) -> np.ndarray:
    """Speed (pixels per second) of a (T, 2) track: central differences, one-sided at the ends and next to gaps."""
    n = len(points)
    speed = np.full(n, np.nan)
    if n < 2:
        return speed
    for t in range(n):
        before = t - 1 if t > 0 and np.isfinite(points[t - 1]).all() else t
        after = t + 1 if t + 1 < n and np.isfinite(points[t + 1]).all() else t
        if after == before or not np.isfinite(points[t]).all():
            continue
        dt = times_s[after] - times_s[before]
        if dt > 0:
            speed[t] = np.linalg.norm(points[after] - points[before]) / dt
    return speed


def _mid(xy: np.ndarray, limb: str) -> np.ndarray:
    return (xy[:, INDEX[f"left_{limb}"]] + xy[:, INDEX[f"right_{limb}"]]) / 2


def _needed(joint_reasons: np.ndarray, names: Sequence[str]) -> np.ndarray:
    """(T,) the worst reason among the joints a quantity needs (``OK`` when all are there)."""
    codes = joint_reasons[:, [INDEX[n] for n in names]]
    out = np.full(len(joint_reasons), OK, dtype=np.int8)
    for code in reversed(REASON_PRIORITY):
        out[(codes == code).any(axis=1)] = code
    return out


def describe_reasons(codes: np.ndarray) -> str:
    """The most common reason among gap codes, in words."""
    gaps = codes[codes != OK]
    if not len(gaps):
        return ""
    values, counts = np.unique(gaps, return_counts=True)
    return REASONS[int(values[np.argmax(counts)])]


__all__ = [
    "ANGLES", "IDENTITY", "JOINTS", "Kinematics", "REASONS", "SIDE_UNRESOLVED", "SPEED_PARTS", "VIEWS_APART", "compute_kinematics",
    "derive", "describe_reasons", "fix_side_swaps", "labels_against_view", "resolve_sides", "joint_angle", "joint_status", "point_speed", "smooth", "torso_length",
]
