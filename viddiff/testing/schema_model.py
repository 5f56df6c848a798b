"""A stand-in for a structured-output model: it answers with a small valid instance of the request's schema.

Servers with constrained decoding (OpenAI structured outputs, vLLM, Ollama)
can only produce what the ``json_schema`` response format allows. This
responder does the same, knowing nothing else about the request, so a test
driving a stage with it shows whether the stage accepts every answer its
own schema allows: any check the code makes that the schema does not state
shows up as a re-ask (or a failure) here.

The instance is minimal (``minItems`` items, optional branches ``null``,
the first allowed value), with two habits of a sensible model: it never
repeats a string, and it does not give an enum value twice while unused
ones remain (then it takes ``null`` where allowed). Supported keywords:
``type``, ``properties``, ``required``, ``items``, ``minItems``,
``maxItems``, ``uniqueItems``, ``enum``, ``const``, ``anyOf``/``oneOf``,
``minLength``, ``pattern``, ``minimum``, ``$ref`` to ``$defs``. Anything
else raises, so a schema it cannot honour never passes silently.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from typing import Any

from viddiff.testing.fake_openai import ChatRequest

FREE_TEXT_ANSWER = "Both videos show the same scene in the same way."
"""The answer to a request without a response format (free text: nothing to follow)."""

_KNOWN = {
    "type", "properties", "required", "additionalProperties", "items", "minItems", "maxItems", "uniqueItems",
    "enum", "const", "anyOf", "oneOf", "minLength", "pattern", "minimum", "$ref", "$defs", "title", "description",
    "default",
}


class SchemaFollowingModel:
    """Responder for ``FakeOpenAIServer``; :attr:`schemas` keeps every schema it was asked to follow."""

    def __init__(self) -> None:
        self.schemas: list[dict[str, Any]] = []

    def __call__(self, req: ChatRequest) -> str:
        if req.response_format is None:
            return FREE_TEXT_ANSWER
        schema = req.json_schema
        if schema is None:
            raise ValueError("a json_object request carries no schema to follow; use response_format=json_schema")
        self.schemas.append(schema)
        return json.dumps(minimal_instance(schema))


def minimal_instance(schema: dict[str, Any]) -> Any:
    """A small instance of ``schema`` (see the module docstring for what "small" means)."""
    return _Builder(schema).build(schema)


class _Builder:
    def __init__(self, root: dict[str, Any]):
        self.root = root
        self.enum_uses: dict[str, int] = defaultdict(int)
        self.strings = 0

    def build(self, node: dict[str, Any]) -> Any:
        node = self._resolve(node)
        unknown = set(node) - _KNOWN
        if unknown:
            raise ValueError(f"schema keywords not supported: {sorted(unknown)}")
        if "const" in node:
            return node["const"]
        if "enum" in node:
            return self._enum(node["enum"])
        for key in ("anyOf", "oneOf"):
            if key in node:
                return self._choice([self._resolve(n) for n in node[key]])
        kind = node.get("type")
        if kind == "object":
            return {name: self.build(sub) for name, sub in node.get("properties", {}).items()}
        if kind == "array":
            return self._array(node)
        if kind == "string":
            return self._string(node)
        if kind in ("integer", "number"):
            return node.get("minimum", 0)
        if kind == "boolean":
            return False
        if kind == "null":
            return None
        raise ValueError(f"cannot build an instance of {node}")

    def _resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        ref = node.get("$ref")
        if ref is None:
            return node
        prefix = "#/$defs/"
        if not ref.startswith(prefix):
            raise ValueError(f"unsupported $ref {ref!r}")
        return self._resolve(self.root["$defs"][ref[len(prefix) :]])

    def _enum(self, values: list[Any]) -> Any:
        key = json.dumps(values)
        use = self.enum_uses[key]
        self.enum_uses[key] += 1
        return values[use % len(values)]

    def _fresh_enum_left(self, node: dict[str, Any]) -> bool:
        return "enum" in node and self.enum_uses[json.dumps(node["enum"])] < len(node["enum"])

    def _choice(self, options: list[dict[str, Any]]) -> Any:
        nullable = any(o.get("type") == "null" for o in options)
        others = [o for o in options if o.get("type") != "null"]
        for option in others:
            if self._fresh_enum_left(option):
                return self.build(option)
        if nullable:
            return None
        return self.build(others[0])

    def _array(self, node: dict[str, Any]) -> list[Any]:
        n = node.get("minItems", 0)
        if node.get("maxItems") is not None and n > node["maxItems"]:
            raise ValueError(f"minItems {n} > maxItems {node['maxItems']}")
        items = [self.build(node.get("items", {"type": "string"})) for _ in range(n)]
        if node.get("uniqueItems") and len({json.dumps(i) for i in items}) != len(items):
            raise ValueError(f"cannot make {n} distinct items of {node.get('items')}")
        return items

    def _string(self, node: dict[str, Any]) -> str:
        self.strings += 1
        text = f"text {self.strings}".ljust(node.get("minLength", 0), "x")
        pattern = node.get("pattern")
        if pattern is not None and not re.search(pattern, text):
            raise ValueError(f"cannot make a string matching {pattern!r}")
        return text
