"""Who is measured when one performance is filmed by several calibrated cameras: the same person in every view,
chosen jointly (``pose.subject: auto`` only).

Chosen in each view on its own, ``auto`` may measure the athlete in one view and a bystander in another (Pose2Sim's
two-person take): those views' keypoints do not triangulate together, and the take has no 3D body. Here each view's
people (the identities :func:`viddiff.pose.people.choose_subject` links over time, its best :data:`CANDIDATES`) are
paired with the main view's by how well their keypoints triangulate together: the median reprojection error over
the frames both see (:func:`viddiff.pose.triangulation.triangulate`, left and right as either view labels them,
whichever fits). A main-view person whose best partner in every extra view is within :data:`MATCH_ERROR` makes a
*pairing*. Of the pairings, the one whose body in 3D stands nearest where the cameras aim (the point nearest all
their optical axes: ``auto``'s "nearest the centre" of every picture at once) is measured. Size and range of
movement, ``auto``'s other cues, do not tell across views: a bystander near one camera is large in it, and on the
first half second of the two-person take (cam01+cam02 test clips, 20 parts and frame rates) the bystander's 3D
range of movement exceeded the athlete's in 7, while the athlete stood 0.45–0.55 m from the aim and the bystander
1.04–1.20 m in all of them.

A view's own choice is replaced only where the pairing's person there lies nearer the aim than the view's own choice
(the distance from the aim to the ray through their hips): where a view's own choice has no partner because the
others barely see them (hidden behind someone), no pairing of other people overrules it. Where no pairing is chosen,
each view keeps its own choice (the views then say they measured different people). Where the pairing differs from
some view's own choice, every view's subject record says why.

Where the views' offsets are not given, each pair of people is aligned by their own motion
(:func:`viddiff.pose.sync.motion_offset`), and a pair it cannot align is no pair. Two views' epipolar geometry lets
a wrong offset pair different people; the aim and the guard above keep such a pairing from overruling a view (on the
two-person take's 36 parts and pairs of cameras it overruled none wrongly).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from viddiff.pose.calibration import Camera
from viddiff.pose.people import Subject, choose_subject, link_identities
from viddiff.pose.resample import resample_track
from viddiff.pose.skeleton import INDEX, SWAP
from viddiff.pose.sync import SyncError, motion_offset
from viddiff.pose.track import FoundPeople, PoseTrack, find_people, track_of
from viddiff.pose.triangulation import triangulate

if TYPE_CHECKING:
    from viddiff.cache import Cache
    from viddiff.pose.estimators import PoseEstimator
    from viddiff.video import VideoFrames

MATCH_ERROR = 0.02
"""Two views' people whose keypoints reproject a median of more than this share of the main picture's long side
away are not the same person (Pose2Sim two-person test clips, 960 px: the same person 3–9 px, another 88–208 px)."""
MIN_CONFIDENCE = 0.3
"""Keypoints under this confidence do not enter a pairing."""
CANDIDATES = 4
"""The people per view considered (the best by ``auto``'s score)."""
MIN_SHARE = 0.25
"""A candidate is seen in at least this share of the frames of the view's most-seen candidate."""
SAMPLES = 30
"""Frames (evenly spread) a pairing is triangulated over: enough for a median, and fast."""
MIN_POINTS = 20
"""Keypoints triangulated from both views that a pairing needs for its error to say anything."""
MIN_AIM_ANGLE = 10.0
"""Cameras whose optical axes all lie within this many degrees of each other aim at no one point."""


@dataclass(frozen=True)
class Candidate:
    """One person of one view, followed over time."""

    identity: int
    track: PoseTrack


@dataclass(frozen=True)
class Pairing:
    """Two views' people triangulated together."""

    error_px: float
    """The median reprojection error (main-view pixels); infinite where they share too few keypoints."""
    points: np.ndarray
    """(S, J, 3) their body in 3D at the sampled frames; NaN where not triangulated."""


def choose_jointly(
    views: Sequence["VideoFrames"], cameras: Sequence[Camera], estimator: "PoseEstimator",
    offsets: Optional[Sequence[float]], cache: Optional["Cache"] = None, *, max_offset_s: Optional[float] = None,
) -> list[PoseTrack]:
    """Each view's track of the one person measured in all of them (the module docstring), the extra views
    ``offsets`` seconds later than the main one; ``None``: each pair of people's own offset, from their motion
    (:func:`viddiff.pose.sync.motion_offset`; a pair it cannot align is no pair)."""
    found = [find_people(view, estimator, cache) for view in views]
    candidates = [_candidates(view, estimator, f) for view, f in zip(views, found)]
    own = [c[0].track if c else _nobody(view, estimator, f) for c, view, f in zip(candidates, views, found)]
    fitted = [camera.fitted_to(f.width, f.height) for camera, f in zip(cameras, found)]
    aim = aim_point(fitted)
    if aim is None or not all(candidates):
        return own
    limit = MATCH_ERROR * max(found[0].width, found[0].height)
    pairings = []
    for main in candidates[0]:
        members, found_pairs = [main], []
        for v in range(1, len(views)):
            tried = []
            for extra in candidates[v]:
                offset = float(offsets[v - 1]) if offsets is not None else _motion(main, extra, fitted[0], fitted[v], v, max_offset_s)
                if offset is not None:
                    tried.append((pair(main.track, extra.track, fitted[0], fitted[v], offset), extra))
            tried = [(p, extra) for p, extra in tried if p.error_px <= limit]
            if not tried:
                break
            best, extra = min(tried, key=lambda t: t[0].error_px)
            members.append(extra)
            found_pairs.append(best)
        else:
            pairings.append((members, found_pairs, float(np.mean([off_aim(p.points, aim) for p in found_pairs]))))
    if not pairings:
        return own
    members, found_pairs, _ = min(pairings, key=lambda p: p[2])
    mine = [c[0].identity for c in candidates]
    if all(c.identity == k for c, k in zip(members, mine)):
        return [c.track for c in members]
    for c, k, camera, track in zip(members, mine, fitted, own):
        if c.identity != k and ray_off_aim(track, camera, aim) <= ray_off_aim(c.track, camera, aim):
            return own
    why = (f"; chosen across the {len(views)} calibrated views: the person whose keypoints triangulate with the other "
           f"views' (median reprojection error {max(p.error_px for p in found_pairs):.0f} px) nearest where the "
           "cameras aim")
    return [_noted(c.track, why + ("" if c.identity == k else " (this view alone would have chosen another person)"))
            for c, k in zip(members, mine)]


def pair(main: PoseTrack, extra: PoseTrack, main_camera: Camera, extra_camera: Camera, offset_s: float) -> Pairing:
    """``main``'s and ``extra``'s keypoints (``extra`` ``offset_s`` later) triangulated together over up to
    :data:`SAMPLES` frames; each keypoint as ``extra`` labels it or with left and right swapped, whichever reprojects
    better (one view's estimator may swap sides)."""
    rows = np.unique(np.linspace(0, len(main.times_s) - 1, min(SAMPLES, len(main.times_s))).round().astype(int))
    xy, confidence = resample_track(extra, main.times_s[rows] + offset_s)
    tries = []
    for labels in (slice(None), list(SWAP)):
        pixels = np.stack([main.xy[rows], xy[:, labels]])
        weights = np.stack([main.confidence[rows], confidence[:, labels]])
        both = (weights >= MIN_CONFIDENCE).all(axis=0)
        tries.append(triangulate([main_camera, extra_camera], pixels, np.where(both, weights, 0.0),
                                 min_confidence=MIN_CONFIDENCE, min_views=2, max_error_px=np.inf))
    straight, swapped = tries
    use_swapped = np.nan_to_num(swapped.error_px, nan=np.inf) < np.nan_to_num(straight.error_px, nan=np.inf)
    errors = np.where(use_swapped, swapped.error_px, straight.error_px)
    points = np.where(use_swapped[..., None], swapped.points, straight.points)
    known = errors[np.isfinite(errors)]
    return Pairing(error_px=float(np.median(known)) if len(known) >= MIN_POINTS else np.inf, points=points)


def aim_point(cameras: Sequence[Camera]) -> Optional[np.ndarray]:
    """(3,) the point nearest every camera's optical axis (least squares): where the cameras look; ``None`` where
    their axes are near parallel (:data:`MIN_AIM_ANGLE`)."""
    axes = [camera.rotation[2] / np.linalg.norm(camera.rotation[2]) for camera in cameras]
    spread = max(float(np.degrees(np.arccos(np.clip(a @ b, -1, 1)))) for i, a in enumerate(axes) for b in axes[i + 1:])
    if spread < MIN_AIM_ANGLE:
        return None
    a, b = np.zeros((3, 3)), np.zeros(3)
    for camera, axis in zip(cameras, axes):
        across = np.eye(3) - np.outer(axis, axis)
        a += across
        b += across @ camera.centre
    return np.linalg.solve(a, b)


def off_aim(points: np.ndarray, aim: np.ndarray) -> float:
    """The median distance (metres) of a body's hips' centre ((S, J, 3) ``points``) from ``aim``."""
    hips = (points[:, INDEX["left_hip"]] + points[:, INDEX["right_hip"]]) / 2
    d = np.linalg.norm(hips - aim, axis=-1)
    d = d[np.isfinite(d)]
    return float(np.median(d)) if len(d) else np.inf


def ray_off_aim(track: PoseTrack, camera: Camera, aim: np.ndarray) -> float:
    """The median distance (metres) from ``aim`` to the ray through the hips' centre of ``track``'s person, over
    the frames they are found in: how near the aim one view alone places them (infinite where never found)."""
    hips = (track.xy[:, INDEX["left_hip"]] + track.xy[:, INDEX["right_hip"]]) / 2
    hips = hips[np.isfinite(hips).all(axis=1)]
    if not len(hips):
        return np.inf
    rays = np.column_stack([camera.normalised(hips), np.ones(len(hips))]) @ camera.rotation  # world directions
    rays /= np.linalg.norm(rays, axis=1, keepdims=True)
    return float(np.median(np.linalg.norm(np.cross(aim - camera.centre, rays), axis=1)))


def _candidates(view: "VideoFrames", estimator: "PoseEstimator", found: FoundPeople) -> list[Candidate]:
    """The view's people worth pairing, ``auto``'s own choice first (empty where nobody was found)."""
    linked = link_identities(found.people, np.asarray(view.times_s, dtype=np.float64))  # once for every candidate

    def subject(identity: Optional[int] = None) -> Subject:
        return choose_subject(found.people, view.times_s, found.width, found.height, "auto", counted=found.counted,
                              identity=identity, linked=linked)

    auto = subject()
    ranked = sorted(auto.scores, key=lambda k: auto.scores[k], reverse=True)[:CANDIDATES]
    out = [Candidate(identity=k, track=track_of(view, estimator, found, auto if i == 0 else subject(k)))
           for i, k in enumerate(ranked)]
    seen = [int((c.track.confidence > 0).any(axis=1).sum()) for c in out]
    return [c for i, (c, n) in enumerate(zip(out, seen)) if i == 0 or n >= MIN_SHARE * max(seen)]


def _motion(main: Candidate, extra: Candidate, main_camera: Camera, extra_camera: Camera, view: int,
            max_offset_s: Optional[float]) -> Optional[float]:
    """Two people's offset from their motion, or ``None`` where it cannot be told."""
    try:
        return motion_offset(main.track, extra.track, main_camera, extra_camera, view=view, max_offset_s=max_offset_s).offset_s
    except SyncError:
        return None


def _nobody(view: "VideoFrames", estimator: "PoseEstimator", found: FoundPeople) -> PoseTrack:
    """The view's track by ``auto`` where it found nobody to choose."""
    return track_of(view, estimator, found, choose_subject(found.people, view.times_s, found.width, found.height,
                                                           "auto", counted=found.counted))


def _noted(track: PoseTrack, why: str) -> PoseTrack:
    return replace(track, subject=track.subject.model_copy(update={"rule": track.subject.rule + why}))


__all__ = ["CANDIDATES", "MATCH_ERROR", "Candidate", "Pairing", "aim_point", "choose_jointly", "off_aim", "pair",
           "ray_off_aim"]
