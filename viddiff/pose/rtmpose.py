"""``rtmpose``: RTMPose through ``rtmlib`` (ONNX), the estimator Sports2D and Pose2Sim use.

A YOLOX person detector, then RTMPose on each box: everyone boxed is returned (:meth:`RTMPose.estimate_people`;
who is measured is chosen by ``pose.subject``), and ``estimate`` keeps the largest. Built from rtmlib's
low-level ``YOLOX`` and ``RTMPose`` classes rather than its ``Body`` solution, because ``Body`` runs the pose
model on the whole image when the detector finds nobody (a person that is not there) and ignores a local
model path that contains "rtmo". rtmlib downloads its default weights on first use into its own cache
(``$TORCH_HOME/hub/checkpoints`` or ``~/.cache/rtmlib/hub/checkpoints``); ``pose.rtmpose.det_model`` and
``pose_model`` take local ``.onnx`` files instead.

Output contract of rtmlib 0.0.16 relied on here (pinned by the tests with ONNX models that have the real
models' inputs and outputs): ``YOLOX(image)`` → (M, 4) xyxy boxes in image pixels; ``RTMPose(image, bboxes)``
→ keypoints (M, K, 2) pixels and scores (M, K), K = 17 (COCO, ``Body``) or 26 (Halpe, ``BodyWithFeet``).
Images go in as BGR, as rtmlib's examples and Pose2Sim feed them.
"""

from __future__ import annotations

import contextlib
import io
import logging
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from viddiff.errors import PoseUnavailableError
from viddiff.pose.estimators import empty_keypoints, missing_package
from viddiff.pose.people import Person
from viddiff.pose.skeleton import COCO_17, HALPE_26, JOINTS

if TYPE_CHECKING:
    from viddiff.config import PoseConfig

log = logging.getLogger(__name__)
INSTALL = 'pip install "viddiff[rtmpose]"'
LAYOUTS = {"body": COCO_17, "body_with_feet": HALPE_26}
_N_KEYPOINTS = {"body": 17, "body_with_feet": 26}


class RTMPose:
    """The ``rtmpose`` pose estimator (see the module docstring)."""

    name = "rtmpose"

    def __init__(self, cfg: "PoseConfig"):
        self.cfg = cfg.rtmpose
        try:
            import rtmlib
        except ImportError as exc:
            raise missing_package(self.name, "rtmlib", INSTALL, exc) from None
        defaults = (rtmlib.BodyWithFeet if self.cfg.keypoints == "body_with_feet" else rtmlib.Body).MODE[self.cfg.mode]
        self.det_model = self.cfg.det_model or defaults["det"]
        self.pose_model = self.cfg.pose_model or defaults["pose"]
        det_size = self.cfg.det_input_size or (defaults["det_input_size"] if not self.cfg.det_model else (640, 640))
        pose_size = self.cfg.pose_input_size or defaults["pose_input_size"]
        self.sizes = {"det_input_size": tuple(det_size), "pose_input_size": tuple(pose_size)}
        common = {"backend": self.cfg.backend, "device": self.cfg.device}
        quiet = io.StringIO()  # rtmlib prints "load <model> with <backend> backend" to stdout, where --json goes
        try:
            with contextlib.redirect_stdout(quiet):
                self._detector = rtmlib.YOLOX(self.det_model, model_input_size=tuple(det_size), **common)
                self._pose = rtmlib.RTMPose(self.pose_model, model_input_size=tuple(pose_size), **common)
        except Exception as exc:  # rtmlib's download or the ONNX runtime failed: say which, and the way out
            raise PoseUnavailableError(
                f"rtmlib could not load its models ({type(exc).__name__}: {exc}); its default weights are downloaded "
                "on first use from download.openmmlab.com (or a Hugging Face mirror) into its cache; where that is "
                "not reachable, set pose.rtmpose.det_model and pose.rtmpose.pose_model (with pose_input_size) to "
                "local .onnx files"
            ) from None
        log.debug("rtmlib: %s", quiet.getvalue().strip())
        self._layout = np.array([LAYOUTS[self.cfg.keypoints].get(name, -1) for name in JOINTS])
        self.joints = tuple(name for name in JOINTS if name in LAYOUTS[self.cfg.keypoints])

    def settings(self) -> dict[str, Any]:
        return {
            "keypoints": self.cfg.keypoints,
            "det_model": self.det_model.rsplit("/", 1)[-1],
            "pose_model": self.pose_model.rsplit("/", 1)[-1],
            **{k: list(v) for k, v in self.sizes.items()},
            "backend": self.cfg.backend,
        }

    def estimate(self, frames: Sequence[np.ndarray], times_s: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
        """The protocol's one person per frame: the largest detected."""
        xy, confidence = empty_keypoints(len(frames), len(JOINTS))
        for t, people in enumerate(self.estimate_people(frames, times_s)):
            if people:
                xy[t], confidence[t] = people[0].xy, people[0].confidence
        return xy, confidence

    def estimate_people(self, frames: Sequence[np.ndarray], times_s: Sequence[float]) -> list[list[Person]]:
        """Everyone the detector boxed in each frame, largest box first (who is measured is chosen later)."""
        people: list[list[Person]] = []
        expected = _N_KEYPOINTS[self.cfg.keypoints]
        has = self._layout >= 0
        for frame in frames:
            bgr = np.ascontiguousarray(frame[..., ::-1])
            boxes = np.asarray(self._detector(bgr), dtype=np.float64).reshape(-1, 4)
            if not len(boxes):
                people.append([])  # nobody: never ask the pose model about the whole image
                continue
            keypoints, scores = self._pose(bgr, bboxes=boxes)
            keypoints, scores = np.asarray(keypoints, dtype=np.float64), np.asarray(scores, dtype=np.float64)
            if keypoints.shape != (len(boxes), expected, 2) or scores.shape != (len(boxes), expected):
                raise PoseUnavailableError(
                    f"rtmlib returned keypoints {keypoints.shape} and scores {scores.shape} for {len(boxes)} boxes; "
                    f"expected ({len(boxes)}, {expected}, 2) and ({len(boxes)}, {expected}): does "
                    f"pose.rtmpose.keypoints={self.cfg.keypoints} match the pose model?"
                )
            found = []
            for person in np.argsort(-(boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]), kind="stable"):
                xy, confidence = empty_keypoints(1, len(JOINTS))
                xy[0, has] = keypoints[person, self._layout[has]]
                # SimCC scores are peak heights, not probabilities; clipped into [0, 1] so one threshold serves all
                confidence[0, has] = np.clip(scores[person, self._layout[has]], 0.0, 1.0)
                found.append(Person(xy=xy[0], confidence=confidence[0]))
            people.append(found)
        return people
