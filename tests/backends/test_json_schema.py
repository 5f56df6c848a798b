"""The schema sent with a request asks for exactly the answer's keys."""

from __future__ import annotations

from typing import Optional

from pydantic import BaseModel

from viddiff.backends.json_schema import declared_schema


class Inner(BaseModel):
    text: str = ""


class Outer(BaseModel):
    inner: Inner
    extra: Optional[dict[str, int]] = None


def test_every_object_lists_all_keys_as_required_and_forbids_others():
    schema = declared_schema(Outer)
    assert schema["required"] == ["inner", "extra"] and schema["additionalProperties"] is False
    inner = schema["$defs"]["Inner"]
    assert inner["required"] == ["text"] and inner["additionalProperties"] is False
    # A free-form mapping keeps its own value schema.
    mapping = [s for s in schema["properties"]["extra"]["anyOf"] if s.get("type") == "object"][0]
    assert mapping["additionalProperties"] == {"type": "integer"}
