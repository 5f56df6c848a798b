"""The proposer prompts with the content of the authors' released ones, in this project's words.

Used by ``proposer.prompt_style=release`` (differences, stages), ``proposer.refinement=wholesale``
(refinement) and ``proposer.link_by=name`` (linking), which ``configs/paper.yaml`` sets. They ask for
what the release asks for and nothing more: no system message goes with them, no hint of what to leave
out. Only the answer's JSON shape is this project's (the same shapes as :mod:`viddiff.proposer.prompts`,
so one parser serves both), and the release's placeholders are kept: the refinement and linking calls see
the stage plan and the differences as indented JSON, every field included.
"""

from __future__ import annotations

import json

from viddiff.proposer.prompts import scene
from viddiff.schema import Difference, Stage

PROMPT_VERSION = "proposer-release-v1"

_DIFFERENCES = """{scene}

Suggest {n_differences} differences in how this action could be performed. Give each difference:
- "name": a very short name that can serve as a key,
- "description": a slightly longer statement of the difference,
- "query_string": a simple statement of the difference (see below),
- "num_frames": "1" or "gt_1" (see below).
Each description must be something you could see, about the way the action is done (for example "the jump is higher" or "the arm is straighter"), and must not mention either video: it is a statement that holds more for one of the two videos than for the other.
Now suppose each difference had to be judged by looking at individual frames. In "num_frames", say how few well-chosen frames that takes: "1" for one frame, "gt_1" for more than one. Write "query_string" as a simple statement, judged from frames, that is more true of one video than of the other (for example "the left leg is higher" or "the movement is faster").

List {n_differences} differences. Answer as JSON: {{"differences": [{{"name": "...", "description": "...", "query_string": "...", "num_frames": "1"}}, ...]}}"""

_STAGES = """{scene}

Write the action as a transcript of its sub-action stages, in the order they happen, with {max_stages} stages or fewer. Give each stage a "name" and a "description", and a list "retrieval_strings" of at least {n_retrieval_keys} descriptions of what a single frame of that stage would show. They are used to find the stage's frames in a video, so they mention only visual features that one frame can show, mostly how the person looks and their pose; they do not use the action's name, and each begins with words like "A photo of a".

Answer as JSON: {{"stages": [{{"name": "...", "description": "...", "retrieval_strings": ["A photo of a ...", ...]}}, ...]}}"""

_REFINE = """{scene}

Here is its stage transcript; each stage has retrieval strings that describe what its frames look like:
{stages}

Retrieval strings should describe visual features that belong to their own stage. Give back the same stages with the same strings, but filter out every string that is too similar to the strings of other stages: being close to one or two other stages is fine, to more is not. Each string stays in the stage it is listed under.

Answer as JSON in the same form: {{"stages": [{{"name": "...", "description": "...", "retrieval_strings": ["...", ...]}}, ...]}}"""

_LINKS = """{scene}

Its stages:
{stages}

Differences, each a statement that is more true of one of the two videos than of the other:
{differences}

Match every difference to the stage or stages where it can be seen. Answer with an object whose keys are the stage names, each holding the list of the names of the differences that belong to that stage. A difference may belong to several stages and a stage may have none, but every difference must appear at least once. Refer to stages and differences by their "name".

Answer as JSON: {{"<stage name>": ["<difference name>", ...], ...}}"""


def differences(action: str, n_differences: int) -> str:
    return _DIFFERENCES.format(scene=scene(action), n_differences=n_differences)


def stages(action: str, max_stages: int, n_retrieval_keys: int) -> str:
    return _STAGES.format(scene=scene(action), max_stages=max_stages, n_retrieval_keys=n_retrieval_keys)


def refine(action: str, plan: list[Stage]) -> str:
    return _REFINE.format(scene=scene(action), stages=stage_plan_json(plan))


def links(action: str, plan: list[Stage], differences: list[Difference], names: list[str]) -> str:
    """``names``: the name each difference is listed (and must be referred to) by."""
    listed = {
        d.key: {"name": name, "description": d.description, "query_string": d.query_string or d.description,
                "num_frames": d.num_frames}
        for d, name in zip(differences, names)
    }
    return _LINKS.format(scene=scene(action), stages=stage_plan_json(plan), differences=json.dumps(listed, indent=4))


def stage_plan_json(plan: list[Stage]) -> str:
    """The stage plan as the release shows it to the model: its whole answer, indented."""
    shown = [{"name": s.name, "description": s.description, "retrieval_strings": s.retrieval_strings} for s in plan]
    return json.dumps({"stages": shown}, indent=4)
