"""``viddiff calibrate``: two (or more) phones calibrated with a printed checkerboard, written as a Pose2Sim-format
TOML that ``viddiff compare`` / ``viddiff pose`` take with ``--calibration`` (docs/pose.md, "Two phones (3D)").

Per phone, in the order the performance's videos will be given (main view first): its intrinsics from a clip
(or a folder of photos) of the board moved in front of it (``--intrinsics``), or from an earlier calibration file
(``--intrinsics-from``); then its place from a clip of the board standing still where both phones see it
(``--extrinsics``). Prints each camera's reprojection errors and how far apart the phones stand.
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path
from typing import Optional

import numpy as np

from viddiff.errors import ViddiffError
from viddiff.pose.calibration import Camera, CalibrationError
from viddiff.pose.checkerboard import Board, best_corners, calibrate_intrinsics, locate
from viddiff.pose.setup import read_cameras, write_toml
from viddiff.video import read_video

MIN_VIEW_ANGLE_DEG = 30.0
"""Below this angle between two phones' lines of sight, depth along them is poorly fixed: a warning."""


def parse_board(text: str, square_mm: float) -> Board:
    match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if not match or min(int(match[1]), int(match[2])) < 2:
        raise ViddiffError(f"--board {text!r}: give the inner corners across and down, e.g. 4x7")
    if not square_mm > 0:
        raise ViddiffError(f"--square-mm must be positive, got {square_mm:g}")
    return Board(columns=int(match[1]), rows=int(match[2]), square_m=square_mm / 1000.0)


def frames_of(path: str, every_s: Optional[float]) -> np.ndarray:
    """The frames of a video (one every ``every_s`` seconds; all when ``None``) or every photo of a folder, upright,
    at full size."""
    source = Path(path).expanduser()
    if source.is_dir():
        return read_video(source, fps_original=1.0).frames
    return read_video(source, target_fps=None if every_s is None else 1.0 / every_s).frames


def cli_calibrate(args: argparse.Namespace) -> int:
    board = parse_board(args.board, args.square_mm)
    if args.intrinsics and args.intrinsics_from:
        raise ViddiffError("give either --intrinsics (board clips) or --intrinsics-from (a calibration file), not both")
    n = len(args.extrinsics)
    if n < 2:
        raise ViddiffError("give one --extrinsics clip per phone (at least two), main view first")
    names = args.names or [f"cam{i + 1:02d}" for i in range(n)]
    if len(names) != n:
        raise ViddiffError(f"--names gives {len(names)} names for {n} phones")
    if args.intrinsics_from:
        known = read_cameras(args.intrinsics_from)
        if len(known) != n:
            raise ViddiffError(f"{args.intrinsics_from} holds {len(known)} cameras; {n} phones were given")
        intrinsics = [Camera(**{**c.__dict__, "name": name}) for c, name in zip(known, names)]
        for camera in intrinsics:
            print(f"{camera.name}: intrinsics from {args.intrinsics_from}")
    else:
        if len(args.intrinsics) != n:
            raise ViddiffError(f"give one --intrinsics clip per phone: {len(args.intrinsics)} for {n} --extrinsics")
        intrinsics = []
        for name, clip in zip(names, args.intrinsics):
            frames = frames_of(clip, args.every)
            camera, used = calibrate_intrinsics(list(frames), board, name)
            intrinsics.append(camera)
            print(f"{name}: intrinsics from {used} of {len(frames)} frames of {clip}: reprojection error "
                  f"{camera.error_px:.2f} px RMS, focal length {camera.matrix[0, 0]:.0f} px ({camera.width}x{camera.height})")
    cameras = []
    for camera, clip in zip(intrinsics, args.extrinsics):
        frames = frames_of(clip, args.every)
        height, width = frames.shape[1:3]
        fitted = camera.fitted_to(width, height)
        placed = locate(fitted, best_corners(list(frames), board, fitted), board)
        cameras.append(placed)
        print(f"{placed.name}: placed from {clip}: reprojection error {placed.error_px:.2f} px RMS (intrinsics and "
              f"placement), {np.linalg.norm(placed.centre):.2f} m from the board")
    for i in range(1, n):
        gap = float(np.linalg.norm(cameras[i].centre - cameras[0].centre))
        angle = math.degrees(math.acos(float(np.clip(cameras[i].rotation[2] @ cameras[0].rotation[2], -1, 1))))
        note = "" if angle >= MIN_VIEW_ANGLE_DEG else (
            f" (warning: under {MIN_VIEW_ANGLE_DEG:g}° apart, depth is poorly fixed; place the phones further round the body)")
        print(f"{cameras[0].name} and {cameras[i].name}: {gap:.2f} m apart, lines of sight {angle:.0f}° apart{note}")
    try:
        out = write_toml(Path(args.out).expanduser(), cameras)
    except OSError as exc:
        raise CalibrationError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    print(f"calibration in {out}")
    return 0
