"""The rtmpose adapter against the real rtmlib code, on ONNX stand-ins with rtmlib's model inputs and outputs.

rtmlib's weights are downloaded from OpenMMLab on first use, which cannot happen here; these tests pin what the
adapter relies on (rtmlib's output shapes and pixel frame, the person choice, the keypoint layouts, and never
a person where the detector saw none) without them. No accuracy or speed of RTMPose is claimed from them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from viddiff.config import PoseConfig
from viddiff.errors import PoseUnavailableError
from viddiff.pose.estimators import build_pose_estimator
from viddiff.pose.rtmpose import LAYOUTS, RTMPose
from viddiff.pose.skeleton import JOINTS
from viddiff.testing.pose_models import BOXES, POSE_INPUT, write_rtmlib_stand_ins


def config(models, keypoints: str) -> PoseConfig:
    return PoseConfig(
        estimator="rtmpose",
        rtmpose={"keypoints": keypoints, "det_model": str(models.detector), "pose_model": str(models.pose),
                 "pose_input_size": list(POSE_INPUT), "det_input_size": [640, 640]},
    )


def expected_pixels(models, box: np.ndarray) -> np.ndarray:
    """Where rtmlib puts a SimCC peak: the box grown by 1.25 and widened to the model's aspect, around its centre."""
    width, height = POSE_INPUT
    box_w, box_h = (box[2] - box[0]) * 1.25, (box[3] - box[1]) * 1.25
    box_w, box_h = max(box_w, box_h * width / height), max(box_h, box_w * height / width)
    centre = np.array([(box[0] + box[2]) / 2, (box[1] + box[3]) / 2])
    return centre + (models.peaks - [width / 2, height / 2]) * [box_w / width, box_h / height]


@pytest.mark.parametrize("keypoints,k", [("body", 17), ("body_with_feet", 26)])
def test_keypoints_of_the_largest_person_in_our_joints(tmp_path: Path, keypoints: str, k: int) -> None:
    models = write_rtmlib_stand_ins(tmp_path, k)
    estimator = build_pose_estimator(config(models, keypoints))
    assert isinstance(estimator, RTMPose)
    white, black = np.full((640, 640, 3), 255, np.uint8), np.zeros((640, 640, 3), np.uint8)
    xy, confidence = estimator.estimate([white, black, white], [0.0, 0.1, 0.2])
    assert xy.shape == (3, len(JOINTS), 2) and confidence.shape == (3, len(JOINTS))
    pixels = expected_pixels(models, BOXES[0])  # the larger of the two people
    layout = LAYOUTS[keypoints]
    for joint, index in layout.items():
        np.testing.assert_allclose(xy[0, JOINTS.index(joint)], pixels[index], atol=1e-4, err_msg=joint)
        assert confidence[0, JOINTS.index(joint)] == pytest.approx(models.scores[index], abs=1e-6)
    missing = [JOINTS.index(j) for j in JOINTS if j not in layout]
    assert np.isnan(xy[:, missing]).all() and (confidence[:, missing] == 0).all()
    assert estimator.joints == tuple(j for j in JOINTS if j in layout)
    # The black frame: the detector finds nobody, so there is no person (rtmlib's Body would invent one).
    assert np.isnan(xy[1]).all() and (confidence[1] == 0).all()
    np.testing.assert_array_equal(xy[2], xy[0])
    assert estimator.settings()["keypoints"] == keypoints and estimator.settings()["pose_model"] == models.pose.name


def test_rtmlib_output_contract(tmp_path: Path) -> None:
    """The shapes and pixel frame the adapter relies on, straight from rtmlib."""
    import rtmlib

    models = write_rtmlib_stand_ins(tmp_path, 17)
    image = np.full((640, 640, 3), 200, np.uint8)
    boxes = rtmlib.YOLOX(str(models.detector), model_input_size=(640, 640))(image)
    assert boxes.shape == (2, 4)
    np.testing.assert_allclose(boxes, BOXES)
    keypoints, scores = rtmlib.RTMPose(str(models.pose), model_input_size=POSE_INPUT)(image, bboxes=boxes)
    assert keypoints.shape == (2, 17, 2) and keypoints.dtype == np.float64
    assert scores.shape == (2, 17) and scores.dtype == np.float32
    np.testing.assert_allclose(keypoints[1], expected_pixels(models, BOXES[1]), atol=1e-4)


def test_pose_model_without_its_input_size_is_refused() -> None:
    with pytest.raises(ValueError, match="pose_model needs pose_input_size"):
        PoseConfig(estimator="rtmpose", rtmpose={"pose_model": "x.onnx"})


def test_unreachable_weights_say_how_to_use_local_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # an empty rtmlib cache: it must download
    monkeypatch.delenv("TORCH_HOME", raising=False)
    monkeypatch.setattr("rtmlib.tools.file.urlopen", _offline)  # as here, where OpenMMLab cannot be reached
    with pytest.raises(PoseUnavailableError, match="rtmlib could not load its models.*local .onnx files"):
        build_pose_estimator(PoseConfig(estimator="rtmpose"))


def _offline(*args, **kwargs):
    import urllib.error

    raise urllib.error.URLError("no network in this test")


def test_without_rtmlib_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "rtmlib", None)
    with pytest.raises(PoseUnavailableError, match=r"needs the package 'rtmlib'.*pip install \"viddiff\[rtmpose\]\""):
        build_pose_estimator(PoseConfig(estimator="rtmpose"))
