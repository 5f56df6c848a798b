"""Pydantic shapes of the proposer LLM's answers (validated by the chat client)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints

from viddiff.schema import NumFrames

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
"""A non-blank string, stripped: a name of only spaces is re-asked, not accepted as empty."""


class ProposedDifference(BaseModel):
    name: Text
    description: Text
    query_string: str = ""
    num_frames: NumFrames = "1"


class DifferencesAnswer(BaseModel):
    differences: list[ProposedDifference]


def _folded(value: object) -> object:
    """``" Global "`` → ``"global"``; anything else is left for validation to reject."""
    return value.strip().lower() if isinstance(value, str) else value


class DimensionDifference(ProposedDifference):
    """A describe-mode difference: also its ViDiC-1K dimension, scope, and the opposite phrasing."""

    category: Text
    """Checked against the seven dimensions by the proposer (which also accepts display-name variants)."""
    scope: Annotated[Literal["local", "global"], BeforeValidator(_folded)]
    contrast: Text


class DimensionDifferencesAnswer(BaseModel):
    differences: list[DimensionDifference]


class ProposedStage(BaseModel):
    name: Text
    description: str = ""
    retrieval_strings: list[str]


class StagesAnswer(BaseModel):
    stages: list[ProposedStage] = Field(min_length=1)


class StageLink(BaseModel):
    # Difference ids are numerals ("0", "1"), which models often write as JSON numbers.
    model_config = ConfigDict(coerce_numbers_to_str=True)

    stage: str
    differences: list[str] = Field(default_factory=list)


class LinksAnswer(BaseModel):
    links: list[StageLink]
