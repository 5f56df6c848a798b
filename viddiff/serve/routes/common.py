"""What every resource's routes share: the key check, the error answers, multipart forms for OpenAPI."""

from __future__ import annotations

from typing import Callable, Optional

from fastapi import Header, Request

from viddiff.serve.models import Problem
from viddiff.serve.service import Service

ERRORS = {status: {"model": Problem} for status in (400, 401, 404, 409, 413, 415, 422, 429)}
FILE = {"type": "string", "format": "binary"}


def form_schema(properties: dict, required: list[str]) -> dict:
    """``openapi_extra`` for a multipart form (read by :mod:`viddiff.serve.uploads`, not by FastAPI)."""
    return {
        "requestBody": {
            "required": True,
            "content": {"multipart/form-data": {"schema": {"type": "object", "properties": properties, "required": required}}},
        }
    }


def owner_dependency(service: Service) -> Callable[..., str]:
    """The dependency naming the key's owner (``Authorization: Bearer KEY``)."""

    def owner(request: Request, authorization: Optional[str] = Header(default=None)) -> str:
        return service.authenticate(authorization, request.client.host if request.client else None)

    return owner
