"""Calibration files: the Qualisys file of the real Pose2Sim take, Pose2Sim's TOML, and viddiff's own TOML."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from viddiff.pose.calibration import CalibrationError, read_qca
from viddiff.pose.setup import matrix_to_rodrigues, read_cameras, rodrigues_to_matrix, write_toml

DATA = Path(__file__).resolve().parents[1] / "data" / "pose2sim"
POINTS = np.random.default_rng(0).uniform([-1.6, -0.4, 0.0], [-0.6, 0.4, 1.8], (30, 3))

POSE2SIM_TOML = """[cam_01]
name = "cam_01"
size = [ 1088.0, 1920.0]
matrix = [ [ 1681.2, 0.0, 532.9], [ 0.0, 1681.0, 948.1], [ 0.0, 0.0, 1.0]]
distortions = [ -0.046, 0.139, 0.0006, 0.0007]
rotation = [ 1.5, -0.4, 0.3]
translation = [ 0.2, 0.9, 3.4]
fisheye = false

[metadata]
adjusted = false
error = 0.0
"""
"""A camera as Pose2Sim's ``toml_write`` writes it (its layout, key for key)."""


def test_the_qualisys_file_reads_as_before() -> None:
    cameras = read_cameras(DATA / "Calib.qca.txt")
    assert [c.name for c in cameras] == ["cam01", "cam02", "cam03", "cam04"]
    for ours, theirs in zip(cameras, read_qca(DATA / "Calib.qca.txt")):
        assert np.allclose(ours.project(POINTS), theirs.project(POINTS))


def test_viddiff_toml_round_trips_the_real_cameras(tmp_path: Path) -> None:
    cameras = read_cameras(DATA / "Calib.qca.txt")
    cameras = [cameras[0], cameras[1].__class__(**{**cameras[1].__dict__, "error_px": 0.42})]
    back = read_cameras(write_toml(tmp_path / "setup.toml", cameras))
    assert [c.name for c in back] == ["cam01", "cam02"]
    assert back[1].error_px == pytest.approx(0.42) and back[0].error_px is None
    for a, b in zip(cameras, back):
        assert (a.width, a.height) == (b.width, b.height)
        assert np.abs(a.project(POINTS) - b.project(POINTS)).max() < 1e-6  # pixels


def test_pose2sim_toml_reads_in_opencv_conventions(tmp_path: Path) -> None:
    path = tmp_path / "Calib_board.toml"
    path.write_text(POSE2SIM_TOML)
    (camera,) = read_cameras(path)
    assert (camera.name, camera.width, camera.height) == ("cam_01", 1088, 1920)
    rvec, tvec = np.array([1.5, -0.4, 0.3]), np.array([0.2, 0.9, 3.4])
    k = np.array([[1681.2, 0, 532.9], [0, 1681.0, 948.1], [0, 0, 1.0]])
    expected, _ = cv2.projectPoints(POINTS, rvec, tvec, k, np.array([-0.046, 0.139, 0.0006, 0.0007]))
    assert np.abs(camera.project(POINTS) - expected.reshape(-1, 2)).max() < 1e-6


def test_rodrigues_matches_opencv() -> None:
    for vector in (np.array([0.3, -1.2, 2.0]), np.array([np.pi, 0.0, 0.0]) * 0.999999, np.zeros(3)):
        matrix, _ = cv2.Rodrigues(vector)
        assert np.allclose(rodrigues_to_matrix(vector), matrix, atol=1e-9)
        assert np.allclose(rodrigues_to_matrix(matrix_to_rodrigues(matrix)), matrix, atol=1e-6)


@pytest.mark.parametrize("text, words", [
    ("[cam]\nsize = [10, 10]\nmatrix = [1, 2]\n", "'matrix' should be"),
    ("[cam]\nmatrix = [[1,0,0],[0,1,0],[0,0,1]]\n", "'size' is missing"),
    ("[cam]\nname='x'\nsize=[10, 10]\nmatrix=[[1,0,0],[0,1,0],[0,0,1]]\nrotation=[0,0,0]\ntranslation=[0,0,0]\nfisheye=true\n", "fisheye"),
    ("[metadata]\nerror = 0.0\n", "no cameras"),
    ("not toml ][", "not a TOML file"),
])
def test_bad_calibration_files_say_what_is_wrong(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(CalibrationError, match=words):
        read_cameras(path)


def test_an_unknown_kind_of_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "cameras.json"
    path.write_text("{}")
    with pytest.raises(CalibrationError, match="not a calibration file"):
        read_cameras(path)
