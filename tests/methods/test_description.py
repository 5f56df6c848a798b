"""The describe-mode renderer: verdicts → text grouped by ViDiC-1K dimension, both videos named."""

from __future__ import annotations

from typing import Optional

from viddiff.methods.description import (
    NOTHING_ESTABLISHED,
    difference_sentence,
    omitted_note,
    render_description,
    similarity_sentence,
)
from viddiff.schema import Difference, Prediction


def diff(
    key: str, category: Optional[str], description: str, contrast: Optional[str] = None, name: str = ""
) -> Difference:
    name = name or f"aspect {key}"
    return Difference(key=key, name=name, description=description, category=category, contrast=contrast)


def verdict(key: str, letter: Optional[str]) -> Prediction:
    return Prediction(key=key, description="", prediction=letter)


def test_both_videos_are_named_from_statement_and_contrast():
    d = diff("0", "camera", "The camera is closer to the subject.", "the camera is further from the subject")
    assert difference_sentence(d, "a") == (
        "In Video A, the camera is closer to the subject; in Video B, the camera is further from the subject."
    )
    assert difference_sentence(d, "b") == (
        "In Video A, the camera is further from the subject; in Video B, the camera is closer to the subject."
    )


def test_without_a_contrast_the_statement_holds_more_of_one_video():
    d = diff("0", "motion", "the stance is wider")
    assert difference_sentence(d, "b") == "In Video B more than in Video A, the stance is wider."


def test_names_keep_their_capitals_and_similarities_are_short():
    d = diff("0", "subject", "LeBron James wears red", "LeBron James wears white", name="jersey colour")
    assert difference_sentence(d, "a") == "In Video A, LeBron James wears red; in Video B, LeBron James wears white."
    assert similarity_sentence(d) == "Similar in both videos: jersey colour."


def test_sections_follow_the_category_order_differences_before_similarities():
    differences = [
        diff("0", "motion", "the jump is higher", "the jump is lower", name="jump height"),
        diff("1", "subject", "the shirt is red", "the shirt is blue", name="shirt colour"),
        diff("2", "motion", "the arms swing faster", "the arms swing slower", name="arm speed"),
        diff("3", None, "the sound is louder", name="loudness"),
        diff("4", "camera", "the camera pans", "the camera is still", name="camera movement"),
        diff("5", "playback", "it plays in slow motion", "it plays at normal speed", name="playback speed"),
    ]
    predictions = [verdict("0", "c"), verdict("1", "b"), verdict("2", "a"), verdict("3", "a"), verdict("4", None)]
    text = render_description(differences, predictions)
    assert text == (
        "Subject:\n"
        "- In Video A, the shirt is blue; in Video B, the shirt is red.\n"
        "\n"
        "Motion:\n"
        "- In Video A, the arms swing faster; in Video B, the arms swing slower.\n"
        "- Similar in both videos: jump height.\n"
        "\n"
        "Other:\n"
        "- In Video A more than in Video B, the sound is louder."
    )
    # the camera verdict was invalid and playback had none: neither is mentioned
    assert "camera" not in text.lower() and "slow motion" not in text


def test_playback_uses_the_display_name():
    d = diff("0", "playback", "it plays in slow motion", "it plays at normal speed")
    assert render_description([d], [verdict("0", "a")]).startswith("Playback technique:\n- In Video A, it plays")


def test_nothing_valid_still_gives_a_response():
    d = diff("0", "camera", "the camera pans")
    assert render_description([d], [verdict("0", None)]) == NOTHING_ESTABLISHED
    assert render_description([], []) == NOTHING_ESTABLISHED


def test_invalid_verdicts_are_counted_in_a_note():
    assert omitted_note([verdict("0", "a"), verdict("1", "c")]) == []
    (note,) = omitted_note([verdict("0", None), verdict("1", "b"), verdict("7", None)])
    assert note.startswith("2 difference(s) without a valid verdict") and note.endswith(": 0, 7")
