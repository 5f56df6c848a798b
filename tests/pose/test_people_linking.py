"""Linking people over time, and why the measured person is missing from a frame: on real keypoints.

The people come from BlazePose on real clips in tests/data (the Sports2D demo, a man on a roof with a walker
passing below; Pose2Sim's two-person take, cameras 1 and 3). Where a test needs a situation these seconds do not hold
(the second look finding someone twice, the athlete hidden behind the bystander), it copies or removes real
detections, as :func:`test_people.test_an_identity_switch_is_a_gap_never_the_same_body` does.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from viddiff.pose.absence import absence_counts, absence_reasons
from viddiff.pose.blazepose import BlazePose
from viddiff.pose.people import Person, centre, choose_subject, link_identities, size
from viddiff.pose.skeleton import INDEX
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


@pytest.fixture(scope="module")
def cam03() -> VideoFrames:
    """Pose2Sim's two-person take, camera 3, frames 36–91 at full size and 60 fps: the athlete (middle) moves left in
    front of the bystander (left), who stands still; from frame 78 of the take the estimator draws one body over
    both of them, its torso sliding onto the bystander's."""
    return read_video(DATA / "pose2sim" / "p2s_two_people_cam03.mp4")


@pytest.fixture(scope="module")
def cam03_people(blazepose: BlazePose, cam03: VideoFrames) -> list[list[Person]]:
    return blazepose.estimate_people(list(cam03.frames), list(cam03.times_s))


def _hips_x(person: Person) -> float:
    return float(person.xy[INDEX["left_hip"], 0] + person.xy[INDEX["right_hip"], 0]) / 2


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


def test_a_detection_sliding_onto_the_bystander_is_not_followed_there(cam03_people, cam03: VideoFrames) -> None:
    """The athlete's detection slid, frame by frame, onto the bystander standing behind her (hips from x = 0.42 of the
    width to 0.28 within 8 frames), and her identity's velocity, taken from its last 3 sightings, followed it there:
    frames 81–88 of the take measured the bystander's body as the athlete's. Her velocity now comes from the last
    half second, and so does where she was: a slide of a few frames is not where her motion leads. (Frames 78 and
    80, the first of the slide, whose hips lie between the two people, are still measured.)"""
    width = cam03.frames.shape[2]
    subject = choose_subject(cam03_people, np.asarray(cam03.times_s), width, cam03.frames.shape[1])
    bystander = np.median([_hips_x(p) for found in cam03_people[:12] for p in found if centre(p)[0] < 0.35 * width])
    measured = np.flatnonzero(subject.member >= 0)
    hips = np.array([_hips_x(cam03_people[t][subject.member[t]]) for t in measured])
    athlete = np.median(hips[(measured >= 30) & (measured < 42)])  # the frames before one body was drawn over both
    assert bystander < 0.3 * width < 0.38 * width < athlete  # the two people, as the clip shows them
    assert len(measured) >= 35  # the athlete is measured, not merely nobody
    from_81 = measured >= 81 - 36
    on_the_bystander = measured[from_81 & (np.abs(hips - bystander) < np.abs(hips - athlete))].tolist()
    assert on_the_bystander == [], on_the_bystander


def test_a_second_detection_lying_on_someone_already_linked_starts_no_identity(cam03_people, cam03: VideoFrames) -> None:
    """The estimator sometimes finds the athlete twice, the second a little off (frame 22 of camera 3's take). The
    second fitted only her identity, already taken by the better fit, so it started an identity of its own at her
    place; from then on both identities fitted her equally and 29 of her frames were gaps. A detection that fits only
    people already found in the frame, and lies on one of them, is them found twice: it goes to nobody. Here a copy
    of her lies on her, 0.3 torso lengths to the right, out of the bystander's reach."""
    people = [list(found) for found in cam03_people]
    athlete = max(people[20], key=lambda p: centre(p)[0])
    people[20].append(_copy(athlete, (0.3, 0.0), 0.95))
    plain = link_identities(cam03_people, np.asarray(cam03.times_s))
    linked = link_identities(people, np.asarray(cam03.times_s))
    assert linked.labels[20][people[20].index(athlete)] >= 0  # she is linked
    assert linked.labels[20][-1] == -1 and linked.count == plain.count  # her copy starts no identity
