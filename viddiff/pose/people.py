"""Who is measured: the people found in each frame, linked into identities over time, and the subject chosen.

An estimator may find several people per frame (:class:`Person`). They are linked from frame to frame into
identities by position and body size (:func:`link_identities`): a person may move only so far between two
samples (``MAX_STEP`` torso lengths plus ``MAX_SPEED`` per second), and keeps their size within ``MAX_SIZE_RATIO``.
Among those allowed, the better fit is the person nearer where the identity was over the last half second, or
where its motion leads, in torso lengths, and nearer its usual size. Where two people fit one identity about equally
well, neither is taken, and a second detection of someone already linked in the frame (one that fits them better than
anyone else, or fits only people already linked and lies on one of them) goes to nobody: the frame is an identity
gap. One identity is then chosen as the subject by a documented rule (:data:`RULES`, ``pose.subject``), and identities that
continue it after a short loss are joined to it only where nobody else could be the one. A frame where only
someone else is found is an identity gap, never the subject's body: a single-person estimator jumping to a
bystander shows up as an identity break, not as a sudden change of pose.

Bone lengths are not used: BlazePose's 3D bone lengths of the two people of the Pose2Sim two-person take differ
by less (≤ 8%) than one person's own frame-to-frame spread (5–30%), so they cannot tell people apart.

Pure numpy: no estimator, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from viddiff.pose.skeleton import INDEX
from viddiff.schema import SubjectInfo

MAX_STEP = 0.6
"""Torso lengths anyone may move between two consecutive samples, however close in time (keypoint jitter)."""
MAX_SPEED = 6.0
"""Torso lengths per second anyone may move on top of ``MAX_STEP`` (a sprint is about 8 m/s ≈ 15 torso/s, but
a camera following fast movement keeps the person near the same place in the picture)."""
MAX_SIZE_RATIO = 1.5
"""A person's torso may grow or shrink by at most this factor from one sample to the next."""
AMBIGUITY = 1.5
"""Two candidates whose link costs are within this factor of each other cannot be told apart. A cost is the
distance, in torso lengths, from where the identity is expected (:meth:`_Identity.expected`), plus the log of the
size ratio. An identity lost for a while is not cheaper for it: the old cost, distance over the distance allowed,
made an identity lost half a second ago a rival of one seen in the previous frame (6 frames of the Sports2D
demo's walker were gaps)."""
RECENT = 3
"""Sightings an identity's usual size is taken from (the median: one garbled detection is outvoted)."""
VELOCITY_WINDOW_S = 0.5
"""An identity's expected place and velocity come from its sightings over this long up to its last one (medians).
From its last 3 sightings, the velocity followed a detection that slid in a few frames from the athlete onto the
bystander behind her (Pose2Sim's two-person take, cam03, frames 78–88), and her series measured the bystander's body.
Velocity needs 3 sightings within this long of the frame linked."""
MAX_LOSS_S = 1.0
"""An identity not seen for longer than this ends; whoever appears later is a new identity (joined to the
subject only where nobody else fits, :func:`choose_subject`)."""
KEY_CONFIDENCE = 0.3
"""Keypoints below this confidence do not place or size a person."""
SAME_PERSON = 0.35
"""Two detections whose torso centres are closer than this many torso lengths are one person found twice
(overlapping crops, or the second look)."""
RULES: dict[str, str] = {
    "auto": "the person largest, nearest the centre and moving most over the frames they are seen (size × "
            "centrality, summed, × the square root of their range of movement)",
    "largest": "the largest person over the frames they are seen (torso length, summed)",
    "centre": "the person nearest the centre of the picture over the frames they are seen (centrality, summed)",
    "left": "the leftmost person in the picture (median position, among those seen in a quarter of the frames)",
    "right": "the rightmost person in the picture (median position, among those seen in a quarter of the frames)",
}
"""``pose.subject`` values and the rule each stands for, in the words the evidence records."""
SHADOWED = 0.5
"""An identity whose body box and another person's overlap by at least this share of the smaller box, in every frame
it was seen, is never joined to the subject after a loss (:func:`_continuations`)."""
MIN_ACTIVITY = 0.05
"""Range of movement (torso lengths) below which everyone counts as this still: keypoint jitter is not motion."""
CLOSE_CHOICE = 0.8
"""A runner-up scoring at least this share of the chosen person's score makes the choice close (a warning)."""
_TORSO = [INDEX[n] for n in ("left_shoulder", "right_shoulder", "left_hip", "right_hip")]


@dataclass(frozen=True)
class Person:
    """One person found in one frame, in the joints of :data:`viddiff.pose.skeleton.JOINTS`."""

    xy: np.ndarray
    """(J, 2) pixels of the full frame."""
    confidence: np.ndarray
    """(J,) in [0, 1]."""
    world: Optional[np.ndarray] = None
    """(J, 3) the estimator's 3D world landmarks (metres, origin between the hips), where it gives them."""

    def shifted(self, dx: float, dy: float) -> "Person":
        """The same person in a frame whose origin is ``(dx, dy)`` pixels up-left of this one's (crop → frame)."""
        return Person(xy=self.xy + (dx, dy), confidence=self.confidence, world=self.world)


def _sure(person: Person) -> np.ndarray:
    sure = (person.confidence >= KEY_CONFIDENCE) & np.isfinite(person.xy).all(axis=1)
    return sure if sure.sum() >= 3 else np.isfinite(person.xy).all(axis=1)


def body_box(person: Person) -> tuple[float, float, float, float]:
    """(left, top, right, bottom) pixels around the person's sure keypoints (all of them if few are sure)."""
    points = person.xy[_sure(person)]
    if not len(points):
        return (0.0, 0.0, 0.0, 0.0)
    (left, top), (right, bottom) = points.min(axis=0), points.max(axis=0)
    return float(left), float(top), float(right), float(bottom)


def centre(person: Person) -> np.ndarray:
    """(2,) the torso's centre (the sure shoulders and hips), else the centre of the sure keypoints."""
    sure = _sure(person)
    torso = [j for j in _TORSO if sure[j]]
    points = person.xy[torso] if len(torso) >= 2 else person.xy[sure]
    return points.mean(axis=0) if len(points) else np.full(2, np.nan)


def size(person: Person) -> float:
    """Torso length in pixels (shoulder centre to hip centre), or a third of the box's long side without one."""
    xy = person.xy
    torso = np.linalg.norm((xy[INDEX["left_shoulder"]] + xy[INDEX["right_shoulder"]]) / 2 - (xy[INDEX["left_hip"]] + xy[INDEX["right_hip"]]) / 2)
    if np.isfinite(torso) and torso > 0 and _sure(person)[_TORSO].sum() >= 3:
        return float(torso)
    left, top, right, bottom = body_box(person)
    return max(right - left, bottom - top) / 3.0


def largest_first(people: Sequence[Person]) -> list[Person]:
    return sorted(people, key=size, reverse=True)


def without_duplicates(people: Sequence[Person]) -> list[Person]:
    """One detection per person: of two whose centres nearly coincide, the more confident is kept."""
    kept: list[Person] = []
    for person in sorted(people, key=lambda p: float(np.mean(p.confidence)), reverse=True):
        c, s = centre(person), size(person)
        if not all(np.isfinite(c)) or s <= 0:
            continue
        if all(np.linalg.norm(c - centre(k)) > SAME_PERSON * max(s, size(k)) for k in kept):
            kept.append(person)
    return kept


@dataclass
class _Identity:
    frames: list[int] = field(default_factory=list)
    members: list[int] = field(default_factory=list)
    """Index of this identity's person in each of its frames."""
    last_centre: np.ndarray = field(default_factory=lambda: np.full(2, np.nan))
    last_size: float = 0.0
    last_time: float = 0.0
    sizes: list[float] = field(default_factory=list)
    """Torso lengths of its last ``RECENT`` sightings."""
    window: list[tuple[float, np.ndarray]] = field(default_factory=list)
    """(time, centre) of its sightings over the ``VELOCITY_WINDOW_S`` up to its last one."""

    def expected(self, now: float) -> tuple[tuple[np.ndarray, ...], float]:
        """Where this identity may be at ``now``, and its usual size: the median of its sightings over the last half
        second, as they were and moved on at their median velocity (a walker is where their motion leads; someone
        bouncing in place, whose velocity turns, is where they were). Medians over the half second: one garbled
        detection moves neither, nor does a detection that slides onto someone else for a few frames."""
        times = np.array([t for t, _ in self.window])
        centres = np.array([c for _, c in self.window])
        usual = float(np.median(self.sizes))
        places = (np.median(centres, axis=0),)
        if len(times) >= 3 and now - times[-3] <= VELOCITY_WINDOW_S:
            velocity = np.median(np.diff(centres, axis=0) / np.diff(times)[:, None], axis=0)
            places += (np.median(centres + velocity * (now - times)[:, None], axis=0),)
        return places, usual

    def seen(self, t: int, member: int, centre_: np.ndarray, size_: float, now: float) -> None:
        if self.window and now - self.window[-1][0] > VELOCITY_WINDOW_S:
            self.sizes.clear()  # after a loss, as after a loss its place and motion (the window) start afresh
        self.sizes = [*self.sizes[-(RECENT - 1):], size_]
        self.window = [(seen, c) for seen, c in self.window if now - seen <= VELOCITY_WINDOW_S] + [(now, centre_)]
        self.frames.append(t)
        self.members.append(member)
        self.last_centre, self.last_size, self.last_time = centre_, size_, now


@dataclass(frozen=True)
class Identities:
    """People linked over time: ``label[t][i]`` is the identity of person ``i`` of frame ``t``."""

    labels: list[list[int]]
    count: int
    ambiguous: np.ndarray
    """(T,) frames in which some person could not be told apart from another (left unlabelled, -1)."""


def link_identities(people: Sequence[Sequence[Person]], times_s: np.ndarray) -> Identities:
    """Frame-by-frame linking of people to identities (see the module docstring)."""
    tracks: list[_Identity] = []
    labels: list[list[int]] = []
    ambiguous = np.zeros(len(people), dtype=bool)
    for t, found in enumerate(people):
        now = float(times_s[t])
        active = [k for k, tr in enumerate(tracks) if now - tr.last_time <= MAX_LOSS_S]
        centres = [centre(p) for p in found]
        sizes = [size(p) for p in found]
        cost = np.full((len(active), len(found)), np.inf)
        for a, k in enumerate(active):
            tr = tracks[k]
            allowed = MAX_STEP + MAX_SPEED * (now - tr.last_time)
            for i in range(len(found)):
                moved = float(np.linalg.norm(centres[i] - tr.last_centre)) / tr.last_size
                ratio = max(sizes[i], tr.last_size) / max(min(sizes[i], tr.last_size), 1e-9)
                if moved <= allowed and ratio <= MAX_SIZE_RATIO:
                    places, usual = tr.expected(now)
                    off = min(float(np.linalg.norm(centres[i] - place)) for place in places) / usual
                    cost[a, i] = off + abs(np.log(sizes[i] / usual))
        label = [-1] * len(found)
        taken_tracks: set[int] = set()
        taken_by: list[Optional[int]] = [None] * len(active)
        for a, i in sorted(zip(*np.nonzero(np.isfinite(cost))), key=lambda ai: cost[ai]):
            if a in taken_tracks or label[i] != -1:
                continue
            if any(cost[b, i] < cost[a, i] for b in taken_tracks):
                ambiguous[t] = True  # fits someone already found here better: them again, not one lost before
                label[i] = -2
                continue
            close = AMBIGUITY * cost[a, i] + 0.05
            others = [j for j in range(len(found)) if j != i and label[j] == -1 and cost[a, j] <= close]
            if others or any(cost[b, i] <= close for b in range(len(active)) if b != a and b not in taken_tracks):
                ambiguous[t] = True
                taken_tracks.add(a)
                for j in (i, *others):  # seen, but whose each is cannot be said: none goes to another identity
                    label[j] = -2
                continue
            taken_tracks.add(a)
            taken_by[a] = i
            label[i] = active[a]
        for i in range(len(found)):
            twin = [j for a, j in enumerate(taken_by) if j is not None and np.isfinite(cost[a, i])]
            if label[i] == -1 and any(_overlap(body_box(found[i]), body_box(found[j])) >= SHADOWED for j in twin):
                ambiguous[t] = True  # fits only people already found here and lies on one: them again, not someone new
                label[i] = -2
            if label[i] == -1 and np.isfinite(centres[i]).all() and sizes[i] > 0:
                tracks.append(_Identity())
                label[i] = len(tracks) - 1
            if label[i] >= 0:
                tracks[label[i]].seen(t, i, centres[i], sizes[i], now)
        labels.append([max(x, -1) for x in label])
    return Identities(labels=labels, count=len(tracks), ambiguous=ambiguous)


@dataclass(frozen=True)
class Subject:
    """The measured person in each frame, and what the evidence says about who it is."""

    member: np.ndarray
    """(T,) index of the subject among the frame's people (-1: not in this frame)."""
    identity_gap: np.ndarray
    """(T,) frames where someone was found but could not be shown to be the subject."""
    people: np.ndarray
    """(T,) people found per frame."""
    info: SubjectInfo
    unclear: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    """(T,) frames in which someone found could not be told apart from another person (left to nobody)."""
    scores: dict[int, float] = field(default_factory=dict)
    """Each candidate identity's score by the rule (higher: chosen first), for choosing across views
    (:mod:`viddiff.pose.joint_subject`)."""


def choose_subject(
    people: Sequence[Sequence[Person]], times_s: np.ndarray, width: int, height: int, rule: str = "auto",
    *, counted: bool = True, identity: Optional[int] = None, linked: Optional[Identities] = None,
) -> Subject:
    """The subject by ``rule`` (:data:`RULES`), followed over time. ``counted=False``: the estimator looks for one
    person only, so how many people were in view is unknown (the rule then says so). ``identity``: measure this
    identity (a key of :attr:`Subject.scores`) instead of the rule's choice (a choice made across views).
    ``linked``: :func:`link_identities` of these ``people`` when already done (one linking for several choices)."""
    if rule not in RULES:
        raise ValueError(f"pose.subject={rule!r}: expected one of {', '.join(RULES)}")
    times_s = np.asarray(times_s, dtype=np.float64)
    n = len(people)
    counts = np.array([len(found) for found in people], dtype=np.int64)
    ids = linked if linked is not None else link_identities(people, times_s)
    frames_of: dict[int, list[tuple[int, int]]] = {}
    for t, labels in enumerate(ids.labels):
        for i, k in enumerate(labels):
            if k >= 0:
                frames_of.setdefault(k, []).append((t, i))
    member = np.full(n, -1, dtype=np.int64)
    chosen, runner_up, scores = _best(frames_of, people, width, height, rule)
    if identity is not None:
        chosen = identity if identity in frames_of else None
    if chosen is not None:
        for k in _continuations(chosen, frames_of, people, times_s):
            for t, i in frames_of[k]:
                member[t] = i
    identity_gap = (member < 0) & (counts > 0)
    others = np.maximum(counts - (member >= 0), 0)
    rows = np.flatnonzero(member >= 0)
    position = None
    if len(rows):
        hips = np.array([(people[t][member[t]].xy[INDEX["left_hip"]] + people[t][member[t]].xy[INDEX["right_hip"]]) / 2 for t in rows])
        if np.isfinite(hips).all(axis=1).any():
            x, y = np.nanmedian(hips, axis=0)
            position = (round(float(np.clip(x / width, 0, 1)), 4), round(float(np.clip(y / height, 0, 1)), 4))
    words = RULES[rule] if counted else "the one person the estimator follows (it does not look for others)"
    info = SubjectInfo(
        people_max=int(counts.max()) if n else 0, frames_with_others=int((others > 0).sum()), rule=words,
        position=position, identity_gaps=int(identity_gap.sum()), runner_up=runner_up if counted else None,
    )
    return Subject(member=member, identity_gap=identity_gap, people=counts, info=info, unclear=ids.ambiguous, scores=scores)


def activity(persons: Sequence[Person]) -> float:
    """How much a person's body moves: the spread over time of each sure keypoint's position relative to the
    torso centre, in torso lengths (the upper quartile over the joints). Whoever performs the action moves;
    a bystander stands: on the Pose2Sim two-person take the athlete's is 0.42–0.71, the bystander's 0.09–0.44,
    larger in each of the four cameras."""
    if len(persons) < 3:
        return MIN_ACTIVITY
    scale = float(np.median([size(p) for p in persons]))
    if not scale > 0:
        return MIN_ACTIVITY
    relative = np.array([
        np.where((p.confidence >= KEY_CONFIDENCE)[:, None], p.xy - centre(p), np.nan) for p in persons
    ]) / scale
    seen = np.isfinite(relative).all(axis=2).sum(axis=0) >= 3
    if not seen.any():
        return MIN_ACTIVITY
    spread = np.linalg.norm(np.nanstd(relative[:, seen], axis=0), axis=-1)
    return max(MIN_ACTIVITY, float(np.percentile(spread, 75)))


def _best(
    frames_of: dict[int, list[tuple[int, int]]], people, width: int, height: int, rule: str
) -> tuple[Optional[int], Optional[float], dict[int, float]]:
    """The chosen identity, the runner-up's score as a share of its score (``None``: nobody else, or a
    positional rule), and every candidate's score."""
    if not frames_of:
        return None, None, {}
    def centrality(p: Person) -> float:
        """1 at the centre, 0 in a corner: the offset as fractions of the half width and half height (a person at
        the side of a portrait frame is off-centre, however few pixels that is)."""
        offset = (centre(p) - (width / 2, height / 2)) / (width / 2, height / 2)
        return max(0.0, 1.0 - float(np.linalg.norm(offset)) / np.sqrt(2))

    def score(k: int) -> float:
        persons = [people[t][i] for t, i in frames_of[k]]
        if rule in ("left", "right"):
            x = float(np.median([centre(p)[0] for p in persons]))
            return -x if rule == "left" else x
        total = float(sum(
            (size(p) / height if rule != "centre" else 1.0) * (centrality(p) if rule != "largest" else 1.0) for p in persons
        ))
        return total * np.sqrt(activity(persons)) if rule == "auto" else total

    candidates = list(frames_of)
    if rule in ("left", "right"):
        longest = max(len(v) for v in frames_of.values())
        candidates = [k for k in candidates if len(frames_of[k]) >= longest / 4]
    scores = sorted(((score(k), k) for k in candidates), reverse=True)
    best_score, best = scores[0]
    every = {k: s for s, k in scores}
    if rule in ("left", "right") or len(scores) < 2 or best_score <= 0:
        return best, None, every
    return best, round(scores[1][0] / best_score, 3), every


def describe_subject(info: SubjectInfo) -> str:
    """Who was measured, for people: "the person on the left, 1 of 3 in view" (with "a close choice" when
    another person scored nearly as high), "the only person in view", or nobody."""
    if info.people_max == 0:
        return "nobody was found"
    if info.rule.startswith("the one person the estimator follows"):
        return "the one person the estimator follows (it does not look for others)"
    if info.people_max == 1:
        return "the only person in view"
    where = "" if info.position is None else " " + _place(info.position[0])
    words = f"the person{where}, 1 of {info.people_max} in view"
    if info.runner_up is not None and info.runner_up >= CLOSE_CHOICE:
        words += (f" (a close choice: another person scored {info.runner_up:.0%} as high; pose.subject: left, right, "
                  "largest or centre chooses by position or size)")
    return words


def _place(x: float) -> str:
    """Where in the picture's width, in thirds."""
    return "on the left" if x < 1 / 3 else "on the right" if x > 2 / 3 else "in the middle"


def _continuations(chosen: int, frames_of: dict[int, list[tuple[int, int]]], people, times_s: np.ndarray) -> list[int]:
    """The chosen identity and those that continue it after a loss, where exactly one identity could. A second
    detection of someone else (:func:`_shadowed`) continues nobody: on the Sports2D demo at 884x498, three garbled
    detections of the man on the roof, 1.1 s before the walker entered at the far side, fitted the distance
    allowed and were joined to her."""
    joined = [chosen]
    while True:
        spans = sorted(t for k in joined for t, _ in frames_of[k])
        first, last = spans[0], spans[-1]
        options = []
        for k, seen in frames_of.items():
            if k in joined:
                continue
            start, end = seen[0][0], seen[-1][0]
            if last < start <= last + 1 or first - 1 <= end < first:
                continue  # found in the very next frame yet not linked: a jump, not a loss
            later = start > last
            if (not later and end >= first) or _shadowed(seen, people):
                continue
            ref, there, member = (last, start, seen[0][1]) if later else (first, end, seen[-1][1])
            them = people[ref][_member_at(frames_of, joined, ref)]
            if _could_be(them, people[there][member], abs(times_s[there] - times_s[ref])):
                options.append((k, later))
        after = [k for k, later in options if later]
        before = [k for k, later in options if not later]
        added = False
        for group in (after, before):
            if len(group) == 1:
                joined.append(group[0])
                added = True
        if not added:
            return joined


def _shadowed(sightings: list[tuple[int, int]], people) -> bool:
    """Whether in every frame an identity was seen, its body box and someone else's lie mostly one inside the other:
    a second, garbled detection of that person (or someone hidden behind them), which cannot be shown to continue
    anyone."""
    def inside(t: int, i: int) -> bool:
        box = body_box(people[t][i])
        return any(_overlap(box, body_box(other)) >= SHADOWED for j, other in enumerate(people[t]) if j != i)

    return all(inside(t, i) for t, i in sightings)


def _overlap(box: tuple[float, float, float, float], other: tuple[float, float, float, float]) -> float:
    """The share of the smaller of two body boxes that lies inside the other."""
    def area(b: tuple[float, float, float, float]) -> float:
        return max(b[2] - b[0], 1e-9) * max(b[3] - b[1], 1e-9)

    common = max(0.0, min(box[2], other[2]) - max(box[0], other[0])) * max(0.0, min(box[3], other[3]) - max(box[1], other[1]))
    return common / min(area(box), area(other))


def _could_be(them: Person, other: Person, dt: float) -> bool:
    """Whether ``other``, ``dt`` seconds from a sighting of ``them``, is near enough and of a size to be them."""
    moved = float(np.linalg.norm(centre(them) - centre(other))) / max(size(them), 1e-9)
    ratio = max(size(them), size(other)) / max(min(size(them), size(other)), 1e-9)
    return moved <= MAX_STEP + MAX_SPEED * dt and ratio <= MAX_SIZE_RATIO


def _member_at(frames_of: dict[int, list[tuple[int, int]]], joined: list[int], t: int) -> int:
    for k in joined:
        for frame, i in frames_of[k]:
            if frame == t:
                return i
    raise KeyError(t)


__all__ = [
    "Identities", "Person", "RULES", "Subject", "activity", "body_box", "centre", "choose_subject", "describe_subject",
    "largest_first",
    "link_identities", "size", "without_duplicates",
]
