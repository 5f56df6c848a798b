"""Answer schemas of the LMM baseline, validated with pydantic."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, create_model

AB = Literal["a", "b"]


def closed_answer_model(keys: list[str]) -> type[BaseModel]:
    """Schema ``{key: "a"|"b"}`` with exactly ``keys``, all required, nothing else.

    Built per sample so a server with structured outputs (OpenAI, vLLM,
    Ollama) is constrained to answer every statement; a missing or unknown
    key fails validation and is re-asked by the chat client. The class is
    named ``ClosedAnswer`` because the response-format name comes from it.
    """
    fields = {f"key_{i}": (AB, Field(alias=key)) for i, key in enumerate(keys)}
    return create_model("ClosedAnswer", __config__=ConfigDict(extra="forbid"), **fields)


def closed_letters(answer: BaseModel) -> dict[str, str]:
    """``{difference key: letter}`` of a validated :func:`closed_answer_model` answer."""
    return answer.model_dump(by_alias=True)


class OpenItem(BaseModel):
    description: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
    prediction: AB


class OpenAnswer(BaseModel):
    """Open mode: proposed differences with letters. The length is not capped here:
    more than ``N_diff`` items is for the evaluation's ``n_diff_policy`` to judge."""

    differences: list[OpenItem]
