"""A video's keypoints over time (:class:`PoseTrack`), estimated once per content and kept in the SQLite cache.

Results are keyed by the estimator, its settings, and the exact pixels of the frames it saw (in order), so the
same frames never go through an estimator twice, a changed frame or setting never reuses a stale result, and
what two runs share (a benchmark's videos, a clip compared with several others) is computed once.
"""

from __future__ import annotations

import hashlib
import io
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

import numpy as np

from viddiff.cache import hash_key
from viddiff.errors import PoseUnavailableError
from viddiff.pose.estimators import PoseEstimator
from viddiff.pose.kinematics import Kinematics, compute_kinematics
from viddiff.pose.skeleton import JOINTS

if TYPE_CHECKING:
    from viddiff.cache import Cache
    from viddiff.video import VideoFrames

log = logging.getLogger(__name__)
CACHE_NAMESPACE = "pose"


@dataclass(frozen=True)
class PoseTrack:
    """One person's joints per sampled frame of one video (the joint axis follows :data:`JOINTS`)."""

    xy: np.ndarray
    """(T, J, 2) float64 pixels in the upright frames the estimator saw; NaN where not found."""
    confidence: np.ndarray
    """(T, J) float64 in [0, 1]; 0 where not found."""
    frame_indices: np.ndarray
    """(T,) source frame index of each sample."""
    times_s: np.ndarray
    """(T,) seconds since the clip's start: true presentation times."""
    width: int
    height: int
    estimator: str
    """The estimator and its settings, as recorded with every measurement."""
    estimated: np.ndarray
    """(J,) the joints the estimator gives at all (COCO-17 models have no heels or toes)."""

    @property
    def detected(self) -> np.ndarray:
        """(T,) whether a person was found in each frame."""
        return (self.confidence > 0).any(axis=1)

    def detection_rate(self) -> float:
        return float(self.detected.mean()) if len(self.detected) else 0.0

    def kinematics(self, *, min_confidence: float = 0.5, smoothing_frames: int = 3, fix_sides: bool = True) -> Kinematics:
        """Every quantity of :mod:`viddiff.pose.kinematics` over this track."""
        return compute_kinematics(
            self.xy, self.confidence, self.times_s, self.frame_indices, width=self.width, height=self.height,
            min_confidence=min_confidence, smoothing_frames=smoothing_frames, fix_sides=fix_sides,
            estimated=self.estimated,
        )


def describe(estimator: PoseEstimator) -> str:
    """``blazepose (api=legacy, static_image_mode=False, ...)``: the estimator as results record it."""
    settings = ", ".join(f"{k}={v}" for k, v in sorted(estimator.settings().items()))
    return f"{estimator.name} ({settings})" if settings else estimator.name


def frames_digest(frames: np.ndarray) -> str:
    """SHA-256 over the frames' shape and pixels, in order: equal content, equal key, wherever it came from."""
    digest = hashlib.sha256(f"{frames.dtype.str}{frames.shape}".encode())
    for frame in frames:
        digest.update(np.ascontiguousarray(frame).data)
    return digest.hexdigest()


def estimate_track(video: "VideoFrames", estimator: PoseEstimator, cache: Optional["Cache"] = None) -> PoseTrack:
    """The keypoints of every sampled frame of ``video``, from the cache when these frames were seen before."""
    frames = video.frames
    height, width = (int(frames.shape[1]), int(frames.shape[2])) if frames.ndim == 4 else (0, 0)
    label = describe(estimator)
    key = hash_key(
        {"estimator": estimator.name, "settings": estimator.settings(), "joints": list(JOINTS), "frames": frames_digest(frames)}
    )
    found = cache.get(CACHE_NAMESPACE, key) if cache is not None else None
    xy = confidence = None
    if found is not None:
        try:
            xy, confidence = _decode(found, len(frames))
        except ValueError as exc:
            log.debug("cached pose unreadable (%s); estimating again", exc)
    if xy is None or confidence is None:
        xy, confidence = _checked(estimator.estimate(list(frames), [float(t) for t in video.times_s]), len(frames), label)
        if cache is not None:
            cache.put(CACHE_NAMESPACE, key, _encode(xy, confidence))
    given = set(getattr(estimator, "joints", JOINTS))
    return PoseTrack(
        xy=xy, confidence=confidence, frame_indices=np.asarray(video.frame_indices, dtype=np.int64),
        times_s=np.asarray(video.times_s, dtype=np.float64), width=width, height=height, estimator=label,
        estimated=np.array([joint in given for joint in JOINTS]),
    )


def _checked(result: tuple[np.ndarray, np.ndarray], n_frames: int, label: str) -> tuple[np.ndarray, np.ndarray]:
    """An estimator's output in the contract's shapes, or a clear error naming the estimator (a plug-in's bug)."""
    xy, confidence = (np.asarray(a, dtype=np.float64) for a in result)
    expected = (n_frames, len(JOINTS))
    if xy.shape != (*expected, 2) or confidence.shape != expected:
        raise PoseUnavailableError(
            f"pose estimator {label} returned keypoints {xy.shape} and confidences {confidence.shape}; "
            f"expected {(*expected, 2)} and {expected} (frames, joints of viddiff.pose.skeleton.JOINTS): fix the "
            "plug-in, or choose another estimator with pose.estimator"
        )
    confidence = np.clip(np.nan_to_num(confidence, nan=0.0), 0.0, 1.0)
    xy = np.where((confidence > 0)[..., None], xy, np.nan)
    return xy, confidence


def _encode(xy: np.ndarray, confidence: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, xy=xy, confidence=confidence)
    return buffer.getvalue()


def _decode(data: bytes, n_frames: int) -> tuple[np.ndarray, np.ndarray]:
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as stored:
            xy, confidence = stored["xy"], stored["confidence"]
    except Exception as exc:  # a truncated or foreign value: recompute rather than fail
        raise ValueError(str(exc)) from None
    if xy.shape != (n_frames, len(JOINTS), 2) or confidence.shape != (n_frames, len(JOINTS)):
        raise ValueError(f"shapes {xy.shape} / {confidence.shape} do not fit {n_frames} frames")
    return xy, confidence
