"""Front or back per square-on run (viddiff.pose.facing): one glitched side-on frame does not split a run."""

from __future__ import annotations

import numpy as np

from viddiff.pose.facing import facing_per_frame
from viddiff.pose.skeleton import INDEX, JOINTS


def world_landmarks(kinds: str) -> np.ndarray:
    """(T, J, 3) torsos in camera space (x right, y down, z away) per letter of ``kinds``: ``F`` facing the camera
    (nose in front of the shoulders), ``M`` BlazePose's mirror image of it (nose behind), ``S`` side-on."""
    world = np.zeros((len(kinds), len(JOINTS), 3))
    for t, kind in enumerate(kinds):
        for joint, height in (("shoulder", -0.5), ("hip", 0.0)):
            across = np.array([0.0, 0.0, -0.2]) if kind == "S" else np.array([0.2, 0.0, 0.0])
            world[t, INDEX[f"left_{joint}"]] = np.array([0.0, height, 0.0]) + across
            world[t, INDEX[f"right_{joint}"]] = np.array([0.0, height, 0.0]) - across
        world[t, INDEX["nose"]] = [0.0, -0.7, 0.1 if kind == "M" else -0.1]
    return world


def facing_of(kinds: str) -> tuple[np.ndarray, np.ndarray]:
    world = world_landmarks(kinds)
    return facing_per_frame(np.zeros((len(kinds), len(JOINTS), 2)), np.ones((len(kinds), len(JOINTS))), world)


def test_one_side_on_frame_between_square_on_frames_does_not_end_the_run() -> None:
    """As on the frontal Pose2Sim camera (cam02): after one glitched frame, 4 of 9 frames are mirror images. Alone
    those 9 frames have no clear majority (their sides would be lost); as part of the whole run they face the
    camera."""
    kinds = "F" * 10 + "S" + "FMFMFMFMF"
    facing, contested = facing_of(kinds)
    assert not contested.any()
    assert (facing[11:] == 1).all() and (facing[:10] == 1).all()


def test_a_real_turn_through_side_on_still_ends_the_run() -> None:
    """Two side-on frames in a row: the person may have turned; the frames after are decided on their own."""
    facing, contested = facing_of("F" * 10 + "SS" + "MMMMMMMF")
    assert (facing[:10] == 1).all() and (facing[12:] == -1).all() and not contested.any()
    facing, contested = facing_of("F" * 10 + "SS" + "FMFMFMFMF")
    assert contested[12:].all() and (facing[12:] == 0).all()
