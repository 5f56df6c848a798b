"""Linking people over time, and why the measured person is missing from a frame: on real keypoints.

The people come from BlazePose on two real clips in tests/data (the Sports2D demo, a man on a roof with a walker
passing below; Pose2Sim's two-person take, camera 1). Where a test needs a situation these seconds do not hold
(the second look finding someone twice, the athlete hidden behind the bystander), it copies or removes real
detections, as :func:`test_people.test_an_identity_switch_is_a_gap_never_the_same_body` does.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from viddiff.pose.absence import absence_counts, absence_reasons
from viddiff.pose.blazepose import BlazePose
from viddiff.pose.people import Person, centre, choose_subject, size
from viddiff.video import VideoFrames, read_video

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def demo() -> VideoFrames:
    """2 s of the Sports2D demo at 884×498, 15 fps: the man on the roof (left of centre) in 28 of 30 frames, the
    walker (right) from frame 12."""
    return read_video(DATA / "sports2d" / "s2d_demo_884x498.mp4")


@pytest.fixture(scope="module")
def demo_people(blazepose: BlazePose, demo: VideoFrames) -> list[list[Person]]:
    return blazepose.estimate_people(list(demo.frames), list(demo.times_s))


def _him(found) -> Person | None:
    """The man on the roof: the person in the left half."""
    return next((p for p in found if centre(p)[0] < 442), None)


def _copy(person: Person, shift: tuple[float, float], scale: float) -> Person:
    """The same keypoints scaled about the torso centre and moved by ``shift`` torso lengths."""
    c, s = centre(person), size(person)
    return Person(xy=(person.xy - c) * scale + c + np.array(shift) * s, confidence=person.confidence)


def _subject(people, video: VideoFrames):
    return choose_subject(people, np.asarray(video.times_s), video.frames.shape[2], video.frames.shape[1])


def test_the_man_on_the_roof_is_measured_wherever_he_was_found(demo_people, demo: VideoFrames) -> None:
    subject = _subject(demo_people, demo)
    seen = [t for t, found in enumerate(demo_people) if _him(found) is not None]
    assert len(seen) == 28
    assert all(subject.member[t] >= 0 and centre(demo_people[t][subject.member[t]])[0] < 442 for t in seen)


def test_a_second_detection_lost_at_once_does_not_make_the_person_it_copies_a_gap(demo_people, demo: VideoFrames) -> None:
    """The second look sometimes finds a person twice. On the Sports2D demo at 960×540 a copy of the man, 0.45 torso
    lengths off and 1.2× his size, started an identity that was lost at once. The old link cost (distance over the
    distance allowed) made that identity cheaper with every frame it stayed lost, until it rivalled the man, seen
    in every frame, and 10 of his frames became gaps. An identity lost for a while is no cheaper now."""
    people = [list(found) for found in demo_people]
    people[3].append(_copy(_him(people[3]), (-0.39, 0.23), 1.23))
    subject = _subject(people, demo)
    seen = [t for t, found in enumerate(people) if _him(found) is not None]
    missing = [t for t in seen if subject.member[t] < 0 or centre(people[t][subject.member[t]])[0] >= 442]
    assert missing == [], missing


def test_someone_found_twice_is_never_handed_to_the_person_they_hide(blazepose: BlazePose) -> None:
    """Pose2Sim's two-person take, camera 1: the athlete (middle) steps behind the bystander (right), and the
    estimator finds the bystander twice, a few pixels apart (frame 87 of the full take). Neither of the bystander's
    two detections could be told from the other, and the old linker then gave one of them to the athlete's identity,
    lost a moment before: the athlete's statistics got the bystander's body."""
    video = read_video(DATA / "pose2sim" / "p2s_two_people_cam01.mp4")
    found = blazepose.estimate_people(list(video.frames), list(video.times_s))
    width = video.frames.shape[2]
    athlete = [[p for p in people if centre(p)[0] < 0.55 * width] for people in found]
    bystander = [[p for p in people if centre(p)[0] >= 0.55 * width] for people in found]
    assert all(len(a) == 1 for a in athlete) and all(len(b) == 1 for b in bystander)
    hidden = range(20, 30)  # the athlete behind the bystander; lost for 10 frames (1/3 s) at the last
    people = [bystander[t] if t in hidden else athlete[t] + bystander[t] for t in range(len(found))]
    people[29] = people[29] + [_copy(people[29][0], (-0.08, 0.0), 1.0)]
    subject = choose_subject(people, np.asarray(video.times_s), width, video.frames.shape[1], "left")
    measured = np.flatnonzero(subject.member >= 0).tolist()
    assert measured == list(range(20))  # the athlete, and never the bystander's body
    assert all(centre(people[t][subject.member[t]])[0] < 0.55 * width for t in measured)


def test_a_second_detection_inside_someone_else_continues_nobody(demo_people, demo: VideoFrames) -> None:
    """The man on the roof is lost after frame 9 (0.6 s); at 1.8 s, a garbled smaller copy of the walker appears
    inside her body, as the detector drew the man on the Sports2D demo at 884×498. Near enough and of a size to be
    the man, it was the only identity that could continue him, and was joined to him: his series got three frames
    of the walker's body. It lies inside someone else: it continues nobody."""
    people = [list(found) for found in demo_people]
    for t in range(10, 30):
        people[t] = [p for p in people[t] if p is not _him(people[t])]
    for t in (27, 28, 29):
        walker = next(p for p in people[t] if centre(p)[0] >= 442)
        people[t].append(_copy(walker, (0.0, 0.1), 0.7))
    subject = choose_subject(people, np.asarray(demo.times_s), demo.frames.shape[2], demo.frames.shape[1], "left")
    measured = np.flatnonzero(subject.member >= 0).tolist()
    assert measured == list(range(10)), measured
    assert all(centre(people[t][subject.member[t]])[0] < 442 for t in measured)


def test_each_frame_without_the_measured_person_has_its_reason(demo_people, demo: VideoFrames) -> None:
    people = [list(found) for found in demo_people]
    for t in (0, 1, 2):  # nobody yet
        people[t] = []
    people[10] = []  # nobody at all in the middle
    him = _him(people[8])
    people[8] = [p for p in people[8] if p is not him] + [_copy(him, (0.0, 0.0), 0.5)]  # half of him
    people[15].append(_copy(_him(people[15]), (0.05, 0.0), 1.0))  # found twice, alike
    for t in (27, 28, 29):  # he has gone; the walker stays
        people[t] = [p for p in people[t] if p is not _him(people[t])]
    subject = _subject(people, demo)
    assert centre(people[5][subject.member[5]])[0] < 442  # still the man on the roof
    reasons = absence_reasons(subject, people, np.asarray(demo.times_s))
    assert [t for t, r in enumerate(reasons) if r] == [0, 1, 2, 8, 10, 12, 15, 19, 27, 28, 29]
    # frames 12 and 19: the estimator missed him, and only the walker was found, far away
    assert absence_counts(reasons) == {"before": 3, "after": 3, "nobody": 1, "unclear": 1, "size": 1, "elsewhere": 2}
