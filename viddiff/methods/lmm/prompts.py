"""LMM baseline prompts (task of the paper's appendix F.3), written for this project.

The text says how many frames belong to each video, in which order, and at
which frame rate, because a model that sees one flat list of images cannot
otherwise tell where video A ends or how fast the motion is.
"""

from __future__ import annotations

import json

PROMPT_VERSION = "lmm-baseline-v3"

SYSTEM = (
    "You are an expert coach comparing two videos of people performing the same action. "
    "The videos come from a public research dataset. Answer with JSON only."
)
SYSTEM_DESCRIBE = (
    "You are an expert video analyst comparing two videos. The videos come from a public research dataset. "
    "You describe only what the frames show."
)
"""Describe mode: free text, and the videos need not show people or the same action."""

DIMENSIONS = (
    ("Subject", "who or what is shown: number, kind, appearance, clothing, colour, size of people, animals, objects"),
    ("Style", "visual style: realistic or animated, colour grading, lighting, brightness, artistic effects"),
    ("Background", "the setting behind the subject: place, scenery, environment, weather, other objects"),
    ("Camera", "how it is filmed: shot size, viewing angle, camera movement (pan, tilt, zoom, tracking), steadiness"),
    ("Motion", "what the subject does and how it moves: actions, direction, speed, range, order"),
    ("Position", "where the subject is in the frame and relative to other things, and how that changes"),
    ("Playback technique", "slow motion, fast forward, reverse, freeze frame, looping, cuts"),
)
"""The seven dimensions of ``viddiff.schema.DIMENSIONS``, in its order, as the describe prompt lists them."""


def _rate(fps: float) -> str:
    return f"{fps:.3g} frames per second ({1 / fps:.3g} s between frames)"


def video_layout(n_a: int, n_b: int, fps_a: float, fps_b: float, as_video: bool) -> str:
    """One sentence on how the media that follow are laid out."""
    same = abs(fps_a - fps_b) < 1e-9
    if as_video:
        rates = f"both sampled at {_rate(fps_a)}" if same else f"A at {_rate(fps_a)}, B at {_rate(fps_b)}"
        return f"You are given two videos, first video A ({n_a} frames) then video B ({n_b} frames), {rates}."
    rates = f"both sampled at {_rate(fps_a)}" if same else f"A sampled at {_rate(fps_a)}, B at {_rate(fps_b)}"
    return (
        f"The first {n_a} images are the frames of video A and the following {n_b} images are the frames of "
        f"video B, each in time order, {rates}."
    )


def video_label(name: str, n_frames: int, fps: float) -> str:
    """Text placed right before a video's frames, so the boundary between A and B is explicit."""
    return f"Video {name} ({n_frames} frames at {fps:.3g} fps):"


def closed_prompt(action: str, layout: str, statements: dict[str, str]) -> str:
    listing = "\n".join(f'"{key}": {text}' for key, text in statements.items())
    example = ", ".join(f'"{key}": "a"' for key in list(statements)[:2])
    return (
        f'Both videos show people performing this action: "{action}".\n{layout}\n\n'
        "Here are statements about how the action is performed, each with its id:\n"
        f"{listing}\n\n"
        'For every statement, say whether it is more true of video A ("a") or of video B ("b"). '
        "Look carefully at how each person moves; you must choose a or b for every id.\n"
        f'Answer as JSON mapping each id to "a" or "b", e.g. {{{example}, ...}}.'
    )


def open_prompt(action: str, layout: str, n_differences: int) -> str:
    return (
        f'Both videos show people performing this action: "{action}".\n{layout}\n\n'
        f"List at most {n_differences} differences in how the action is performed in the two videos. "
        'Each difference is a short visual statement about the performance (for example "the squat is deeper") '
        'that does not name a video, with "prediction" "a" if the statement is more true of video A or "b" if '
        "it is more true of video B. Focus on differences that matter to a coach; do not describe the background, "
        "clothing or camera.\n"
        'Answer as JSON: {"differences": [{"description": "...", "prediction": "a"}, ...]}'
    )


# ------------------------------------------------------------------ baseline.prompt_style=release
# The content of the release's baseline prompts (lmms/lmm_prompts.py), in this project's words: no system
# message, the frames of A then B with no label between them, and no advice on what to look at or leave out.


def release_layout(n_a: int, n_b: int, fps_a: float, fps_b: float, as_video: bool) -> str:
    if as_video:
        return "Video A and video B are given as two videos, in that order."
    rate = f"is the same for both, {fps_a:g} frames per second" if abs(fps_a - fps_b) < 1e-9 else (
        f"is {fps_a:g} frames per second for video A and {fps_b:g} for video B"
    )
    return (
        f"The videos are given as one sequence of images: the first {n_a} images are video A and the last {n_b} "
        f"images are video B. The frame rate {rate}."
    )


def release_closed_prompt(action: str, layout: str, statements: dict[str, str]) -> str:
    listing = json.dumps(statements, indent=2)
    example = ", ".join(f'"{key}": "a"' for key in list(statements)[:2])
    return (
        f'Here are two videos of people performing an action described as: "{action}".\n{layout}\n\n'
        "Below are differences identified between such videos, each under its own key:\n"
        f"{listing}\n\n"
        'For each difference, predict whether it is more true of video A ("a") or of video B ("b").\n'
        f'Answer as JSON mapping each key to "a" or "b", e.g. {{{example}, ...}}.'
    )


def release_open_prompt(action: str, layout: str, n_differences: int) -> str:
    return (
        f'Here are two videos of people performing an action described as: "{action}".\n{layout}\n\n'
        "List the differences in how the action is performed in the two videos. Each difference has a "
        '"description", a specific statement that is more true of one video than of the other, and a '
        '"prediction": "a" if the statement applies more to video A, "b" if it applies more to video B. '
        'Descriptions must be visual and about how the action is performed (for example "the jump is higher" or '
        '"the arm is straighter"), and must not mention a video: say "the jump is higher" with prediction "b", '
        f'not "the jump in video B is higher". Suggest at most {n_differences} differences.\n'
        'Answer as JSON: {"differences": [{"description": "...", "prediction": "a"}, ...]}'
    )


def describe_prompt(action: str, layout: str) -> str:
    """Describe mode: similarities and differences along the seven dimensions, as plain text.

    Written from the video-difference-captioning literature's description of such prompts: cover every dimension, keep
    similarities short and differences detailed, no speculation or invented detail, and ignore
    differences that are only image noise.
    """
    scene = f'Both videos show people performing this action: "{action}".\n' if action.strip() else ""
    listing = "\n".join(f"{i}. {name}: {what}" for i, (name, what) in enumerate(DIMENSIONS, start=1))
    return (
        f"{scene}{layout}\n\n"
        "Compare video A and video B along these seven dimensions:\n"
        f"{listing}\n\n"
        "For each dimension, in this order, write its name and then:\n"
        "- the similarities: short, one sentence saying what the two videos share;\n"
        "- the differences: in detail, saying explicitly what video A shows and what video B shows "
        '(for example "In video A the camera pans left to follow the dog; in video B the camera stays still").\n'
        "Describe only what is visible in the frames. Do not speculate about intentions, causes or anything "
        "off screen, and do not invent details you cannot see; if a dimension cannot be judged, say so briefly. "
        "Ignore differences that are only image noise, such as compression artefacts, grain or small changes "
        "in sharpness or pixel values.\n"
        "Answer in plain text, not JSON."
    )
