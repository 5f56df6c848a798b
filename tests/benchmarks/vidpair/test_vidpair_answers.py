"""The release's answer readings, byte for byte, and the fragile cases counted beside them."""

from __future__ import annotations

import pytest

from viddiff.benchmarks.vidpair.answers import (
    clipqa_valid,
    fragile_trigger,
    lenient_letters,
    read_letters,
    read_yes_no,
    videoqa_counts_as_prediction,
)


@pytest.mark.parametrize(
    ("answer", "reading", "trigger"),
    [
        ("Yes", "yes", None),
        ("  NO.  ", "no", None),
        ("Yes, but no", "yes", None),  # starts with yes
        ("I do not know", "no", "not"),  # "no" inside "not"
        ("I don't know.", "no", "know"),
        ("Not sure", "no", "not"),  # starts with "no"
        ("None", "no", "none"),
        ("I cannot tell", "no", "cannot"),
        ("There is snow", "no", "snow"),
        ("The eyes are closed. No.", "yes", "eyes"),  # "yes" is looked for before "no"
        ("File not found: clip.mp4", "no", "not"),  # only the exact string is a failure
        ("file not found", "unknown", None),
        ("error", "unknown", None),
        ("API_ERROR", "unknown", None),  # neither substring
        ("Unclear from these frames.", "unknown", None),
        ("", "unknown", None),
    ],
)
def test_yes_no_reading_and_its_fragile_word(answer: str, reading: str, trigger) -> None:
    assert read_yes_no(answer) == reading
    assert fragile_trigger(answer) == trigger


def test_non_strings_are_unknown_and_validity_follows_each_scorer() -> None:
    assert read_yes_no(None) == "unknown" and read_yes_no(True) == "unknown"
    assert not clipqa_valid(None) and not clipqa_valid("error") and not clipqa_valid("inference failed")
    assert clipqa_valid("I do not know") and not clipqa_valid("maybe")
    # videoqa's pairing check counts "error" as a prediction although it reads as unknown
    assert videoqa_counts_as_prediction("error") and not videoqa_counts_as_prediction(" Unknown ")
    assert not videoqa_counts_as_prediction(None)


def test_letter_sequences_are_compared_as_written_minus_case_and_spaces() -> None:
    assert read_letters(" a c ") == "AC" and read_letters("AC") == "AC"
    assert read_letters("CA") != read_letters("AC") and read_letters("A, C") == "A,C"
    assert read_letters(None) is None
    assert lenient_letters("A, C", "ABCD") == "AC" and lenient_letters("Answer: A and C", "ABCD") == "AC"
    assert lenient_letters("Answer: AC", "ABCD") == "" and lenient_letters("I think so", "ABCD") == ""
