"""Checkerboard calibration on boards rendered through known cameras: the calibration must give them back."""

from __future__ import annotations

import numpy as np
import pytest

from viddiff.cli import main
from viddiff.pose.calibration import Camera, CalibrationError
from viddiff.pose.checkerboard import Board, calibrate_intrinsics, find_corners, locate
from viddiff.pose.setup import read_cameras, rodrigues_to_matrix
from viddiff.video.write import write_video
from viddiff.pose.triangulation import triangulate

BOARD = Board(columns=6, rows=9, square_m=0.04)
WIDTH, HEIGHT = 540, 960
TRUE = Camera(
    name="phone", width=WIDTH, height=HEIGHT, matrix=np.array([[712.0, 0, 272.0], [0, 711.0, 476.0], [0, 0, 1]]),
    distortion=np.array([0.08, -0.15, 0.0, 0.0, 0.0]), rotation=np.eye(3), translation=np.zeros(3),
)


def render(camera: Camera, rotation: np.ndarray, translation: np.ndarray, board: Board = BOARD) -> np.ndarray:
    """The board (black and white squares with a white margin of one square) as ``camera`` sees it when the board
    frame maps to the camera frame by ``rotation``, ``translation``: each pixel's ray, through the lens model,
    meets the board's plane, which says its colour (grey background elsewhere), averaged over 2×2 points per
    pixel as a sensor does (hard, aliased edges would move the corners). RGB uint8."""
    v, u = np.mgrid[0 : camera.height, 0 : camera.width].astype(np.float64)
    image = np.mean([_shade(camera, rotation, translation, board, u + du, v + dv)
                     for du in (-0.25, 0.25) for dv in (-0.25, 0.25)], axis=0)
    return np.repeat(np.round(image).astype(np.uint8)[..., None], 3, axis=-1)


def _shade(camera: Camera, rotation: np.ndarray, translation: np.ndarray, board: Board, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    rays = camera.normalised(np.stack([u, v], axis=-1))
    direction = np.concatenate([rays, np.ones(rays.shape[:-1] + (1,))], axis=-1) @ rotation  # in the board frame
    origin = -rotation.T @ translation
    with np.errstate(divide="ignore", invalid="ignore"):
        s = -origin[2] / direction[..., 2]
    hit = origin[:2] + s[..., None] * direction[..., :2]
    cells = np.floor(hit / board.square_m).astype(int) + 1  # inner corners at cell boundaries 1..n
    inside = (s > 0) & (cells[..., 0] >= -1) & (cells[..., 0] <= board.columns + 1) & (cells[..., 1] >= -1) & (cells[..., 1] <= board.rows + 1)
    squares = (cells[..., 0] >= 0) & (cells[..., 0] <= board.columns) & (cells[..., 1] >= 0) & (cells[..., 1] <= board.rows)
    dark = squares & ((cells[..., 0] + cells[..., 1]) % 2 == 0)
    return np.where(inside, np.where(dark, 20.0, 235.0), 128.0)


def pose(tilt_x: float, tilt_y: float, distance: float, shift=(0.0, 0.0)) -> tuple[np.ndarray, np.ndarray]:
    """A board ``distance`` m in front of the camera, centred (plus ``shift``), turned by the tilts (degrees)."""
    rotation = rodrigues_to_matrix(np.radians([tilt_x, 0, 0])) @ rodrigues_to_matrix(np.radians([0, tilt_y, 0]))
    centre = np.array([BOARD.columns - 1, BOARD.rows - 1, 0]) * BOARD.square_m / 2
    translation = np.array([shift[0], shift[1], distance]) - rotation @ centre
    return rotation, translation


POSES = [pose(0, 0, 0.8), pose(25, 0, 0.9), pose(-25, 0, 0.9), pose(0, 25, 0.9), pose(0, -25, 0.9),
         pose(20, 20, 0.7, (0.1, 0.2)), pose(-20, 15, 0.7, (-0.1, -0.2)), pose(15, -20, 1.0, (0.05, -0.3))]


@pytest.fixture(scope="module")
def board_frames() -> list[np.ndarray]:
    """The board moved in front of the phone: one rendered frame per pose."""
    return [render(TRUE, r, t) for r, t in POSES]


@pytest.fixture(scope="module")
def intrinsics(board_frames) -> tuple[Camera, int]:
    return calibrate_intrinsics(board_frames, BOARD, "phone")


def test_corners_are_found_where_the_camera_puts_them() -> None:
    rotation, translation = POSES[5]
    corners = find_corners(render(TRUE, rotation, translation), BOARD)
    placed = Camera(**{**TRUE.__dict__, "rotation": rotation, "translation": translation})
    expected = placed.project(BOARD.points())
    assert corners is not None
    gaps = np.linalg.norm(corners - expected, axis=1)  # pixels (the rendering has hard, aliased edges)
    assert gaps.max() < 1.0 and np.median(gaps) < 0.3  # and in the same order: rows running down the picture


def test_intrinsics_come_back_from_rendered_boards(intrinsics) -> None:
    camera, used = intrinsics
    assert used == len(POSES)
    assert camera.error_px < 0.3  # RMS reprojection error, pixels
    assert camera.matrix[0, 0] == pytest.approx(712.0, rel=0.01) and camera.matrix[1, 1] == pytest.approx(711.0, rel=0.01)
    assert camera.matrix[:2, 2] == pytest.approx([272.0, 476.0], abs=5.0)
    edge = np.array([[0.0, 0.0], [WIDTH - 1.0, HEIGHT - 1.0], [WIDTH - 1.0, 0.0]])
    assert np.abs(camera.normalised(edge) - TRUE.normalised(edge)).max() * 712 < 2.0  # the lens, in pixels


def test_two_phones_are_placed_in_the_boards_world(intrinsics) -> None:
    camera, _ = intrinsics
    # two phones 1.5 m apart looking at one upright board from the same side, 40° apart
    board_in_a = pose(0, 20, 2.0)
    board_in_b = pose(0, -20, 2.2, (0.1, 0.0))
    placed = [locate(camera, find_corners(render(TRUE, *board), BOARD), BOARD) for board in (board_in_a, board_in_b)]
    truth = [Camera(**{**TRUE.__dict__, "rotation": r, "translation": t}) for r, t in (board_in_a, board_in_b)]
    for found, true in zip(placed, truth):
        assert np.linalg.norm(found.centre - true.centre) < 0.03  # metres, at 2 m
        assert found.error_px < 0.5
    points = np.random.default_rng(0).uniform([-0.5, -0.5, -1.0], [0.7, 0.8, 0.3], (20, 3))
    pixels = np.stack([c.project(points) for c in truth])
    found = triangulate(placed, pixels, np.ones(pixels.shape[:2])).points
    assert np.linalg.norm(found - points, axis=1).max() < 0.03


def test_too_few_boards_are_refused() -> None:
    frames = [render(TRUE, *POSES[0])] * 2 + [np.full((HEIGHT, WIDTH, 3), 128, np.uint8)] * 3
    with pytest.raises(CalibrationError, match="found in 2 of 5 frames"):
        calibrate_intrinsics(frames, BOARD, "phone")


def test_calibrate_command_writes_a_setup_that_places_both_phones(board_frames, tmp_path, capsys) -> None:
    """``viddiff calibrate`` on encoded clips: the board moved in front of each phone (2 frames a second), then
    still where both see it; the TOML it writes places the phones where they were."""
    boards = [tmp_path / f"board_{i}.mp4" for i in (1, 2)]
    stills = [tmp_path / f"still_{i}.mp4" for i in (1, 2)]
    placements = [pose(0, 25, 2.0), pose(0, -25, 2.1, (0.1, 0.0))]
    for clip in boards:
        write_video(clip, np.stack(board_frames), fps=2, options={"crf": "10", "preset": "ultrafast"})
    for clip, placement in zip(stills, placements):
        write_video(clip, np.stack([render(TRUE, *placement)] * 3), fps=2, options={"crf": "10", "preset": "ultrafast"})
    out = tmp_path / "setup.toml"
    argv = ["calibrate", "--board", "6x9", "--square-mm", "40", "--out", str(out), "--names", "front", "side"]
    argv += [a for clip in boards for a in ("--intrinsics", str(clip))] + [a for clip in stills for a in ("--extrinsics", str(clip))]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "front: intrinsics from 8 of 8 frames" in printed and "lines of sight 50° apart" in printed
    front, side = read_cameras(out)
    assert (front.name, side.name) == ("front", "side") and front.error_px < 1.0 and side.error_px < 1.0
    for found, (rotation, translation) in zip((front, side), placements):
        true_centre = -rotation.T @ translation
        assert np.linalg.norm(found.centre - true_centre) < 0.05


def test_calibrate_command_says_what_is_wrong(tmp_path, capsys) -> None:
    assert main(["calibrate", "--board", "six", "--square-mm", "40", "--out", str(tmp_path / "x.toml"),
                 "--extrinsics", "a.mp4", "--extrinsics", "b.mp4"]) == 2
    assert "--board 'six': give the inner corners" in capsys.readouterr().err
