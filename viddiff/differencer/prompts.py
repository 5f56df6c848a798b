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


SYSTEM_RELEASE = (
    "You are a helpful assistant for questions about images. The images come from a public machine-learning "
    "dataset; your answers measure how well a model understands what it sees, and they will not be used to "
    "act in the real world."
)
"""``differencer.prompt_style=release``: the content of the release's system message (neutral; no persona)."""


def system_prompt(action: str, style: str = "project") -> str:
    if style == "release":
        return SYSTEM_RELEASE
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
    style: str = "project",
    measured: str | None = None,
) -> str:
    """Text placed before the images; says which images belong to which video and when they were shown.

    ``frame_times_s`` (seconds of A's and B's frames): when their gaps differ, the prompt lists the
    times, since one spacing for all frames would misstate them. ``style="release"``: the content of the
    release's question (which video shows more of what the statement describes; the frames of a video are
    close together), in this project's words.
    """
    context = _measured_context(measured)
    if style == "release":
        return _release_prompt(
            action, statement, n_frames_a, n_frames_b, seconds_between_frames, options, frame_times_s, context
        )
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
    return (
        f"{scene}\n"
        f"{layout}\n\n"
        f'Statement: "{statement}"\n'
        f"{context}"
        f"Which video is the statement more true of? {_OPTIONS[options]}\n"
        'Answer as JSON: {"answer_detailed": "<your reasoning about what the frames show>", '
        f'"answer": {letters}}}'
    )


def _release_prompt(
    action: str,
    statement: str,
    n_frames_a: int,
    n_frames_b: int,
    seconds_between_frames: float | None,
    options: str,
    frame_times_s: tuple[Sequence[float], Sequence[float]] | None,
    context: str,
) -> str:
    if n_frames_a == 1 and n_frames_b == 1:
        layout = "The first image is from video A and the second from video B."
    else:
        layout = f"The first {_images(n_frames_a)} from video A and the last {_images(n_frames_b)} from video B."
        if frame_times_s is not None and not _evenly_spaced(frame_times_s):
            layout += (
                " Seconds since each video's first shown frame: "
                f"video A {_times(frame_times_s[0])}; video B {_times(frame_times_s[1])}."
            )
        elif seconds_between_frames is not None:
            layout += (
                " Within each video the frames are very close in time: "
                f"{seconds_between_frames:.2f} seconds apart."
            )
    scene = "The images come from two videos."
    if action.strip():
        scene = f'The images come from two videos of people performing an action described as: "{action}".'
    letters = '"a", "b" or "c"' if options == "abc" else '"a" or "b"'
    return (
        f"{scene}\n{layout}\n\n"
        f'Statement: "{statement}"\n'
        f"{context}"
        f"Which video shows more of what the statement describes? {_RELEASE_OPTIONS[options]}\n"
        f"The answer must be {letters}. "
        'Answer as JSON: {"answer_detailed": "<your reasoning>", '
        f'"answer": {letters}}}'
    )


def _measured_context(measured: str | None) -> str:
    """``differencer.pose_evidence``: the difference's measurement, as context the VLM may weigh (never a verdict)."""
    if not measured:
        return ""
    return (
        f"Measured from an automatic body-pose estimate of both videos (it can be wrong; weigh it with what "
        f"the frames show): {measured}.\n"
    )


_RELEASE_OPTIONS = {
    "abc": "(a) video A, (b) video B, (c) they are similar or you cannot tell.",
    "ab": "(a) video A, (b) video B.",
}


def _evenly_spaced(frame_times_s: tuple[Sequence[float], Sequence[float]]) -> bool:
    gaps = [b - a for times in frame_times_s for a, b in zip(times, times[1:])]
    return not gaps or max(gaps) - min(gaps) <= _EVEN_SPACING_TOLERANCE_S


def _times(times: Sequence[float]) -> str:
    first = times[0] if times else 0.0
    return ", ".join(f"{t - first:.2f}" for t in times)


def _images(n: int) -> str:
    return "image is a frame" if n == 1 else f"{n} images are frames"
