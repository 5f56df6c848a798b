"""The synthetic actions: stages, performance parameters, differences and poses, as data.

Each action is an ``ActionSpec``: its stages (timed by the sampled
parameters), the parameters that vary between performances, the difference
statements with the parameter and direction that decide their ground truth,
and a pose function ``(params, stage, progress) -> shapes``. Ground truth is
therefore *derived* from what was rendered, never annotated by hand.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Literal, Optional

from viddiff.data.synth_figure import Disc, Limb, Point, Shape, ease, lerp, polar, two_link

Params = dict[str, float]
PoseFn = Callable[[Params, int, float], list[Shape]]

WIDTH, HEIGHT = 160, 120

_SKIN = (224, 172, 135)
_SHIRT = (40, 80, 160)
_PANTS = (50, 50, 70)
_ARM = (190, 60, 50)
_PLATE = (60, 60, 60)
_BALL = (235, 120, 20)


@dataclass(frozen=True)
class Param:
    """A performance parameter sampled uniformly from ``[low, high]``.

    ``threshold`` is the smallest A/B gap that counts as a real difference.
    Nuisance parameters (timing of idle stages, position) are sampled
    independently for every video and decide no difference.
    """

    name: str
    low: float
    high: float
    threshold: float = 0.0
    nuisance: bool = False


@dataclass(frozen=True)
class DifferenceSpec:
    """A difference statement and how its ground truth follows from the parameters.

    ``sign`` = +1 when a larger parameter makes the statement more true (a
    deeper squat), -1 when a smaller one does (a shorter, i.e. faster, descent).
    ``at`` is where in ``stage`` a single keyframe shows it (0 = first frame,
    1 = last); ``gt_1`` differences use the stage's first, middle and last frames.
    """

    name: str
    description: str
    query_string: str
    num_frames: Literal["1", "gt_1"]
    param: str
    sign: int
    stage: int
    at: float = 0.5


@dataclass(frozen=True)
class ActionSpec:
    action: str
    name: str
    description: str
    domain: str
    split: str
    fps: float
    stages: tuple[str, ...]
    params: tuple[Param, ...]
    differences: tuple[DifferenceSpec, ...]
    durations: Callable[[Params], list[float]]
    """Seconds of each stage for a performance."""
    pose: PoseFn
    floor_y: float

    def param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)


def _label(spec: ActionSpec, diff: DifferenceSpec, a: Params, b: Params) -> Literal["a", "b", "c"]:
    gap = (a[diff.param] - b[diff.param]) * diff.sign
    if abs(gap) < spec.param(diff.param).threshold:
        return "c"
    return "a" if gap > 0 else "b"


def ground_truth(spec: ActionSpec, a: Params, b: Params) -> dict[str, Literal["a", "b", "c"]]:
    """Label of every difference key: ``c`` below the threshold, else the video the statement fits better."""
    return {str(k): _label(spec, d, a, b) for k, d in enumerate(spec.differences)}


# --------------------------------------------------------------------------- barbell back squat (side view)

_SQ_FLOOR = 110.0


def _squat_durations(p: Params) -> list[float]:
    return [p["setup_s"], p["descent_s"], p["pause_s"], p["ascent_s"], p["lockout_s"]]


def _squat_pose(p: Params, stage: int, u: float) -> list[Shape]:
    """Side view, facing right. ``q`` = squat progress (0 standing, 1 at the sampled depth)."""
    q = {0: 0.0, 1: ease(u), 2: 1.0, 3: 1.0 - ease(u), 4: 0.0}[stage]
    thigh = q * p["depth"]  # thigh angle from vertical; 90 = parallel to the floor
    shin = 0.4 * thigh
    lean = 3.0 + q * (p["lean"] - 3.0)
    ankle = (80.0 + p["x_shift"], _SQ_FLOOR - 3.0)
    knee = polar(ankle, 26.0, shin)
    hip = polar(knee, 26.0, -thigh)
    shoulder = polar(hip, 31.0, lean)
    neck = polar(shoulder, 3.0, lean)
    head = polar(neck, 7.0, lean)
    back = (-math.cos(math.radians(lean)), -math.sin(math.radians(lean)))
    bar = (shoulder[0] + 4.0 * back[0], shoulder[1] + 4.0 * back[1] + 1.0)
    elbow = two_link(shoulder, bar, 11.0, 10.0, toward=(0.0, 1.0))
    return [
        Limb(ankle, (ankle[0] + 9.0, ankle[1] + 1.0), _PANTS, 3.0),
        Limb(ankle, knee, _PANTS, 4.0),
        Limb(knee, hip, _PANTS, 4.0),
        Limb(hip, shoulder, _SHIRT, 5.0),
        Limb(shoulder, neck, _SKIN, 3.0),
        Disc(bar, 8.0, _PLATE),
        Disc(bar, 2.0, (150, 150, 150)),
        Disc(head, 6.5, _SKIN),
        Limb(shoulder, elbow, _ARM, 3.0),
        Limb(elbow, bar, _ARM, 3.0),
    ]


SQUAT = ActionSpec(
    action="synth_0",
    name="barbell back squat",
    description=(
        "A barbell back squat seen from the side: the person stands with a barbell on the upper back, "
        "descends by bending the knees and hips, holds the bottom position, then rises back to standing."
    ),
    domain="fitness",
    split="easy",
    fps=8.0,  # VidDiffBench's fitness rate: the method's 8 fps, the baselines' 4 and compare's 4 are whole strides
    stages=("setup", "descent", "bottom", "ascent", "lockout"),
    params=(
        Param("depth", 50.0, 115.0, threshold=12.0),
        Param("lean", 10.0, 50.0, threshold=8.0),
        Param("descent_s", 0.6, 2.0, threshold=0.3),
        Param("pause_s", 0.2, 1.4, threshold=0.3),
        Param("ascent_s", 0.5, 1.7, threshold=0.3),
        Param("setup_s", 0.4, 0.9, nuisance=True),
        Param("lockout_s", 0.4, 0.9, nuisance=True),
        Param("x_shift", -8.0, 8.0, nuisance=True),
    ),
    differences=(
        DifferenceSpec("squat depth", "the squat is deeper", "How deep is the squat?", "1", "depth", +1, stage=2),
        DifferenceSpec(
            "torso lean",
            "the torso leans further forward at the bottom of the squat",
            "How far does the torso lean forward at the bottom?",
            "1",
            "lean",
            +1,
            stage=2,
        ),
        DifferenceSpec("descent speed", "the descent is faster", "How fast is the descent?", "gt_1", "descent_s", -1, stage=1),
        DifferenceSpec(
            "pause at bottom",
            "the pause at the bottom of the squat is longer",
            "How long is the pause at the bottom?",
            "gt_1",
            "pause_s",
            +1,
            stage=2,
        ),
        DifferenceSpec("ascent speed", "the ascent is faster", "How fast is the ascent?", "gt_1", "ascent_s", -1, stage=3),
    ),
    durations=_squat_durations,
    pose=_squat_pose,
    floor_y=_SQ_FLOOR,
)


# --------------------------------------------------------------------------- basketball free throw (front view)

_FT_FLOOR = 112.0
_SHIN = _THIGH = 18.0
_TORSO = 26.0
_UPPER_ARM = _FOREARM = 17.0


def _free_throw_durations(p: Params) -> list[float]:
    return [p["set_s"], p["dip_s"], p["rise_s"], p["follow_s"]]


def _free_throw_pose(p: Params, stage: int, u: float) -> list[Shape]:
    """Front view. Knee bend shows as knees pushed out and a lower pelvis; the jump lifts the whole body."""
    cx = 80.0 + p["x_shift"]
    bend = {0: 0.0, 1: ease(u), 2: 1.0 - ease(u), 3: 0.0}[stage]
    lift = p["jump"] * math.sin(math.pi * min(u / 0.6, 1.0)) if stage == 3 else 0.0
    half = p["stance"] / 2.0
    ankle_y = _FT_FLOOR - 3.0 - lift
    ankles = ((cx - half, ankle_y), (cx + half, ankle_y))
    straight = math.sqrt((_SHIN + _THIGH) ** 2 - max(half - 5.0, 0.0) ** 2)
    pelvis = (cx, ankle_y - straight * (1.0 - p["dip"] * bend))
    neck = (cx, pelvis[1] - _TORSO)
    head = (cx, neck[1] - 8.0)
    shoulders = ((cx - 9.0, neck[1] + 2.0), (cx + 9.0, neck[1] + 2.0))
    chest, waist = (cx, neck[1] + 12.0), (cx, neck[1] + 19.0)
    release = (cx, head[1] - 6.5 - p["reach"])
    hands_at = {0: chest, 1: lerp(chest, waist, ease(u)), 2: lerp(waist, release, ease(u)), 3: release}[stage]
    shapes: list[Shape] = []
    for side, ankle in zip((-1.0, 1.0), ankles):
        hip = (cx + 5.0 * side, pelvis[1])
        knee = two_link(hip, ankle, _THIGH, _SHIN, toward=(side, 0.0))
        shapes += [
            Limb(ankle, (ankle[0] + 5.0 * side, ankle[1] + 1.0), _PANTS, 3.0),
            Limb(ankle, knee, _PANTS, 4.0),
            Limb(knee, hip, _PANTS, 4.0),
        ]
    shapes += [
        Limb((cx - 5.0, pelvis[1]), (cx + 5.0, pelvis[1]), _PANTS, 4.0),
        Limb(pelvis, neck, _SHIRT, 6.0),
        Limb(shoulders[0], shoulders[1], _SHIRT, 4.0),
        Disc(head, 6.5, _SKIN),
    ]
    for side, shoulder in zip((-1.0, 1.0), shoulders):
        hand = (hands_at[0] + 5.0 * side, hands_at[1])
        elbow = two_link(shoulder, hand, _UPPER_ARM, _FOREARM, toward=(side, 0.6))
        shapes += [Limb(shoulder, elbow, _ARM, 3.0), Limb(elbow, hand, _ARM, 3.0)]
    ball = _ball(hands_at, stage, u)
    if ball is not None:
        shapes.append(ball)
    return shapes


def _ball(hands: Point, stage: int, u: float) -> Optional[Disc]:
    """The ball rests on the hands until the release, then flies up and away (shrinking) out of view."""
    if stage < 3:
        return Disc((hands[0], hands[1] - 5.0), 6.0, _BALL)
    center = (hands[0] + 10.0 * u, hands[1] - 5.0 - 150.0 * u)
    if center[1] < -10.0:
        return None
    return Disc(center, 6.0 - 3.0 * u, _BALL)


FREE_THROW = ActionSpec(
    action="synth_1",
    name="basketball free throw",
    description=(
        "A basketball free throw seen from the front: the player holds the ball at the chest, dips by bending "
        "the knees, rises while lifting the ball overhead, and releases it with a small jump and follow-through."
    ),
    domain="ballsports",
    split="medium",
    fps=20.0,  # the ballsports rate 5 fps and compare's 4 fps are both whole strides
    stages=("set", "dip", "rise", "release"),
    params=(
        Param("stance", 12.0, 40.0, threshold=6.0),
        Param("dip", 0.06, 0.30, threshold=0.05),
        Param("reach", -4.0, 16.0, threshold=4.0),
        Param("jump", 0.0, 16.0, threshold=4.0),
        Param("dip_s", 0.3, 1.0, threshold=0.15),
        Param("rise_s", 0.25, 0.85, threshold=0.15),
        Param("set_s", 0.4, 0.8, nuisance=True),
        Param("follow_s", 0.7, 1.0, nuisance=True),
        Param("x_shift", -8.0, 8.0, nuisance=True),
    ),
    differences=(
        DifferenceSpec("stance width", "the feet are set wider apart", "How wide is the stance?", "1", "stance", +1, stage=0),
        DifferenceSpec(
            "dip depth", "the knees bend more during the dip", "How much do the knees bend?", "1", "dip", +1, stage=1, at=1.0
        ),
        DifferenceSpec(
            "release height",
            "the ball is released from higher above the head",
            "How high above the head is the ball released?",
            "1",
            "reach",
            +1,
            stage=3,
            at=0.0,
        ),
        DifferenceSpec(
            "jump height",
            "the player jumps higher when releasing the ball",
            "How high does the player jump at the release?",
            "1",
            "jump",
            +1,
            stage=3,
            at=0.3,
        ),
        DifferenceSpec("dip speed", "the dip is quicker", "How quick is the dip?", "gt_1", "dip_s", -1, stage=1),
        DifferenceSpec(
            "shooting speed",
            "the shooting motion from the dip to the release is faster",
            "How fast does the ball go from the dip to the release?",
            "gt_1",
            "rise_s",
            -1,
            stage=2,
        ),
    ),
    durations=_free_throw_durations,
    pose=_free_throw_pose,
    floor_y=_FT_FLOOR,
)

ACTIONS: tuple[ActionSpec, ...] = (SQUAT, FREE_THROW)
"""Pair ``i`` of a synthetic benchmark performs ``ACTIONS[i % len(ACTIONS)]``."""
