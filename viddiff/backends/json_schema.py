"""The JSON schema sent with a request: the answer model's own schema, with its keys made exact.

Answer models may give fields defaults so that a sloppy answer (``json_object``
mode, no schema enforcement) still parses, but a model that follows the
schema is asked for every key and nothing else: each object lists all its
properties as required and forbids others. Everything else (enums, lengths,
patterns) comes from the pydantic model, which also checks it, so what is
declared and what is checked cannot drift apart.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


def declared_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON schema with every object's keys exact (all required, no others)."""
    return _exact_keys(model.model_json_schema())


def _exact_keys(node: Any) -> Any:
    if isinstance(node, list):
        return [_exact_keys(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _exact_keys(value) for key, value in node.items()}
    properties = out.get("properties")
    if out.get("type") == "object" and isinstance(properties, dict):
        out["required"] = list(properties)
        out.setdefault("additionalProperties", False)
    return out
