"""What every resource's routes share: the key check, the error answers, multipart forms for OpenAPI."""

from __future__ import annotations

from typing import Callable, Literal, Optional

from fastapi import Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from viddiff.serve import access_log
from viddiff.serve.models import Problem
from viddiff.serve.service import Service

BEARER = HTTPBearer(
    auto_error=False, scheme_name="bearer",
    description="An API key (viddiff serve keys create NAME), sent as 'Authorization: Bearer KEY'. /metrics takes a "
    "key made with --scope metrics, or the token serve.metrics_token_env names.",
)
"""Declares the key to OpenAPI (generated clients take it once; /docs has an Authorize button). The check itself
is :meth:`Service.authenticate`, which reads the header so that it can say what is wrong with it."""

_ERROR_MEANINGS = {
    400: "the body is no well-formed multipart form",
    401: "no key, or an unknown or revoked one",
    403: "the key lacks the scope this route needs",
    404: "no such resource for this key",
    409: "the resource is not in a state for this",
    413: "the body is larger than serve.max_upload_bytes",
    415: "a file is no video container",
    422: "a field or parameter is missing or wrong, or a video is over a limit",
    429: "too many requests or queued comparisons for this key, or for the server",
    503: "the job store was locked by another process for longer than serve.store_busy_timeout_s; retry",
}
KEYED = (401, 403, 429)
"""What every route that needs a key may answer."""
WRITES = (503,)
"""What a route that writes to the job store may answer besides."""


def errors(*statuses: int) -> dict[int, dict]:
    """The error answers of a route (each a JSON :class:`Problem`; see :mod:`viddiff.serve.openapi`)."""
    return {status: {"model": Problem, "description": _ERROR_MEANINGS[status]} for status in sorted(statuses)}

FILE = {"type": "string", "format": "binary"}


def form_schema(properties: dict, required: list[str]) -> dict:
    """``openapi_extra`` for a multipart form (read by :mod:`viddiff.serve.uploads`, not by FastAPI)."""
    return {
        "requestBody": {
            "required": True,
            "content": {"multipart/form-data": {"schema": {"type": "object", "properties": properties, "required": required}}},
        }
    }


def owner_dependency(service: Service, scope: Literal["app", "metrics"] = "app") -> Callable[..., str]:
    """The dependency naming the key (``Authorization: Bearer KEY``), which must hold ``scope``; the name goes
    into the request's access line."""
    check = service.authenticate_operator if scope == "metrics" else service.authenticate

    async def owner(request: Request, _: Optional[HTTPAuthorizationCredentials] = Security(BEARER)) -> str:
        who = await check(request.headers.get("authorization"), request.client.host if request.client else None)
        access_log.tag(request.scope, key=who)
        return who

    return owner
