"""The closed vocabulary of measurements a difference can be mapped to.

A measurement is a quantity (a joint angle, trunk lean, a normalised width or height, a keypoint's speed,
or a stage's duration), a side where the quantity has one, a statistic over a stage (or the whole action),
and the direction of the value that makes the difference statement true
(:class:`viddiff.schema.MeasurementSpec`). Anything outside this table is not measured: the mapping model
must say "none" rather than stretch a quantity to fit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional, get_args

from viddiff.schema import MeasurementSpec, PoseBodyPart, PoseQuantity, PoseStatistic

Margin = Literal["angle", "length", "speed", "duration"]


@dataclass(frozen=True)
class Quantity:
    name: str
    unit: str
    description: str
    """What it is, for the mapping prompt and the docs."""
    sided: bool = False
    needs_pose: bool = True
    margin: Margin = "length"
    relative_floor: bool = False
    """Its noise floor (:class:`viddiff.config.PoseNoiseFloorsConfig`, by the quantity's name) is a share of the
    value rather than an absolute amount."""
    roll: bool = False
    """Read against the picture's vertical (trunk lean, heights), so a rolled camera changes it; joint angles,
    widths and speeds do not change when the picture turns."""
    plane: Optional[Literal["sagittal", "frontal"]] = None
    """The plane the quantity moves in, where a 2D value is then the body's own when the camera faces it (sagittal:
    a side view; frontal: a front or back view). ``None`` where no view was measured to make it so: on the
    Pose2Sim take (``bench/pose_accuracy.py``), hip and elbow angles, widths and heights stay 20° (0.1 body
    units) or more (p90) from the body's from every direction, since those joints also move out of any one plane;
    shoulders and lean came close from the front there only because that take's arm raises were sideways."""


QUANTITIES: dict[str, Quantity] = {
    q.name: q
    for q in (
        Quantity("knee_angle", "°", "angle at the knee between thigh and shin; 180 = straight leg, smaller = more bent "
                 "(a deeper squat has a smaller minimum knee angle)", sided=True, margin="angle", plane="sagittal"),
        Quantity("hip_angle", "°", "angle at the hip between torso and thigh; 180 = standing straight, smaller = more "
                 "folded at the hip", sided=True, margin="angle"),
        Quantity("elbow_angle", "°", "angle at the elbow between upper arm and forearm; 180 = straight arm",
                 sided=True, margin="angle"),
        Quantity("shoulder_angle", "°", "angle at the shoulder between torso and upper arm; 0 = arm along the body, "
                 "180 = arm straight overhead", sided=True, margin="angle"),
        Quantity("ankle_angle", "°", "angle at the ankle between shin and foot; smaller = shin tilted further over "
                 "the foot", sided=True, margin="angle", plane="sagittal"),
        Quantity("trunk_lean", "°", "tilt of the torso from vertical; 0 = upright, larger = leaning further (any "
                 "direction)", margin="angle", roll=True),
        Quantity("stance_width", "hip widths", "distance between the ankles, in hip widths"),
        Quantity("grip_width", "shoulder widths", "distance between the wrists, in shoulder widths"),
        Quantity("wrist_height", "torso lengths", "height of the wrist above the shoulders (negative = below), in "
                 "torso lengths", sided=True, roll=True),
        Quantity("hip_height", "torso lengths", "height of the hips above the ankles, in torso lengths (smaller = "
                 "hips lower, e.g. a deeper squat)", roll=True),
        Quantity("speed", "torso lengths/s", "speed of one body part (give body_part), in torso lengths per second",
                 sided=True, margin="speed", relative_floor=True),
        Quantity("duration", "s", "how long the stage lasts, in seconds (for the whole action: the clip's length); larger = slower "
                 "tempo; needs no pose", needs_pose=False, margin="duration"),
    )
}
assert set(QUANTITIES) == set(get_args(PoseQuantity)), "the vocabulary and viddiff.schema.PoseQuantity must agree"

STATISTICS: dict[str, str] = {
    "mean": "average over the stage",
    "min": "smallest value in the stage",
    "max": "largest value in the stage",
    "range": "largest minus smallest value in the stage (how much it changes)",
    "start": "value as the stage begins",
    "end": "value as the stage ends",
}
assert set(STATISTICS) == set(get_args(PoseStatistic))
_STATISTIC_WORDS = {"mean": "mean", "min": "minimum", "max": "maximum", "range": "range of", "start": "starting",
                    "end": "final"}
BODY_PARTS: tuple[str, ...] = get_args(PoseBodyPart)


def series_names(spec: MeasurementSpec) -> list[str]:
    """The kinematics series a measurement reads (two for ``side: both``, averaged frame by frame)."""
    quantity = QUANTITIES[spec.quantity]
    if not quantity.needs_pose:
        return []
    if spec.quantity == "speed":
        part = spec.body_part or "wrist"
        if part == "head":
            return ["head_speed"]
        return [f"{side}_{part}_speed" for side in _sides(spec.side)]
    if not quantity.sided:
        return [spec.quantity]
    return [f"{side}_{spec.quantity}" for side in _sides(spec.side)]


def _sides(side: str) -> list[str]:
    return ["left", "right"] if side in ("both", "none") else [side]


def normalised(spec: MeasurementSpec) -> MeasurementSpec:
    """``spec`` with the fields its quantity ignores set to their neutral values (side of unsided quantities,
    body part outside ``speed``, statistic of ``duration``), so equal measurements compare and cache equal."""
    quantity = QUANTITIES[spec.quantity]
    update: dict = {}
    if not quantity.sided or (spec.quantity == "speed" and spec.body_part == "head"):
        update["side"] = "none"
    elif spec.side == "none":
        update["side"] = "both"
    if spec.quantity != "speed":
        update["body_part"] = None
    elif spec.body_part is None:
        update["body_part"] = "wrist"
    if spec.quantity == "duration":
        update["statistic"] = "mean"
    return spec.model_copy(update=update)


def label(spec: MeasurementSpec, stage_name: Optional[str]) -> str:
    """The measurement in words: "minimum left knee angle during 'descent'"."""
    where = f"during '{stage_name}'" if stage_name else "over the whole action"
    if spec.quantity == "duration":
        # The whole action's duration is the clip's length from its first frame to its end: a trimmed clip's is
        # the trim's, not the movement's own start and end, so it says so.
        return f"duration of '{stage_name}'" if stage_name else "clip length"
    side = "" if spec.side in ("none",) else ("left and right " if spec.side == "both" else f"{spec.side} ")
    if spec.quantity == "speed":
        what = f"{side}{spec.body_part} speed"
    else:
        what = side + spec.quantity.replace("_", " ")
    return f"{_STATISTIC_WORDS[spec.statistic]} {what} {where}"
