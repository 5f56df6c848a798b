"""The differencer prompt states when the frames were shown: one spacing when it is one, else each time."""

from __future__ import annotations

from viddiff.differencer.prompts import build_prompt


def prompt(seconds: float | None, times: tuple[list[float], list[float]] | None) -> str:
    return build_prompt(
        action="squat", statement="deeper", n_frames_a=3, n_frames_b=3,
        seconds_between_frames=seconds, options="abc", frame_times_s=times,
    )


def test_even_spacing_is_one_sentence_as_before() -> None:
    even = ([1.0, 1.35, 1.7], [0.5, 0.85, 1.2])
    assert prompt(0.35, even) == prompt(0.35, None)
    assert "consecutive frames are 0.35 seconds apart" in prompt(0.35, even)


def test_uneven_spacing_lists_each_videos_times() -> None:
    text = prompt(0.4, ([2.0, 2.5, 3.2], [0.0, 0.3, 0.6]))
    assert "Seconds since each video's first shown frame: video A 0.00, 0.50, 1.20; video B 0.00, 0.30, 0.60." in text
    assert "apart" not in text


def test_single_frames_say_nothing_about_time() -> None:
    text = build_prompt(
        action="squat", statement="deeper", n_frames_a=1, n_frames_b=1, seconds_between_frames=None,
        options="ab", frame_times_s=([1.0], [2.0]),
    )
    assert "seconds" not in text.lower()
