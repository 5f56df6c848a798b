"""The kinematics of triangulated 3D points: the same series, under the same names, as the 2D kinematics
(:mod:`viddiff.pose.kinematics`), so that :mod:`viddiff.pose.measure` reads them unchanged, but the body's own.

Joint angles are the angles between the 3D segments (whatever the cameras' positions); widths are 3D distances
in hip or shoulder widths (no side view hides them); heights and trunk lean are taken along the world's up
direction, in torso lengths (the track's median 3D shoulder-centre to hip-centre distance); speeds are 3D speeds
in torso lengths per second.

Left and right: the views are labelled alike before triangulation (:mod:`viddiff.pose.multiview`), but all views
may swap a limb group together, which mirrors the body. In 3D the body's facing is known: the left side lies
to the right of the forward direction (the nose's side of the shoulders) looking down, so a frame whose labels
contradict that is relabelled through :func:`viddiff.pose.kinematics.resolve_sides` (continuity carries the
frames where the nose is not seen), and frames whose sides stay in doubt are gaps for one-side series.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from viddiff.pose.kinematics import (
    ANGLES, LOW_CONFIDENCE, NO_PERSON, NOT_ESTIMATED, OK, REASON_PRIORITY, SIDE_UNRESOLVED, SPEED_PARTS, VIEWS_APART,
    Kinematics,
    joint_angle, one_group_series, point_speed, resolve_sides,
)
from viddiff.pose.skeleton import INDEX, LOWER_LIMBS, SWAP, UPPER_LIMBS


def compute_kinematics_3d(
    points: np.ndarray,
    confidence: np.ndarray,
    times_s: np.ndarray,
    frame_indices: np.ndarray,
    up: np.ndarray,
    *,
    pictured: np.ndarray,
    width: int,
    height: int,
    min_confidence: float = 0.5,
    fix_sides: bool = True,
    estimated: Optional[np.ndarray] = None,
    found_in_views: Optional[np.ndarray] = None,
) -> Kinematics:
    """All quantities from (T, J, 3) world points (NaN: not triangulated) with their (T, J) confidence, ``up``
    the world's (3,) up direction. ``pictured`` (T, J, 2): the points in the main view's pixels (``width`` ×
    ``height``), which the evidence draws at keyframes; the returned :attr:`Kinematics.xy` holds them.
    ``found_in_views`` (T,): whether every view found a person at the sample; a frame where they did but nothing
    triangulated is ``VIEWS_APART``, not ``NO_PERSON``."""
    points = np.asarray(points, dtype=np.float64)
    confidence = np.nan_to_num(np.asarray(confidence, dtype=np.float64), nan=0.0).copy()
    up = np.asarray(up, dtype=np.float64) / np.linalg.norm(up)
    reasons = np.full(confidence.shape, OK, dtype=np.int8)
    reasons[~np.isfinite(points).all(-1) | (confidence < min_confidence)] = LOW_CONFIDENCE
    nobody = ~(confidence > 0).any(axis=1)
    reasons[nobody] = NO_PERSON
    if found_in_views is not None:
        reasons[nobody & np.asarray(found_in_views, dtype=bool)] = VIEWS_APART
    if estimated is not None:
        reasons[:, ~np.asarray(estimated, dtype=bool)] = NOT_ESTIMATED
    clean = np.where((reasons == OK)[..., None], points, np.nan)
    pictured = np.asarray(pictured, dtype=np.float64).copy()
    swapped = np.zeros((len(points), 2), dtype=bool)
    unresolved = None
    if fix_sides:
        clean, swapped, unresolved = resolve_sides(clean, view=labels_against_facing(clean, up))
        for column, limbs in enumerate((UPPER_LIMBS, LOWER_LIMBS)):
            joints = [INDEX[f"{s}_{limb}"] for limb in limbs for s in ("left", "right")]
            rows = np.flatnonzero(swapped[:, column])
            for per_joint in (reasons, confidence, pictured):
                per_joint[np.ix_(rows, joints)] = per_joint[rows][:, SWAP][:, joints]
    times = np.asarray(times_s, dtype=np.float64)
    values, why = derive_3d(clean, reasons, times, up, unresolved)
    either = {}
    if unresolved is not None and unresolved.any():
        plain, _ = derive_3d(clean, reasons, times, up, None)
        either = {name: plain[name] for name in one_group_series(list(plain))}
    return Kinematics(
        times_s=times, frame_indices=np.asarray(frame_indices), xy=np.where(np.isfinite(clean).all(-1)[..., None], pictured, np.nan),
        confidence=confidence, values=values, reasons=why, swapped=swapped, width=width, height=height,
        side_unresolved=unresolved, either_side=either,
    )


def labels_against_facing(points: np.ndarray, up: np.ndarray) -> np.ndarray:
    """(T, 2) per frame, arms (from the shoulders) and legs (from the hips): +1 where the labels agree with the
    way the body faces (the left shoulder or hip to the left of forward), -1 where they contradict it, 0 where it
    cannot be told (nose or the pair missing, or the nose in line with the pair)."""
    out = np.zeros((len(points), 2), dtype=np.int8)
    nose = points[:, INDEX["nose"]]
    for column, joint in enumerate(("shoulder", "hip")):
        left, right = points[:, INDEX[f"left_{joint}"]], points[:, INDEX[f"right_{joint}"]]
        across = left - right
        forward = np.cross(across, up)  # facing +x with up +z, the left is +y: y × z = +x
        towards_nose = nose - (left + right) / 2
        with np.errstate(invalid="ignore"):
            agreement = np.sum(forward * towards_nose, axis=-1) / (
                np.linalg.norm(forward, axis=-1) * np.linalg.norm(towards_nose, axis=-1))
        sign = np.where(np.abs(agreement) >= 0.3, np.sign(agreement), 0.0)
        out[:, column] = np.nan_to_num(sign, nan=0.0).astype(np.int8)
    return out


def derive_3d(
    points: np.ndarray, joint_reasons: np.ndarray, times_s: np.ndarray, up: np.ndarray,
    side_unresolved: Optional[np.ndarray] = None,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Every series of :func:`viddiff.pose.kinematics.derive`, in 3D, and the reason of each gap."""
    values: dict[str, np.ndarray] = {}
    reasons: dict[str, np.ndarray] = {}

    def add(name: str, series: np.ndarray, needs: Sequence[str]) -> None:
        why = _needed(joint_reasons, needs)
        if side_unresolved is not None and name.startswith(("left_", "right_")):
            groups = [c for c, limbs in enumerate((UPPER_LIMBS, LOWER_LIMBS)) if any(n.split("_", 1)[1] in limbs for n in needs)]
            why = np.where((why == OK) & side_unresolved[:, groups].any(axis=1), SIDE_UNRESOLVED, why)
        why = np.where((why == OK) & ~np.isfinite(series), LOW_CONFIDENCE, why)
        values[name], reasons[name] = np.where(why == OK, series, np.nan), why.astype(np.int8)

    def at(name: str) -> np.ndarray:
        return points[:, INDEX[name]]

    for side in ("left", "right"):
        for joint, (a, b, c) in ANGLES.items():
            needs = [f"{side}_{a}", f"{side}_{b}", f"{side}_{c}"]
            add(f"{side}_{joint}_angle", joint_angle(*(at(n) for n in needs)), needs)
    torso_needs = ["left_shoulder", "right_shoulder", "left_hip", "right_hip"]
    mid_shoulder, mid_hip = (at("left_shoulder") + at("right_shoulder")) / 2, (at("left_hip") + at("right_hip")) / 2
    trunk = mid_shoulder - mid_hip
    torso = np.linalg.norm(trunk, axis=-1)
    scale = float(np.nanmedian(torso)) if np.isfinite(torso).any() else float("nan")
    with np.errstate(invalid="ignore", divide="ignore"):
        add("trunk_lean", np.degrees(np.arccos(np.clip(trunk @ up / torso, -1.0, 1.0))), torso_needs)
        add("stance_width", np.linalg.norm(at("left_ankle") - at("right_ankle"), axis=-1)
            / np.linalg.norm(at("left_hip") - at("right_hip"), axis=-1),
            ["left_ankle", "right_ankle", "left_hip", "right_hip", "left_shoulder", "right_shoulder"])
        add("grip_width", np.linalg.norm(at("left_wrist") - at("right_wrist"), axis=-1)
            / np.linalg.norm(at("left_shoulder") - at("right_shoulder"), axis=-1), ["left_wrist", "right_wrist", *torso_needs])
        for side in ("left", "right"):
            add(f"{side}_wrist_height", (at(f"{side}_wrist") - mid_shoulder) @ up / scale,
                [f"{side}_wrist", "left_shoulder", "right_shoulder"])
        ankles = (at("left_ankle") + at("right_ankle")) / 2
        add("hip_height", (mid_hip - ankles) @ up / scale, ["left_hip", "right_hip", "left_ankle", "right_ankle"])
        for part, joints in SPEED_PARTS.items():
            for name in joints:
                add(f"{'head' if part == 'head' else name}_speed", point_speed(at(name), times_s) / scale, [name])
    return values, reasons


def _needed(joint_reasons: np.ndarray, names: Sequence[str]) -> np.ndarray:
    codes = joint_reasons[:, [INDEX[n] for n in names]]
    out = np.full(len(joint_reasons), OK, dtype=np.int8)
    for code in reversed(REASON_PRIORITY):
        out[(codes == code).any(axis=1)] = code
    return out


__all__ = ["compute_kinematics_3d", "derive_3d", "labels_against_facing"]
