"""Differencer prompt: keyframes of A then B, one statement, answer a/b(/c)."""

from typing import Sequence

PROMPT_VERSION = "differencer-v3"
"""v3: frames that are not evenly spaced in time (variable frame rate, or A and B at different rates)
are described by their times instead of one average spacing."""
_EVEN_SPACING_TOLERANCE_S = 0.005  # gaps that print the same at two decimals

SYSTEM = (
    "You are an expert coach comparing two performances of the same action from video frames. "
    "The images come from a public research dataset. Answer with JSON only."
)
SYSTEM_NO_ACTION = (
    "You are an expert video analyst comparing two videos from their frames. "
    "The images come from a public research dataset. Answer with JSON only."
)
"""For pairs without an action description (description benchmarks), which need not show people or the same action."""


def system_prompt(action: str) -> str:
    return SYSTEM if action.strip() else SYSTEM_NO_ACTION

_OPTIONS = {
    "abc": '(a) video A, (b) video B, or (c) they are similar or you cannot tell.',
    "ab": "(a) video A or (b) video B. You must choose one of them.",
}


def build_prompt(
    *,
    action: str,
    statement: str,
    n_frames_a: int,
    n_frames_b: int,
    seconds_between_frames: float | None,
    options: str,
    frame_times_s: tuple[Sequence[float], Sequence[float]] | None = None,
    measured: str | None = None,
) -> str:
    """Text placed before the images; says which images belong to which video and when they were shown.

    ``frame_times_s`` (seconds of A's and B's frames): when their gaps differ, the prompt lists the
    times, since one spacing for all frames would misstate them.
    """
    if n_frames_a == 1 and n_frames_b == 1:
        layout = "The first image is a frame from video A and the second image is a frame from video B."
    else:
        layout = (
            f"The first {_images(n_frames_a)} from video A and the next {_images(n_frames_b)} from video B, "
            "each in time order."
        )
        if frame_times_s is not None and not _evenly_spaced(frame_times_s):
            layout += (
                " Seconds since each video's first shown frame: "
                f"video A {_times(frame_times_s[0])}; video B {_times(frame_times_s[1])}."
            )
        elif seconds_between_frames is not None:
            layout += f" Within each video, consecutive frames are {seconds_between_frames:.2f} seconds apart."
    letters = '"a", "b" or "c"' if options == "abc" else '"a" or "b"'
    scene = "Two videos are compared."  # pairs without an action description
    if action.strip():
        scene = f'Two videos show people performing this action: "{action}".'
    context = ""
    if measured:
        context = (
            f"Measured from an automatic body-pose estimate of both videos (it can be wrong; weigh it with what "
            f"the frames show): {measured}.\n"
        )
    return (
        f"{scene}\n"
        f"{layout}\n\n"
        f'Statement: "{statement}"\n'
        f"{context}"
        f"Which video is the statement more true of? {_OPTIONS[options]}\n"
        'Answer as JSON: {"answer_detailed": "<your reasoning about what the frames show>", '
        f'"answer": {letters}}}'
    )


def _evenly_spaced(frame_times_s: tuple[Sequence[float], Sequence[float]]) -> bool:
    gaps = [b - a for times in frame_times_s for a, b in zip(times, times[1:])]
    return not gaps or max(gaps) - min(gaps) <= _EVEN_SPACING_TOLERANCE_S


def _times(times: Sequence[float]) -> str:
    first = times[0] if times else 0.0
    return ", ".join(f"{t - first:.2f}" for t in times)


def _images(n: int) -> str:
    return "image is a frame" if n == 1 else f"{n} images are frames"
