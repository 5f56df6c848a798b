"""The schema-following stand-in model builds valid, small instances and refuses schemas it cannot honour."""

from __future__ import annotations

from typing import Literal, Optional

import pytest
from pydantic import BaseModel, Field

from viddiff.backends.json_schema import declared_schema
from viddiff.eval.prompts import match_answer
from viddiff.proposer.answers import stages_answer
from viddiff.testing.schema_model import minimal_instance


class Item(BaseModel):
    name: str = Field(min_length=3, pattern=r"\S")
    kind: Literal["x", "y"] = "x"
    weight: int = Field(default=5, ge=2)


class Answer(BaseModel):
    items: list[Item] = Field(min_length=2, max_length=4)
    note: Optional[str] = None
    flag: bool = True


def test_instances_validate_against_the_model_they_come_from():
    instance = minimal_instance(declared_schema(Answer))
    assert Answer.model_validate(instance)
    assert len(instance["items"]) == 2 and instance["note"] is None and instance["flag"] is False
    assert [i["kind"] for i in instance["items"]] == ["x", "y"]  # an enum value is not repeated while others remain
    assert instance["items"][0]["name"] != instance["items"][1]["name"]


def test_unique_items_and_nullable_enums():
    stages = minimal_instance(declared_schema(stages_answer(max_stages=5, n_keys=3)))
    strings = stages["stages"][0]["retrieval_strings"]
    assert len(stages["stages"]) == 1 and len(set(strings)) == len(strings) == 3
    matches = minimal_instance(declared_schema(match_answer(["0", "1", "2"], ["0"])))["matches"]
    assert matches == {"0": "0", "1": None, "2": None}


@pytest.mark.parametrize(
    "schema, problem",
    [
        ({"type": "string", "format": "email"}, "not supported"),
        ({"type": "array", "minItems": 3, "maxItems": 2, "items": {"type": "string"}}, "minItems 3 > maxItems 2"),
        ({"type": "array", "minItems": 2, "uniqueItems": True, "items": {"enum": ["a"]}}, "distinct"),
        ({"type": "string", "pattern": "^[0-9]+$"}, "matching"),
    ],
)
def test_schemas_it_cannot_honour_raise(schema, problem):
    with pytest.raises(ValueError, match=problem):
        minimal_instance(schema)
