"""Proposer prompts (paper appendix H), written for this project.

Three text-only calls: propose differences (open mode only), propose
sub-action stages with CLIP retrieval strings (optionally refined), and link
each difference to the stages where it can be seen.
"""

PROMPT_VERSION = "proposer-v1"

SYSTEM = (
    "You are an expert coach and motion analyst. You answer with JSON only, exactly in the requested format."
)

DIFFERENCES = """Two videos show people performing this action: "{action}".

List {n_differences} ways in which the two performances could differ. Each difference must be visual and about how the action is performed (for example "the jump is higher" or "the arms are straighter"). Phrase each one as a statement that can be more true of one video than of the other, never naming a video.

For every difference give:
- "name": a very short identifier-like name,
- "description": the statement, one short sentence,
- "query_string": a simple statement of the same difference that could be judged from a few well-chosen frames,
- "num_frames": "1" if a single well-chosen frame per video is enough to judge it, or "gt_1" if it needs several frames (speed, timing, smoothness, motion).

Answer as JSON: {{"differences": [{{"name": "...", "description": "...", "query_string": "...", "num_frames": "1"}}, ...]}} with at most {n_differences} items and distinct names."""

STAGES = """Two videos show people performing this action: "{action}".

Break the action into its sub-action stages, in the order they happen: at most {max_stages} stages.
For each stage give a "name", a one-sentence "description" and at least {n_retrieval_keys} "retrieval_strings".
Retrieval strings are used to find the stage's frames with an image-text model, so each must describe only what one frame would show: the person's pose and appearance, visible objects and positions. Do not use the action's name, do not describe motion over time. Start each with "A photo of a".

Answer as JSON: {{"stages": [{{"name": "...", "description": "...", "retrieval_strings": ["A photo of a ...", ...]}}, ...]}}"""

REFINE = """Two videos show people performing this action: "{action}".

These are its sub-action stages, each with retrieval strings used to find the stage's frames with an image-text model:
{stages}

A useful retrieval string describes something distinctive of its own stage. Remove the strings that would fit many other stages equally well; keep the others unchanged. Keep every stage, in the same order, with the same names, and keep at least one string per stage. Do not add new strings.

Answer as JSON: {{"stages": [{{"name": "...", "description": "...", "retrieval_strings": ["...", ...]}}, ...]}}"""

LINKS = """Two videos show people performing this action: "{action}".

The action's stages, in order:
{stages}

Differences in how the action may be performed (id: statement):
{differences}

For every stage, list the ids of the differences that can be seen during that stage. A difference may appear in several stages; a stage may have none. Every difference must appear in at least one stage.

Answer as JSON: {{"links": [{{"stage": "<stage name>", "differences": ["<difference id>", ...]}}, ...]}}"""
