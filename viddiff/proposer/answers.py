"""Pydantic shapes of the proposer LLM's answers (validated by the chat client).

The shapes that depend on the request (how many differences, which stage
names, which ids) are built per request, so the JSON schema sent with it
declares every constraint pydantic then checks: list lengths, categories,
stage names, ids. A model that follows the schema is never re-asked.
Constraints JSON Schema cannot state (distinct names) are repaired by the
proposer, never refused.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, RootModel, StringConstraints, create_model

from viddiff.proposer import prompts
from viddiff.proposer.matching import best_match, normalise
from viddiff.schema import DimensionKey
from viddiff.schema import NumFrames

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, pattern=r"\S")]
"""A non-blank string, stripped: a name of only spaces is re-asked, not accepted as empty."""


class ProposedDifference(BaseModel):
    name: Text
    description: Text
    query_string: str = ""
    num_frames: NumFrames = "1"


class DifferencesAnswer(BaseModel):
    differences: list[ProposedDifference]


def differences_answer(n: Optional[int]) -> type[DifferencesAnswer]:
    """``DifferencesAnswer`` holding 1 to ``n`` differences (any number from 1 when ``n`` is ``None``)."""
    return create_model(
        "DifferencesAnswer", __base__=DifferencesAnswer, differences=(list[ProposedDifference], _items(1, n))
    )


def _folded(value: object) -> object:
    """``" Global "`` → ``"global"``; anything else is left for validation to reject."""
    return value.strip().lower() if isinstance(value, str) else value


def dimension_key(raw: str, threshold: float) -> Optional[str]:
    """The canonical dimension key an LLM meant (``"Playback technique"`` → ``"playback"``), or ``None``.

    A label naming exactly one key as a word is that key; otherwise a fuzzy match above ``threshold``
    (typos); anything else is rejected rather than guessed.
    """
    keys = list(prompts.DIMENSIONS)
    words = set(normalise(raw).split())
    named = [key for key in keys if key in words]
    if len(named) == 1:
        return named[0]
    idx = best_match(raw, keys, threshold)
    return None if idx is None else keys[idx]


Category = DimensionKey
"""The seven dimensions of describe mode (``viddiff.schema.DIMENSIONS``)."""


class DimensionDifference(ProposedDifference):
    """A describe-mode difference: also its dimension, scope, and the opposite phrasing."""

    category: Category
    scope: Annotated[Literal["local", "global"], BeforeValidator(_folded)]
    contrast: Text


class DimensionDifferencesAnswer(BaseModel):
    differences: list[DimensionDifference]


def dimension_differences_answer(n: int, threshold: float) -> type[DimensionDifferencesAnswer]:
    """1 to ``n`` differences; a category label naming a dimension loosely (``"Camera work"``) is folded to its key."""

    def fold(value: Any) -> Any:
        return (dimension_key(value, threshold) or value) if isinstance(value, str) else value

    item = create_model(
        "DimensionDifference",
        __base__=DimensionDifference,
        category=(Annotated[Category, BeforeValidator(fold)], ...),
    )
    return create_model(
        "DimensionDifferencesAnswer", __base__=DimensionDifferencesAnswer, differences=(list[item], _items(1, n))
    )


class ProposedStage(BaseModel):
    name: Text
    description: str = ""
    retrieval_strings: list[Text]


class StagesAnswer(BaseModel):
    stages: list[ProposedStage] = Field(min_length=1)


def stages_answer(max_stages: int, n_keys: int) -> type[StagesAnswer]:
    """1 to ``max_stages`` stages, each with at least ``n_keys`` distinct, non-blank retrieval strings."""
    stage = create_model(
        "ProposedStage",
        __base__=ProposedStage,
        retrieval_strings=(Annotated[list[Text], BeforeValidator(_distinct)], _items(n_keys, None, unique=True)),
    )
    return create_model("StagesAnswer", __base__=StagesAnswer, stages=(list[stage], _items(1, max_stages)))


def any_stages_answer() -> type[StagesAnswer]:
    """At least one stage, each with at least one non-blank string: what the release needs to run at all
    (``proposer.enforce_counts=false``, and the wholesale refinement)."""
    stage = create_model("ProposedStage", __base__=ProposedStage, retrieval_strings=(list[Text], _items(1, None)))
    return create_model("StagesAnswer", __base__=StagesAnswer, stages=(list[stage], _items(1, None)))


def refined_stages_answer(names: list[str], threshold: float) -> type[StagesAnswer]:
    """The refinement: one entry per known stage (a name near one of ``names`` is taken as it), each
    keeping at least one string. Named ``StagesAnswer``, the shape the prompt shows."""

    def known(value: Any) -> Any:
        if not isinstance(value, str):
            return value
        idx = best_match(value, names, threshold)
        return names[idx] if idx is not None else value

    stage = create_model(
        "RefinedStage",
        __base__=ProposedStage,
        name=(Annotated[Literal[tuple(names)], BeforeValidator(known)], ...),  # type: ignore[valid-type]
        retrieval_strings=(list[Text], _items(1, None)),
    )
    return create_model(
        "StagesAnswer", __base__=StagesAnswer, stages=(list[stage], _items(len(names), len(names)))
    )


class StageLink(BaseModel):
    # Difference ids are numerals ("0", "1"), which models often write as JSON numbers.
    model_config = ConfigDict(coerce_numbers_to_str=True)

    stage: str
    differences: list[str] = Field(default_factory=list)


class LinksAnswer(BaseModel):
    links: list[StageLink]


def links_answer(stage_names: list[str], ids: list[str]) -> type[LinksAnswer]:
    """Links whose schema lists the stage names and difference ids to use. Other spellings are not
    refused: the proposer repairs them by fuzzy matching (and notes it), so they are only suggested."""
    link = create_model(
        "StageLink",
        __base__=StageLink,
        stage=(str, Field(json_schema_extra={"enum": list(stage_names)})),
        differences=(list[Annotated[str, Field(json_schema_extra={"enum": list(ids)})]], Field(default_factory=list)),
    )
    return create_model("LinksAnswer", __base__=LinksAnswer, links=(list[link], ...))


class ClosedProposalAnswer(BaseModel):
    """``proposer.calls: one`` for given differences: stages and links in one answer."""

    stages: list[ProposedStage]
    links: list[StageLink]


class OpenProposalAnswer(BaseModel):
    """``proposer.calls: one`` in open mode: the differences first (links name them: they have no ids yet)."""

    differences: list[ProposedDifference]
    stages: list[ProposedStage]
    links: list[StageLink]


def proposal_answer(
    max_stages: int, n_keys: int, *, ids: Optional[list[str]] = None, n_differences: Optional[int] = None
) -> type[Union[ClosedProposalAnswer, OpenProposalAnswer]]:
    """The one-call answer, with the constraints of :func:`stages_answer` (and :func:`differences_answer` when
    ``n_differences`` is given); links may name ``ids`` (closed mode). Stage names are the answer's own, so
    links cannot list them in advance: the proposer repairs them by fuzzy matching. Named ``ProposalAnswer``."""
    stages = stages_answer(max_stages, n_keys).model_fields["stages"]
    link = StageLink
    if ids is not None:
        link = create_model(
            "StageLink",
            __base__=StageLink,
            differences=(list[Annotated[str, Field(json_schema_extra={"enum": list(ids)})]], Field(default_factory=list)),
        )
    fields: dict[str, Any] = {"stages": (stages.annotation, stages), "links": (list[link], ...)}
    if n_differences is None:
        return create_model("ProposalAnswer", __base__=ClosedProposalAnswer, **fields)
    differences = (list[ProposedDifference], _items(1, n_differences))
    return create_model("ProposalAnswer", __base__=OpenProposalAnswer, differences=differences, **fields)


class StageNameLinks(RootModel[dict[str, list[str]]]):
    """``proposer.link_by=name``, as released: stage name → names of the differences seen in it."""


def _items(low: int, high: Optional[int], *, unique: bool = False) -> Any:
    """A list field with ``low``..``high`` items, declared (``minItems``/``maxItems``) and checked."""
    extra = {"uniqueItems": True} if unique else None
    return Field(min_length=low, max_length=high, json_schema_extra=extra)


def _distinct(items: Any) -> Any:
    """``uniqueItems`` as JSON Schema means it (on the raw strings); pydantic only declares it.
    Strings equal up to case or spacing are merged by the proposer afterwards."""
    if isinstance(items, list) and all(isinstance(i, str) for i in items) and len(set(items)) != len(items):
        raise ValueError("the retrieval strings must be distinct")
    return items
