"""A body in 3D for the report's skeleton view: one squatting pose in its own frame (metres; x to its left, y up,
z forwards, origin between the hips), and the same pose placed in a camera setup's world."""

from __future__ import annotations

import numpy as np

from viddiff.pose.skeleton import JOINTS

SQUAT = {
    "nose": (0.0, 0.72, 0.2), "left_shoulder": (0.18, 0.5, 0.08), "right_shoulder": (-0.18, 0.5, 0.08),
    "left_elbow": (0.26, 0.28, 0.2), "right_elbow": (-0.26, 0.28, 0.2), "left_wrist": (0.24, 0.12, 0.4),
    "right_wrist": (-0.24, 0.12, 0.4), "left_hip": (0.1, 0.0, 0.0), "right_hip": (-0.1, 0.0, 0.0),
    "left_knee": (0.16, 0.02, 0.42), "right_knee": (-0.16, 0.02, 0.42), "left_ankle": (0.15, -0.4, 0.25),
    "right_ankle": (-0.15, -0.4, 0.25), "left_heel": (0.15, -0.45, 0.19), "right_heel": (-0.15, -0.45, 0.19),
    "left_toe": (0.17, -0.47, 0.43), "right_toe": (-0.17, -0.47, 0.43),
}
"""The body frame's points of a deep squat (knees forward of the hips, thighs level)."""


def body_pose(knee_drop: float = 0.0) -> np.ndarray:
    """(J, 3) the squat in the body frame; ``knee_drop`` lowers the knees, ankles and feet (a shallower squat's
    hips sit higher above them)."""
    pose = np.array([SQUAT[name] for name in JOINTS], dtype=float)
    legs = [i for i, name in enumerate(JOINTS) if name.split("_")[-1] in ("knee", "ankle", "heel", "toe")]
    pose[legs, 1] -= knee_drop
    return pose


def in_world(pose: np.ndarray, *, up: tuple[float, float, float], turn_deg: float, at: tuple[float, float, float]):
    """The body-frame ``pose`` as a setup's world holds it: its up is the world's ``up`` (a unit axis), the body
    turned ``turn_deg`` about it, standing at ``at``. Returns (points as lists, up)."""
    y = np.asarray(up, dtype=float)
    x0 = np.array([1.0, 0.0, 0.0]) if abs(y[0]) < 0.9 else np.array([0.0, 0.0, 1.0])
    x0 = x0 - np.dot(x0, y) * y
    x0 /= np.linalg.norm(x0)
    z0 = np.cross(x0, y)
    angle = np.radians(turn_deg)
    x = np.cos(angle) * x0 + np.sin(angle) * z0
    z = np.cross(x, y)
    world = pose @ np.stack([x, y, z]) + np.asarray(at, dtype=float)
    return [tuple(float(v) for v in p) for p in world], tuple(y)


def page_with_3d_evidence(tmp_path):
    """A comparison page built from a result whose knee measurement is 3D on both sides: at its keyframe, A's
    deep squat and B's shallower one as the pose wing hands them over (``Skeleton3D``: y up, hips at the origin,
    each facing its own way). Returns the page and the two skeletons."""
    from viddiff.config import Config
    from viddiff.report.build import PageContext, build_page
    from viddiff.schema import (
        Difference, Evidence, EvidencePoint, Keyframes, MeasurementSpec, Prediction, Proposal, Sample, SampleResult, Segmentation,
        Skeleton3D, Stage, VideoKeyframes, VideoRef,
    )
    from viddiff.video import VideoFrames

    def frames(n: int) -> VideoFrames:
        return VideoFrames(frames=np.full((n, 90, 160, 3), 90, np.uint8), frame_indices=np.arange(n), fps=10.0,
                           fps_original=10.0, stride=1, start=0, end=n, n_frames_source=n, backend="test")

    skeletons = []
    for pose, turn, time_s in ((body_pose(), 30.0, 1.2), (body_pose(knee_drop=0.15), -80.0, 1.5)):
        points, _ = in_world(pose, up=(0.0, 1.0, 0.0), turn_deg=turn, at=(0.0, 0.0, 0.0))
        skeletons.append(Skeleton3D(frame_index=round(time_s * 10), time_s=time_s, points=points))
    spec = MeasurementSpec(quantity="knee_angle", statistic="min", stage=0, direction="smaller")
    evidence = Evidence(
        key="0", measurement=spec, label="minimum knee angle during 'down'", unit="°", status="measured",
        value_a=71.0, value_b=98.0, keyframes_a=[EvidencePoint(frame_index=12, time_s=1.2, skeleton=skeletons[0])],
        keyframes_b=[EvidencePoint(frame_index=15, time_s=1.5, skeleton=skeletons[1])],
    )
    sample = Sample(sample_key="s1", action="custom", action_name="squat", action_description="a squat", split="custom",
                    domain="custom", videos=(VideoRef(path=str(tmp_path / "a.mp4")), VideoRef(path=str(tmp_path / "b.mp4"))))
    result = SampleResult(
        sample_key="s1", index=0, mode="closed",
        proposal=Proposal(differences=[Difference(key="0", name="depth", description="the squat is deeper")],
                          stages=[Stage(name="down", retrieval_strings=["x"])], links={"0": [0]}),
        segmentations=(Segmentation(frame_indices=list(range(30)), spans=[(0, 30)]),
                       Segmentation(frame_indices=list(range(30)), spans=[(0, 30)])),
        keyframes=[Keyframes(key="0", a=VideoKeyframes(frame_indices=[12], times_s=[1.2]),
                             b=VideoKeyframes(frame_indices=[15], times_s=[1.5]))],
        predictions=[Prediction(key="0", description="the squat is deeper", prediction="a", rationale="lower hips")],
        evidence=[evidence],
    )
    ctx = PageContext(cfg=Config(), page_dir=tmp_path, models=[], endpoint_stand_ins=[], clip_stand_in=None)
    return build_page(sample, result, (frames(30), frames(30)), ctx), skeletons
