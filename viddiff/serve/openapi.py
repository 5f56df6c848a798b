"""The OpenAPI schema as generated clients need it, beyond what FastAPI writes from the routes.

Every error is declared as the JSON ``Problem`` it is (also on routes whose success is HTML or text), a 429
(and a 503) with its ``Retry-After`` and a 401 with its ``WWW-Authenticate``; the answer to ``POST /v1/comparisons``
links to the routes of the comparison it made. The schema also says which methods a path allows, for the
``Allow`` header of a 405 (Starlette names only the first route of a path, so ``DELETE`` went unsaid).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from fastapi import FastAPI
from fastapi.routing import APIRoute
from pydantic import TypeAdapter

from viddiff.serve.models import ServiceEvent

PROBLEM = {"$ref": "#/components/schemas/Problem"}
REF_TEMPLATE = "#/components/schemas/{model}"
EVENTS_PATH = "/v1/comparisons/{job_id}/events"
FASTAPI_VALIDATION_ERROR = "Validation Error"
"""The description of the 422 FastAPI adds to every route with parameters; here no path or header parameter
can fail its check (they are plain text), so where a route did not declare its own 422 that one is dropped."""
_HEADERS = {
    "429": {"Retry-After": {"description": "seconds to wait before trying again", "schema": {"type": "integer"}}},
    "503": {"Retry-After": {"description": "seconds to wait before trying again", "schema": {"type": "integer"}}},
    "401": {"WWW-Authenticate": {"description": "Bearer", "schema": {"type": "string"}}},
}
_CREATED_LINKS = {
    "GetComparison": "get_comparison",
    "GetComparisonEvents": "get_comparison_events",
    "GetComparisonReport": "get_comparison_report",
    "DeleteComparison": "delete_comparison",
}
_HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def operation_id(route: APIRoute) -> str:
    """The route's function name: what a generated client names its call (``create_comparison``)."""
    return route.name


def refine_schema(app: FastAPI) -> None:
    """Make ``app.openapi()`` answer the refined schema (built once, on first use)."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            _refine(generate())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def allowed_methods(schema: dict[str, Any], path: str) -> Optional[list[str]]:
    """The methods the schema gives the path (``HEAD`` with ``GET``), or ``None`` for a path outside it."""
    for template, item in schema.get("paths", {}).items():
        pattern = re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template))
        if re.fullmatch(pattern, path):
            methods = [m.upper() for m in item if m in _HTTP_METHODS]
            return sorted({*methods, *(["HEAD"] if "GET" in methods else [])})
    return None


def _refine(schema: dict[str, Any]) -> None:
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    for item in schema.get("paths", {}).values():
        for operation in item.values():
            responses = operation.get("responses", {})
            if responses.get("422", {}).get("description") == FASTAPI_VALIDATION_ERROR:
                del responses["422"]
            for status, response in responses.items():
                if status.startswith(("4", "5")):
                    response["content"] = {"application/json": {"schema": PROBLEM}}
                    if status in _HEADERS:
                        response["headers"] = _HEADERS[status]
    for unused in ("HTTPValidationError", "ValidationError"):
        components.pop(unused, None)
    events = TypeAdapter(ServiceEvent).json_schema(ref_template=REF_TEMPLATE)
    for name, model in events.pop("$defs", {}).items():
        components.setdefault(name, model)
    stream = schema["paths"][EVENTS_PATH]["get"]["responses"]["200"]
    stream["content"] = {"text/event-stream": {"schema": events}}
    created = schema["paths"]["/v1/comparisons"]["post"]["responses"]["202"]
    created["links"] = {
        name: {"operationId": target, "parameters": {"job_id": "$response.body#/id"}}
        for name, target in _CREATED_LINKS.items()
    }
