"""One side of a comparison filmed by several calibrated cameras: the other views and their calibration, as the
comparison form names them (``views_a``, ``calibration_a_id``), checked against each other before anything is
queued, so a comparison never fails minutes later on a setup that could not work."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Awaitable, Callable, Optional

from viddiff.serve.errors import ApiError
from viddiff.serve.jobs import CalibrationRow, VideoRow
from viddiff.serve.uploads import Form


@dataclass(frozen=True)
class Setup:
    """One side's other views (uploaded videos, in the calibration's camera order after the main video's) and
    their calibration; both empty for a one-view side."""

    views: list[VideoRow] = field(default_factory=list)
    calibration: Optional[CalibrationRow] = None

    @property
    def calibration_path(self) -> Optional[str]:
        return self.calibration.path if self.calibration else None

    @property
    def calibration_name(self) -> Optional[str]:
        return self.calibration.filename if self.calibration else None


async def side_setup(
    form: Form, side: str, *, pose: bool, most: int,
    video: Callable[[str], Awaitable[VideoRow]], calibration: Callable[[str], Awaitable[CalibrationRow]],
) -> Setup:
    """Side ``side``'s setup: ``views_{side}`` (ids of uploaded videos) and ``calibration_{side}_id``, each found
    by ``video`` / ``calibration`` (the owner's uploads: 404 otherwise); 422 where they do not fit each other,
    ``pose``, or ``most`` videos per side (``serve.max_views_per_side``)."""
    ids = [v.strip() for v in form.fields.get(f"views_{side}", []) if v.strip()]
    calibration_id = (form.text(f"calibration_{side}_id") or "").strip()
    if not ids and not calibration_id:
        return Setup()
    if not ids:
        raise ApiError(422, f"calibration_{side}_id is given but no views_{side}: a calibration goes with the "
                       f"other cameras' videos of the same take (views_{side}, ids from POST /v1/videos)")
    if not calibration_id:
        raise ApiError(422, f"views_{side} need calibration_{side}_id: where each camera stood (upload a Pose2Sim "
                       "TOML or a Qualisys .qca.txt with POST /v1/calibrations)")
    if not pose:
        raise ApiError(422, f"views_{side} are used only to measure body pose in 3D: set pose=true, or leave them out")
    if 1 + len(ids) > most:
        raise ApiError(422, f"video {side.upper()} has {1 + len(ids)} views (its video and {len(ids)} in views_{side}); "
                       f"at most serve.max_views_per_side = {most}")
    main = (form.text(f"video_{side}_id") or "").strip()
    if len(set(ids)) < len(ids) or main in ids:
        raise ApiError(422, f"views_{side} names a video twice (or video_{side}_id again): each view is another camera")
    views = [await video(video_id) for video_id in ids]
    cameras = await calibration(calibration_id)
    if cameras.cameras != 1 + len(views):
        raise ApiError(422, f"calibration_{side}_id {calibration_id!r} holds {cameras.cameras} cameras, but video "
                       f"{side.upper()} has {1 + len(views)} views (video_{side} and {len(views)} in views_{side}): "
                       "give one video per camera, in the calibration's order")
    return Setup(views=views, calibration=cameras)
