"""Judge prompts for open-mode evaluation: the official protocol's semantics, in this project's words.

Inputs as in the official protocol: the action description, and the ground-truth and predicted
differences, each as key -> description. *Matching* pairs every ground-truth difference with at most one
predicted difference about the same visual property (or none); a prediction phrased as the opposite of a
ground truth still matches, and the *flip* check then says, per matched pair, whether the two statements
agree (0) or are direct opposites (1); a difference only in degree is not an opposite.

The texts are templates (``viddiff.templates``): ``eval.prompt_files`` replaces any of them with a user's
file, e.g. the authors' published wording. ``PROMPT_VERSION`` names the built-in texts and must change
whenever they or the answer format change; the hash of the texts actually used is recorded in
``metrics.json`` either way, since numbers from different judge prompts are not comparable.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, create_model

from viddiff.config import JudgePromptFiles
from viddiff.templates import TemplateSet, load_templates

PROMPT_VERSION = "viddiff-eval-3"
"""2: protocol rules in this project's words (degree is not an opposite); 3: the matching is an object keyed
by ground-truth key (its JSON schema names the exact keys)."""

JUDGE_SYSTEM = (
    "You grade a system that describes how two videos of the same action differ. "
    "You compare statements carefully and literally, and you answer only in JSON."
)

MATCH_TEMPLATE = """\
Action: {action}

Below are two numbered collections of statements about how one performance of this action differs from another.
G holds the ground-truth differences written by expert annotators. P holds differences predicted by a system.

G (ground truth):
{gt}

P (predicted):
{pred}

For each ground-truth difference in G, choose the predicted difference in P that describes the same visual \
property of the action: the same body part, movement or quality being compared, however it is worded. A \
predicted statement phrased as the opposite of the ground truth still describes the same property and is a \
match (for example "the stance is wider" and "the stance is narrower"). If no predicted difference describes \
that property, answer null.

Rules:
- Give exactly one entry for every key of G: {gt_keys}.
- Each key of P ({pred_keys}) may be used for at most one ground-truth difference. If several ground-truth \
differences could take the same predicted difference, give it to the closest one and answer null for the others.
- A statement about a related but different property is not a match.

Answer with a JSON object {"matches": {"<key of G>": "<key of P>" or null, ...}} with one entry per key of G."""

FLIP_TEMPLATE = """\
Each item below is a pair of statements about how two videos of the same action differ. \
Both statements of a pair describe the same property of the action.

For each pair, answer 0 if the two statements say the same thing (both would be true of the same video), \
or 1 if one states the direct opposite of the other (for example "the stance is wider" and "the stance is \
narrower"). Statements that differ only in degree or detail are not opposites: "the stance is much wider" \
and "the stance is slightly wider" are 0.

Pairs:
{pairs}

Answer with a JSON object {"results": [0 or 1, ...]} with exactly {n} numbers, one per pair, in the order given."""

BUILT_IN = {"system": JUDGE_SYSTEM, "match": MATCH_TEMPLATE, "flip": FLIP_TEMPLATE}


def judge_templates(files: Optional[dict[str, Optional[str]]] = None) -> TemplateSet:
    """The judge templates to use: the user's files (``eval.prompt_files``) where given, else the built-in ones."""
    return load_templates(JudgePromptFiles.FAMILY, files or {}, BUILT_IN)


class MatchAnswer(BaseModel):
    """The judge's matching: ground-truth key -> predicted key, or null when unmatched.

    Parsed leniently, so that what is valid in a rejected answer can be salvaged; the rules
    (exact keys, known predicted keys, one-to-one) are checked by ``matching.check_matching``.
    """

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)

    matches: dict[str, Optional[str]]


def match_answer(gt_keys: list[str], pred_keys: list[str]) -> type[MatchAnswer]:
    """``MatchAnswer`` whose JSON schema states the rules JSON Schema can state: exactly the keys of G,
    each mapped to a key of P or null. (One-to-one cannot be stated; it is checked and re-asked.)"""
    declared = {
        "type": "object",
        "properties": {k: {"anyOf": [{"type": "string", "enum": list(pred_keys)}, {"type": "null"}]} for k in gt_keys},
        "required": list(gt_keys),
        "additionalProperties": False,
    }
    field: Any = Annotated[dict[str, Optional[str]], WithJsonSchema(declared)]
    return create_model("MatchAnswer", __base__=MatchAnswer, matches=(field, ...))


class FlipAnswer(BaseModel):
    """One 0/1 per pair: 1 means the predicted statement is the opposite of the ground truth."""

    model_config = ConfigDict(extra="forbid")

    results: list[Literal[0, 1]]


def flip_answer(n_pairs: int) -> type[FlipAnswer]:
    """``FlipAnswer`` whose JSON schema asks for exactly ``n_pairs`` results (checked by ``flip_problem``)."""
    length = Field(json_schema_extra={"minItems": n_pairs, "maxItems": n_pairs})
    return create_model("FlipAnswer", __base__=FlipAnswer, results=(list[Literal[0, 1]], length))


def _keys(keys: list[str]) -> str:
    return ", ".join(json.dumps(k) for k in keys) or "(none)"


def match_prompt(action: str, gt: dict[str, str], pred: dict[str, str], templates: Optional[TemplateSet] = None) -> str:
    """Matching request; descriptions are JSON-encoded so quotes in them cannot break the layout."""
    return (templates or judge_templates())["match"].render(
        action=action,
        gt=json.dumps(gt, indent=1, ensure_ascii=False),
        pred=json.dumps(pred, indent=1, ensure_ascii=False),
        gt_keys=_keys(list(gt)),
        pred_keys=_keys(list(pred)),
    )


def flip_prompt(pairs: list[tuple[str, str]], templates: Optional[TemplateSet] = None) -> str:
    """Opposite-check request for a batch of (ground truth, predicted) statements."""
    items = [{"pair": i, "first": gt, "second": pred} for i, (gt, pred) in enumerate(pairs)]
    return (templates or judge_templates())["flip"].render(
        pairs=json.dumps(items, indent=1, ensure_ascii=False), n=str(len(pairs))
    )
