"""Proposer prompts (paper appendix H), written for this project.

Three text-only calls: propose differences (open mode; in describe mode along
the seven dimensions of ``viddiff.schema.DIMENSIONS``), propose sub-action stages with CLIP retrieval
strings (optionally refined), and link each difference to the stages where it
can be seen. ``proposer.calls: one`` asks the same in one call (:func:`one_call`),
from the same paragraphs.
"""

PROMPT_VERSION = "proposer-v2"

DIMENSIONS: dict[str, str] = {
    "subject": "who or what is shown: number, kind, appearance, clothing, colour, size of people, animals, objects",
    "style": "the visual style: realistic or animated, colour grading, lighting, brightness, artistic effects",
    "background": "the setting behind the subject: place, scenery, environment, weather, other objects in the scene",
    "camera": "how it is filmed: shot size, viewing angle, camera movement (pan, tilt, zoom, tracking), steadiness",
    "motion": "what the subject does and how it moves: the actions, their direction, speed, range and order",
    "position": "where the subject is in the frame and relative to other things, and how that changes",
    "playback": "the playback technique: slow motion, fast forward, reverse, freeze frame, looping, cuts",
}
"""What each of the seven dimensions (``viddiff.schema.DIMENSIONS``) covers, as the describe-mode prompt explains them."""


def scene(action: str) -> str:
    """Opening sentence of every proposer prompt; description-benchmark pairs may come without an action."""
    if action.strip():
        return f'Two videos show people performing this action: "{action}".'
    return "Two videos are compared. What they show is not described here: it may be any action, event or scene."

SYSTEM = (
    "You are an expert coach and motion analyst. You answer with JSON only, exactly in the requested format."
)

_DIFFERENCES_TASK = """List {n_differences} ways in which the two performances could differ. Each difference must be visual and about how the action is performed (for example "the jump is higher" or "the arms are straighter"). Phrase each one as a statement that can be more true of one video than of the other, never naming a video.

For every difference give:
- "name": a very short identifier-like name,
- "description": the statement, one short sentence,
- "query_string": a simple statement of the same difference that could be judged from a few well-chosen frames,
- "num_frames": "1" if a single well-chosen frame per video is enough to judge it, or "gt_1" if it needs several frames (speed, timing, smoothness, motion)."""
_DIFFERENCES_SHAPE = """{{"differences": [{{"name": "...", "description": "...", "query_string": "...", "num_frames": "1"}}, ...]}}"""

DIFFERENCES = """{scene}

""" + _DIFFERENCES_TASK + """

Answer as JSON: """ + _DIFFERENCES_SHAPE + """ with at most {n_differences} items and distinct names."""

_STAGES_TASK = """Break the action into its sub-action stages, in the order they happen: at most {max_stages} stages.
For each stage give a "name", a one-sentence "description" and at least {n_retrieval_keys} "retrieval_strings".
Retrieval strings are used to find the stage's frames with an image-text model, so each must describe only what one frame would show: the person's pose and appearance, visible objects and positions. Do not use the action's name, do not describe motion over time. Start each with "A photo of a"."""
_STAGES_SHAPE = """{{"stages": [{{"name": "...", "description": "...", "retrieval_strings": ["A photo of a ...", ...]}}, ...]}}"""

STAGES = """{scene}

""" + _STAGES_TASK + """

Answer as JSON: """ + _STAGES_SHAPE

REFINE = """{scene}

These are its sub-action stages, each with retrieval strings used to find the stage's frames with an image-text model:
{stages}

A useful retrieval string describes something distinctive of its own stage. Remove the strings that would fit many other stages equally well; keep the others unchanged. Keep every stage, in the same order, with the same names, and keep at least one string per stage. Do not add new strings.

Answer as JSON: {{"stages": [{{"name": "...", "description": "...", "retrieval_strings": ["...", ...]}}, ...]}}"""

_LINKS_TASK = """For every stage, list the {refs} of the differences that can be seen during that stage. A difference may appear in several stages; a stage may have none. Every difference must appear in at least one stage."""

LINKS = """{scene}

The action's stages, in order:
{stages}

Differences in how the action may be performed (id: statement):
{differences}

""" + _LINKS_TASK.replace("{refs}", "ids") + """

Answer as JSON: {{"links": [{{"stage": "<stage name>", "differences": ["<difference id>", ...]}}, ...]}}"""

_ONE_CALL_STAGES = " Make each string distinctive of its stage: avoid descriptions that would fit other stages equally well."


def one_call(action: str, max_stages: int, n_retrieval_keys: int, *, n_differences: int = 0, differences: str = "") -> str:
    """``proposer.calls: one``: differences (open mode: ``n_differences``; else the given ``"id: statement"``
    lines), stages with distinctive retrieval strings, and links, asked in one prompt. Open-mode links name
    the differences by their names (their ids do not exist yet)."""
    if differences:
        first = f"Differences in how the action may be performed (id: statement):\n{differences}"
        refs, shape_refs, shape = "ids", "<difference id>", ""
    else:
        first = _DIFFERENCES_TASK.format(n_differences=n_differences)
        refs, shape_refs = "names", "<difference name>"
        shape = '"differences": [{"name": "...", "description": "...", "query_string": "...", "num_frames": "1"}, ...], '
    stages = _STAGES_TASK.format(max_stages=max_stages, n_retrieval_keys=n_retrieval_keys) + _ONE_CALL_STAGES
    links = _LINKS_TASK.format(refs=refs)
    answer = (
        "{" + shape + '"stages": [{"name": "...", "description": "...", "retrieval_strings": ["A photo of a ...", ...]}, ...], '
        f'"links": [{{"stage": "<stage name>", "differences": ["{shape_refs}", ...]}}, ...]}}'
    )
    return (
        f"{scene(action)}\n\nPlan the comparison of two performances of this action, in one answer.\n\n"
        f"{first}\n\n{stages}\n\n{links}\n\nAnswer as JSON: {answer}"
    )

DIMENSION_DIFFERENCES = """{scene}

List {n_differences} candidate differences between the two videos, spread over these dimensions (name: what it covers):
{dimensions}

Cover as many dimensions as the number allows. Each difference must be visual and checkable by looking at frames of both videos. Phrase each one as a statement that can be more true of one video than of the other, never naming a video.

For every difference give:
- "name": a short noun phrase for the aspect being compared (for example "camera distance"),
- "category": the dimension it belongs to, one of {category_keys},
- "scope": "global" if it holds over the whole video (typically subject appearance, style, background, camera, playback), or "local" if it is seen only during part of what happens (typically motion and position),
- "description": the statement, one short sentence (for example "the camera is closer to the subject"),
- "contrast": the same aspect as it would be said of the other video, one short sentence (for example "the camera is further from the subject"),
- "query_string": a simple statement of the same difference that could be judged from a few well-chosen frames,
- "num_frames": "1" if a single well-chosen frame per video is enough to judge it, or "gt_1" if it needs several frames (speed, timing, movement).

Answer as JSON: {{"differences": [{{"name": "...", "category": "...", "scope": "global", "description": "...", "contrast": "...", "query_string": "...", "num_frames": "1"}}, ...]}} with at most {n_differences} items and distinct names."""


def dimension_differences(action: str, n_differences: int) -> str:
    """The describe-mode proposal prompt: candidate differences along the seven dimensions."""
    listing = "\n".join(f"- {key}: {text}" for key, text in DIMENSIONS.items())
    keys = ", ".join(f'"{key}"' for key in DIMENSIONS)
    return DIMENSION_DIFFERENCES.format(
        scene=scene(action), n_differences=n_differences, dimensions=listing, category_keys=keys
    )
