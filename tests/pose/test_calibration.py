"""Reading the Qualisys calibration that ships with the Pose2Sim demo (tests/data/pose2sim/Calib.qca.txt, BSD-3)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from viddiff.pose.calibration import CalibrationError, distort, parse_qca, read_qca, undistort

CLIPS = Path(__file__).resolve().parents[1] / "data" / "pose2sim"
CALIBRATION = CLIPS / "Calib.qca.txt"


@pytest.fixture(scope="module")
def cameras():
    return read_qca(CALIBRATION)


def test_reads_the_four_demo_cameras_with_their_intrinsics(cameras) -> None:
    assert [c.name for c in cameras] == ["cam01", "cam02", "cam03", "cam04"]
    cam01 = cameras[0]
    assert (cam01.width, cam01.height) == (1088, 1920)
    # focal lengths and principal point are stored in 1/64 sensor pixels
    assert cam01.matrix[0, 0] == pytest.approx(107599.671875 / 64)
    assert cam01.matrix[1, 1] == pytest.approx(107588.828125 / 64)
    assert cam01.matrix[:2, 2] == pytest.approx([34110.316406 / 64, 60680.792969 / 64])
    assert cam01.distortion == pytest.approx([-0.046183, 0.139983, 0.000608, 0.00069, 0.0])


def test_extrinsics_are_rotations_placing_each_camera_where_the_file_says(cameras) -> None:
    positions = {"cam01": (1460.2323709212087, -1909.1590482454608, 1896.5058524092062),
                 "cam04": (-3758.720480260634, -1415.6654017496533, 1881.7941041388026)}
    for camera in cameras:
        assert camera.rotation @ camera.rotation.T == pytest.approx(np.eye(3), abs=1e-6)
        assert np.linalg.det(camera.rotation) == pytest.approx(1.0, abs=1e-6)
        if camera.name in positions:
            assert camera.centre == pytest.approx(np.array(positions[camera.name]) / 1000, abs=1e-9)


def test_every_camera_sees_the_capture_volume_upright(cameras) -> None:
    """The force plates (near the world origin) are in front of every camera and inside its picture, and a point
    above them (world z is up) appears higher in the picture (smaller y): the OpenCV axes are the right way round."""
    floor, head = np.array([-1.0, 0.0, 0.0]), np.array([-1.0, 0.0, 1.7])
    for camera in cameras:
        assert (camera.rotation @ floor + camera.translation)[2] > 0
        u, v = camera.project(floor)
        assert 0 <= u < camera.width and 0 <= v < camera.height
        assert camera.project(head)[1] < v


def test_a_rescaled_video_gets_a_rescaled_camera(cameras) -> None:
    cam = cameras[0]
    fitted = cam.fitted_to(1080, 1920)
    assert fitted.matrix[0, 0] == pytest.approx(cam.matrix[0, 0] * 1080 / 1088)
    point = np.array([-1.0, 0.2, 1.0])
    assert fitted.project(point)[0] + 0.5 == pytest.approx((cam.project(point)[0] + 0.5) * 1080 / 1088)
    assert cam.fitted_to(1088, 1920) is cam
    with pytest.raises(CalibrationError, match="not a rescale"):
        cam.fitted_to(1920, 1088)


def test_undistort_inverts_distort() -> None:
    coefficients = np.array([-0.05, 0.14, 0.0006, 0.0007, 0.0])
    points = np.random.default_rng(0).uniform(-0.6, 0.6, (50, 2))
    assert undistort(distort(points, coefficients), coefficients) == pytest.approx(points, abs=1e-9)


def test_normalised_rays_and_projection_agree(cameras) -> None:
    cam = cameras[2]
    points = np.random.default_rng(1).uniform([-2, -1, 0], [0, 1, 2], (20, 3))
    rays = cam.normalised(cam.project(points))
    in_camera = points @ cam.rotation.T + cam.translation
    assert rays == pytest.approx(in_camera[:, :2] / in_camera[:, 2:], abs=1e-9)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not xml at all <", "is not a Qualisys calibration"),
        ("<calibration><cameras/></calibration>", "no cameras"),
        ("<calibration><cameras><camera serial='c1'/></cameras></calibration>", "needs <fov_video>"),
    ],
)
def test_bad_files_give_one_clear_error(text: str, message: str) -> None:
    with pytest.raises(CalibrationError, match=message):
        parse_qca(text)


def test_unsupported_or_broken_cameras_are_refused() -> None:
    real = CALIBRATION.read_text()
    with pytest.raises(CalibrationError, match="viewrotation 90 is not supported"):
        parse_qca(real.replace('viewrotation="0"', 'viewrotation="90"', 1))
    with pytest.raises(CalibrationError, match="focalLengthU is 'x'"):
        parse_qca(real.replace('focalLengthU="107599.671875"', 'focalLengthU="x"'))
    with pytest.raises(CalibrationError, match="not a rotation"):
        parse_qca(real.replace('r11="0.5536380477336265"', 'r11="3.0"'))
    with pytest.raises(CalibrationError, match="cannot read calibration file"):
        read_qca(CLIPS / "missing.qca.txt")
