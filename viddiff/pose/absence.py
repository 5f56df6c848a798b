"""Why the measured person has no keypoints in a frame: one reason per such frame, so that a summary can say
"not in 37: 20 before they were first found, 17 after they were last found" rather than a bare count.

The reasons separate what the tracker could change from what it could not. On the Sports2D demo the person
walking past is in view for about 70% of the clip: the frames before they walk in and after they walk out are
no tracking failure. Pure numpy, from the people found and the chosen :class:`~viddiff.pose.people.Subject`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from viddiff.pose.people import MAX_SIZE_RATIO, MAX_SPEED, MAX_STEP, Person, Subject, centre, size

REASONS: dict[str, str] = {
    "before": "before they were first found",
    "after": "after they were last found",
    "nobody": "with nobody found",
    "unclear": "with someone who could be them but could not be told apart from another person",
    "size": "with someone in their place at a size they cannot be (part of a body, or a person passing)",
    "elsewhere": "with only other people found, away from them",
}
"""Each reason's key (as :attr:`viddiff.schema.SubjectInfo.dropped` counts them) and its words, which follow a
count: "3 with nobody found"."""


def absence_reasons(subject: Subject, people: Sequence[Sequence[Person]], times_s: np.ndarray) -> list[str]:
    """(T,) the key of :data:`REASONS` for each frame without the subject; ``""`` where they were measured."""
    member = subject.member
    found = np.flatnonzero(member >= 0)
    reasons = [""] * len(member)
    for t in np.flatnonzero(member < 0):
        if not len(people[t]):
            reasons[t] = "before" if len(found) and t < found[0] else "after" if len(found) and t > found[-1] else "nobody"
        elif not len(found) or t < found[0]:
            reasons[t] = "before"
        elif t > found[-1]:
            reasons[t] = "after"
        elif subject.unclear[t]:
            reasons[t] = "unclear"
        else:
            reasons[t] = _nearby(t, found, member, people, times_s)
    return reasons


def absence_counts(reasons: Sequence[str]) -> dict[str, int]:
    """How many frames each reason holds, in :data:`REASONS`' order (reasons with no frame left out)."""
    return {key: n for key in REASONS if (n := sum(r == key for r in reasons))}


def _nearby(t: int, found: np.ndarray, member: np.ndarray, people, times_s: np.ndarray) -> str:
    """Whether someone in frame ``t`` stands where the subject could be (the linking limits from the nearest frames
    that have them, before and after) and is of a size they could be."""
    before, after = found[found < t][-1], found[found > t][0]
    in_place = False
    for other in people[t]:
        for ref in (before, after):
            them = people[ref][member[ref]]
            reach = MAX_STEP + MAX_SPEED * abs(float(times_s[t] - times_s[ref]))
            if float(np.linalg.norm(centre(other) - centre(them))) / max(size(them), 1e-9) > reach:
                continue
            in_place = True
            if max(size(other), size(them)) / max(min(size(other), size(them)), 1e-9) <= MAX_SIZE_RATIO:
                return "unclear"
    return "size" if in_place else "elsewhere"


__all__ = ["REASONS", "absence_counts", "absence_reasons"]
