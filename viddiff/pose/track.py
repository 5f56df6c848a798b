"""A video's keypoints over time (:class:`PoseTrack`), estimated once per content and kept in the SQLite cache.

Results are keyed by the estimator, its settings, and the exact pixels of the frames it saw (in order), so the
same frames never go through an estimator twice, a changed frame or setting never reuses a stale result, and
what two runs share (a benchmark's videos, a clip compared with several others) is computed once.

The cache keeps everyone the estimator found (:mod:`viddiff.pose.people`); who is measured (``pose.subject``)
is chosen afterwards, so changing the rule never estimates again.
"""

from __future__ import annotations

import hashlib
import io
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from viddiff.cache import hash_key
from viddiff.errors import PoseUnavailableError
from viddiff.pose.absence import absence_counts, absence_reasons
from viddiff.pose.estimators import PoseEstimator
from viddiff.pose.facing import facing_per_frame
from viddiff.pose.kinematics import Kinematics, compute_kinematics
from viddiff.pose.people import Person, Subject, choose_subject
from viddiff.pose.skeleton import JOINTS
from viddiff.schema import SubjectInfo

if TYPE_CHECKING:
    from viddiff.cache import Cache
    from viddiff.video import VideoFrames

log = logging.getLogger(__name__)
CACHE_NAMESPACE = "pose"
CACHE_FORMAT = 2
"""Part of the cache key: 2 = everyone found per frame, with world landmarks (1 held one person's keypoints)."""


@dataclass(frozen=True)
class PoseTrack:
    """The measured person's joints per sampled frame of one video (the joint axis follows :data:`JOINTS`)."""

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
    people: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    """(T,) people found per frame (1 where a single-person estimator found someone: it looks for no one else)."""
    subject: SubjectInfo = field(default_factory=SubjectInfo)
    """Who was measured: how many people were seen, by which rule, where, and the identity gaps."""
    world_xyz: Optional[np.ndarray] = None
    """(T, J, 3) the estimator's 3D world landmarks of the measured person (BlazePose: metres, origin between
    the hips, y down, z away from the camera); NaN where not found; ``None`` when the estimator gives none."""
    identity_gap: Optional[np.ndarray] = None
    """(T,) frames where someone was found who could not be shown to be the measured person (gaps, never values)."""
    turned_deg: int = 0
    """Degrees (a multiple of 90, counter-clockwise) the keypoints were turned from the picture's own frame
    (:func:`viddiff.pose.roll.level_pair`); ``width`` and ``height`` are the turned frame's."""

    @property
    def detected(self) -> np.ndarray:
        """(T,) whether a person was found in each frame."""
        return (self.confidence > 0).any(axis=1)

    def detection_rate(self) -> float:
        return float(self.detected.mean()) if len(self.detected) else 0.0

    def kinematics(self, *, min_confidence: float = 0.5, smoothing_frames: int = 3, fix_sides: bool = True) -> Kinematics:
        """Every quantity of :mod:`viddiff.pose.kinematics` over this track: identity gaps are gaps, and left and
        right are checked against the way the person faces (:func:`viddiff.pose.facing.facing_per_frame`)."""
        return compute_kinematics(
            self.xy, self.confidence, self.times_s, self.frame_indices, width=self.width, height=self.height,
            min_confidence=min_confidence, smoothing_frames=smoothing_frames, fix_sides=fix_sides,
            estimated=self.estimated, identity_gap=self.identity_gap,
            facing=facing_per_frame(self.xy, self.confidence, self.world_xyz),
        )


    def subject_info(self, kinematics: Optional[Kinematics] = None) -> SubjectInfo:
        """:attr:`subject`, with the frames whose sides stayed unresolved in ``kinematics`` (of this track)."""
        if kinematics is None or kinematics.side_unresolved is None:
            return self.subject
        return self.subject.model_copy(update={"side_unresolved": int(kinematics.side_unresolved.any(axis=1).sum())})


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


@dataclass(frozen=True)
class FoundPeople:
    """Everyone found in each sampled frame of one video, in the pixels of the frames as read."""

    people: list[list[Person]]
    width: int
    height: int
    counted: bool
    """Whether the estimator looks for everyone (``False``: it follows one person; how many were in view is unknown)."""


def estimate_track(
    video: "VideoFrames", estimator: PoseEstimator, cache: Optional["Cache"] = None, subject: str = "auto"
) -> PoseTrack:
    """The measured person's keypoints in every sampled frame of ``video`` (everyone found is cached, so the
    estimator never sees these frames twice); ``subject`` is the ``pose.subject`` rule (:data:`viddiff.pose.people.RULES`).
    Frames shrunk as they were decoded (``pose.max_side``) are estimated as they are, and the keypoints given in
    the pixels of the frames as read (``video.size``)."""
    found = find_people(video, estimator, cache)
    return track_of(video, estimator, found, choose_subject(found.people, video.times_s, found.width, found.height,
                                                            subject, counted=found.counted))


def find_people(video: "VideoFrames", estimator: PoseEstimator, cache: Optional["Cache"] = None) -> FoundPeople:
    """Everyone :func:`estimate_people` finds, scaled to the pixels of the frames as read (``video.size``)."""
    frames = video.frames
    height, width = (int(frames.shape[1]), int(frames.shape[2])) if frames.ndim == 4 else (0, 0)
    people = estimate_people(video, estimator, cache)
    if frames.ndim == 4 and video.size != (width, height):  # shrunk as decoded (pose.max_side): the pixels read
        scale = np.array(video.size, dtype=np.float64) / (width, height)
        people = [[Person(xy=p.xy * scale, confidence=p.confidence, world=p.world) for p in found] for found in people]
        width, height = video.size
    counted = hasattr(estimator, "estimate_people") and getattr(estimator, "multi_person", True)
    return FoundPeople(people=people, width=width, height=height, counted=counted)


def track_of(video: "VideoFrames", estimator: PoseEstimator, found: FoundPeople, chosen: Subject) -> PoseTrack:
    """The track of the person ``chosen`` (:func:`viddiff.pose.people.choose_subject`) among ``found``."""
    people, n = found.people, len(found.people)
    times_s = np.asarray(video.times_s, dtype=np.float64)
    dropped = absence_counts(absence_reasons(chosen, people, times_s))
    xy, confidence = np.full((n, len(JOINTS), 2), np.nan), np.zeros((n, len(JOINTS)))
    has_world = any(p.world is not None for found_t in people for p in found_t)
    world = np.full((n, len(JOINTS), 3), np.nan) if has_world else None
    for t in np.flatnonzero(chosen.member >= 0):
        person = people[t][chosen.member[t]]
        xy[t], confidence[t] = person.xy, person.confidence
        if world is not None and person.world is not None:
            world[t] = person.world
    given = set(getattr(estimator, "joints", JOINTS))
    return PoseTrack(
        xy=xy, confidence=confidence, frame_indices=np.asarray(video.frame_indices, dtype=np.int64),
        times_s=times_s, width=found.width, height=found.height, estimator=describe(estimator),
        estimated=np.array([joint in given for joint in JOINTS]), people=chosen.people,
        subject=chosen.info.model_copy(update={"dropped": dropped}),
        world_xyz=world, identity_gap=chosen.identity_gap,
    )


def estimate_people(video: "VideoFrames", estimator: PoseEstimator, cache: Optional["Cache"] = None) -> list[list[Person]]:
    """Everyone the estimator finds in each sampled frame of ``video``, from the cache when these exact frames were
    estimated before with these settings (multi-view triangulation needs everyone, not only the subject)."""
    frames = video.frames
    label = describe(estimator)
    key = hash_key({
        "estimator": estimator.name, "settings": estimator.settings(), "joints": list(JOINTS),
        "frames": frames_digest(frames), "format": CACHE_FORMAT,
    })
    found = cache.get(CACHE_NAMESPACE, key) if cache is not None else None
    if found is not None:
        try:
            return _decode(found, len(frames))
        except ValueError as exc:
            log.debug("cached pose unreadable (%s); estimating again", exc)
    people = _estimate_people(estimator, frames, [float(t) for t in video.times_s], label)
    if cache is not None:
        cache.put(CACHE_NAMESPACE, key, _encode(people))
    return people


def _estimate_people(estimator: PoseEstimator, frames: np.ndarray, times_s: list[float], label: str) -> list[list[Person]]:
    """Everyone the estimator finds per frame; a single-person estimator's one person where it found one."""
    many = getattr(estimator, "estimate_people", None)
    if many is not None:
        people = many(list(frames), times_s)
        if len(people) != len(frames):
            raise PoseUnavailableError(f"pose estimator {label} returned people for {len(people)} of {len(frames)} frames")
        return [[_checked_person(p, label) for p in found] for found in people]
    xy, confidence = _checked(estimator.estimate(list(frames), times_s), len(frames), label)
    return [[Person(xy=xy[t], confidence=confidence[t])] if (confidence[t] > 0).any() else [] for t in range(len(frames))]


def _checked_person(person: Person, label: str) -> Person:
    xy, confidence = _checked((person.xy[None], person.confidence[None]), 1, label)
    world = None if person.world is None else np.asarray(person.world, dtype=np.float64).reshape(len(JOINTS), 3)
    return Person(xy=xy[0], confidence=confidence[0], world=world)


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


def _encode(people: Sequence[Sequence[Person]]) -> bytes:
    """Everyone per frame as padded arrays: (T, P, J, 2) pixels, (T, P, J) confidences, (T, P, J, 3) world."""
    n, most = len(people), max((len(found) for found in people), default=0)
    xy = np.full((n, most, len(JOINTS), 2), np.nan)
    confidence = np.zeros((n, most, len(JOINTS)))
    world = np.full((n, most, len(JOINTS), 3), np.nan)
    counts = np.array([len(found) for found in people], dtype=np.int64)
    has_world = np.zeros((n, most), dtype=bool)
    for t, found in enumerate(people):
        for i, person in enumerate(found):
            xy[t, i], confidence[t, i] = person.xy, person.confidence
            if person.world is not None:
                world[t, i], has_world[t, i] = person.world, True
    buffer = io.BytesIO()
    np.savez(buffer, xy=xy, confidence=confidence, world=world, has_world=has_world, counts=counts)
    return buffer.getvalue()


def _decode(data: bytes, n_frames: int) -> list[list[Person]]:
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as stored:
            xy, confidence, world = stored["xy"], stored["confidence"], stored["world"]
            has_world, counts = stored["has_world"], stored["counts"]
    except Exception as exc:  # a truncated or foreign value: recompute rather than fail
        raise ValueError(str(exc)) from None
    if xy.shape[0] != n_frames or xy.shape[2:] != (len(JOINTS), 2) or counts.shape != (n_frames,):
        raise ValueError(f"shapes {xy.shape} / {counts.shape} do not fit {n_frames} frames")
    return [
        [
            Person(xy=xy[t, i], confidence=confidence[t, i], world=world[t, i] if has_world[t, i] else None)
            for i in range(int(counts[t]))
        ]
        for t in range(n_frames)
    ]
