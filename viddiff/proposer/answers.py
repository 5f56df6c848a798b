"""Pydantic shapes of the proposer LLM's answers (validated by the chat client)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from viddiff.schema import NumFrames


class ProposedDifference(BaseModel):
    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    query_string: str = ""
    num_frames: NumFrames = "1"


class DifferencesAnswer(BaseModel):
    differences: list[ProposedDifference]


class ProposedStage(BaseModel):
    name: str = Field(min_length=1)
    description: str = ""
    retrieval_strings: list[str]


class StagesAnswer(BaseModel):
    stages: list[ProposedStage] = Field(min_length=1)


class StageLink(BaseModel):
    stage: str
    differences: list[str] = Field(default_factory=list)


class LinksAnswer(BaseModel):
    links: list[StageLink]
