"""LMM baseline prompts (paper appendix F.3), written for this project."""

PROMPT_VERSION = "lmm-baseline-v1"

SYSTEM = (
    "You are an expert coach comparing two videos of people performing the same action. "
    "The videos come from a public research dataset. Answer with JSON only."
)


def video_layout(n_a: int, n_b: int, fps: float, as_video: bool) -> str:
    if as_video:
        return f"The first video is video A and the second video is video B. Both are sampled at {fps:g} frames per second."
    return (
        f"The first {n_a} images are the frames of video A and the following {n_b} images are the frames of video B, "
        f"each in time order, sampled at {fps:g} frames per second."
    )


def closed_prompt(action: str, layout: str, statements: dict[str, str]) -> str:
    listing = "\n".join(f'"{key}": {text}' for key, text in statements.items())
    keys = ", ".join(f'"{k}": "a"' for k in list(statements)[:2])
    return (
        f'Both videos show people performing this action: "{action}".\n{layout}\n\n'
        "Here are statements about how the action is performed, each with its id:\n"
        f"{listing}\n\n"
        'For every statement, say whether it is more true of video A ("a") or of video B ("b"). '
        "Look carefully at how each person moves; you must choose a or b for every id.\n"
        f'Answer as JSON mapping each id to "a" or "b", e.g. {{{keys}, ...}}.'
    )


def open_prompt(action: str, layout: str, n_differences: int) -> str:
    return (
        f'Both videos show people performing this action: "{action}".\n{layout}\n\n'
        f"List at most {n_differences} differences in how the action is performed in the two videos. "
        "Each difference is a short visual statement about the performance (for example \"the squat is deeper\") "
        'that does not name a video, with "prediction" "a" if the statement is more true of video A or "b" if of video B. '
        "Focus on differences that matter to a coach; do not describe the background, clothing or camera.\n"
        'Answer as JSON: {"differences": [{"description": "...", "prediction": "a"}, ...]}'
    )
