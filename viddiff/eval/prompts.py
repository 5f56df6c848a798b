"""Judge prompts for open-mode evaluation (after the paper's appendix F.2).

Two prompts: *matching* pairs each ground-truth difference with at most one
predicted difference describing the same visual property; *flip* says, per
matched pair, whether the two statements agree (0) or are opposites (1).
``PROMPT_VERSION`` is recorded in ``metrics.json`` and must change whenever
the wording or answer format changes, since numbers from different prompts
are not comparable.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, create_model

PROMPT_VERSION = "viddiff-eval-2"
"""2: the matching is an object keyed by ground-truth key (its JSON schema names the exact keys)."""

JUDGE_SYSTEM = (
    "You grade a system that describes how two videos of the same action differ. "
    "You compare statements carefully and literally, and you answer only in JSON."
)

_MATCH_TEMPLATE = """\
Action: {action}

Below are two numbered collections of statements about how one performance of this action differs from another.
G holds the ground-truth differences written by expert annotators. P holds differences predicted by a system.

G (ground truth):
{gt}

P (predicted):
{pred}

For each ground-truth difference in G, choose the predicted difference in P that describes the same visual \
property of the action: the same body part, movement or quality being compared. A predicted statement phrased \
as the opposite of the ground truth still describes the same property and is a match (for example "the stance \
is wider" and "the stance is narrower"). If no predicted difference describes that property, answer null.

Rules:
- Give exactly one entry for every key of G: {gt_keys}.
- Each key of P ({pred_keys}) may be used for at most one ground-truth difference. If several ground-truth \
differences could take the same predicted difference, give it to the closest one and answer null for the others.
- A statement about a related but different property is not a match.

Answer with a JSON object {{"matches": {{"<key of G>": "<key of P>" or null, ...}}}} with one entry per key of G."""

_FLIP_TEMPLATE = """\
Each item below is a pair of statements about how two videos of the same action differ. \
Both statements of a pair describe the same property of the action.

For each pair, answer 0 if the two statements say the same thing (both would be true of the same video), \
or 1 if one states the opposite of the other (for example "the stance is wider" and "the stance is narrower").

Pairs:
{pairs}

Answer with a JSON object {{"results": [0 or 1, ...]}} with exactly {n} numbers, one per pair, in the order given."""


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


def match_prompt(action: str, gt: dict[str, str], pred: dict[str, str]) -> str:
    """Matching request; descriptions are JSON-encoded so quotes in them cannot break the layout."""
    return _MATCH_TEMPLATE.format(
        action=action,
        gt=json.dumps(gt, indent=1, ensure_ascii=False),
        pred=json.dumps(pred, indent=1, ensure_ascii=False),
        gt_keys=_keys(list(gt)),
        pred_keys=_keys(list(pred)),
    )


def flip_prompt(pairs: list[tuple[str, str]]) -> str:
    """Opposite-check request for a batch of (ground truth, predicted) statements."""
    items = [{"pair": i, "first": gt, "second": pred} for i, (gt, pred) in enumerate(pairs)]
    return _FLIP_TEMPLATE.format(pairs=json.dumps(items, indent=1, ensure_ascii=False), n=len(pairs))
