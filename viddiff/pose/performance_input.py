"""A performance filmed by several calibrated cameras (``VideoRef.views``), checked where it enters: the Python
API, the command line, ``viddiff data check`` and the pose evidence itself.

Every video must exist and the calibration must read, with exactly one camera per video (the main video's
first, then each view's, in order), so a wrong file is one clear error before any model call instead of a
failure deep in the pose estimation, or, worse, a triangulation through the wrong cameras.
"""

from __future__ import annotations

from pathlib import Path

from viddiff.errors import CameraSetupError, VideoError
from viddiff.pose.calibration import Camera, CalibrationError
from viddiff.pose.setup import read_cameras
from viddiff.schema import VideoRef


def performance_paths(ref: VideoRef) -> tuple[str, ...]:
    """The main video's path, then each view's: the order of the calibration's cameras."""
    return (ref.path, *(view.path for view in ref.views))


def performance_cameras(ref: VideoRef, which: str) -> list[Camera]:
    """The cameras of a performance filmed from several views, one per video in the order of
    :func:`performance_paths` (none for a one-view reference), after checking that its videos exist and that its
    calibration reads. ``which`` names it in errors ("video A")."""
    if not ref.views:
        return []
    paths = performance_paths(ref)
    repeated = sorted({path for path in paths if paths.count(path) > 1})
    if repeated:
        raise VideoError(f"{which} lists {', '.join(repeated)} more than once: give each camera's video once")
    missing = [path for path in paths if not Path(path).exists()]
    if missing:
        raise VideoError(f"{which}: {', '.join(missing)} not found; check the path(s)")
    return calibrated_cameras(ref, which)


def calibrated_cameras(ref: VideoRef, which: str) -> list[Camera]:
    """The cameras of ``ref.calibration``, one per video of ``ref`` (whether the videos exist is not asked)."""
    assert ref.calibration is not None, "a reference with views has a calibration (VideoRef checks it)"
    try:
        cameras = read_cameras(ref.calibration)
    except CalibrationError as exc:
        raise CameraSetupError(f"{which}: {exc}") from None
    paths = performance_paths(ref)
    if len(cameras) != len(paths):
        names = ", ".join(camera.name for camera in cameras)
        raise CameraSetupError(
            f"{which}: {ref.calibration} holds {len(cameras)} cameras ({names}) for {len(paths)} videos; give a "
            "calibration of exactly the cameras that filmed them, in the order of the videos (main video first)"
        )
    return cameras
