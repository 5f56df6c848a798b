"""The body joints every estimator reports in, their left/right pairs, and the bones drawn between them.

Estimators differ in their keypoint sets (MediaPipe's 33 landmarks, COCO-17, Halpe-26); each adapter maps
its own onto :data:`JOINTS`, so the kinematics and everything after them see one layout. Left and right are
the person's own (anatomical) sides, as the estimators label them.
"""

from __future__ import annotations

JOINTS: tuple[str, ...] = (
    "nose",
    "left_shoulder", "right_shoulder",
    "left_elbow", "right_elbow",
    "left_wrist", "right_wrist",
    "left_hip", "right_hip",
    "left_knee", "right_knee",
    "left_ankle", "right_ankle",
    "left_heel", "right_heel",
    "left_toe", "right_toe",
)
"""The joints, in the order of every keypoint array's joint axis."""

INDEX: dict[str, int] = {name: i for i, name in enumerate(JOINTS)}


UPPER_LIMBS: tuple[str, ...] = ("shoulder", "elbow", "wrist")
LOWER_LIMBS: tuple[str, ...] = ("hip", "knee", "ankle", "heel", "toe")
"""Side swaps are found separately for arms and legs: estimators often swap the legs alone in side views."""

SWAP: tuple[int, ...] = tuple(
    INDEX[name.replace("left_", "TMP_").replace("right_", "left_").replace("TMP_", "right_")] for name in JOINTS
)
"""``xy[:, SWAP]`` relabels left as right and right as left."""

BONES: tuple[tuple[str, str], ...] = (
    ("left_shoulder", "right_shoulder"), ("left_hip", "right_hip"),
    ("left_shoulder", "left_hip"), ("right_shoulder", "right_hip"),
    ("left_shoulder", "left_elbow"), ("left_elbow", "left_wrist"),
    ("right_shoulder", "right_elbow"), ("right_elbow", "right_wrist"),
    ("left_hip", "left_knee"), ("left_knee", "left_ankle"),
    ("right_hip", "right_knee"), ("right_knee", "right_ankle"),
    ("left_ankle", "left_heel"), ("left_heel", "left_toe"), ("left_ankle", "left_toe"),
    ("right_ankle", "right_heel"), ("right_heel", "right_toe"), ("right_ankle", "right_toe"),
)
"""Segments drawn in overlays and reports."""

MEDIAPIPE_33: dict[str, int] = {
    "nose": 0,
    "left_shoulder": 11, "right_shoulder": 12, "left_elbow": 13, "right_elbow": 14,
    "left_wrist": 15, "right_wrist": 16, "left_hip": 23, "right_hip": 24,
    "left_knee": 25, "right_knee": 26, "left_ankle": 27, "right_ankle": 28,
    "left_heel": 29, "right_heel": 30, "left_toe": 31, "right_toe": 32,
}
"""BlazePose landmark index of each joint (``left_toe`` is MediaPipe's ``LEFT_FOOT_INDEX``)."""

COCO_17: dict[str, int] = {
    "nose": 0,
    "left_shoulder": 5, "right_shoulder": 6, "left_elbow": 7, "right_elbow": 8,
    "left_wrist": 9, "right_wrist": 10, "left_hip": 11, "right_hip": 12,
    "left_knee": 13, "right_knee": 14, "left_ankle": 15, "right_ankle": 16,
}
"""COCO-17 index of each joint it has (no heels or toes)."""

HALPE_26: dict[str, int] = {
    **COCO_17,
    "left_heel": 24, "right_heel": 25,
    "left_toe": 20, "right_toe": 21,  # the big toes
}
"""Halpe-26 index of each joint (COCO-17 plus heels and big toes)."""
