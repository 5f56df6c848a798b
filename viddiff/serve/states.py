"""A comparison job's states and progress: what the job store keeps, without the result models.

Apart from :mod:`viddiff.serve.models` so that the store (and ``viddiff serve keys``) need not import the
Python API and the method behind it.
"""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, Field

JobStatus = Literal["queued", "running", "done", "failed", "cancelled"]
FINISHED: frozenset[str] = frozenset({"done", "failed", "cancelled"})


class Progress(BaseModel):
    """How far a comparison is: its last step, and verdicts decided out of the differences to check."""

    step: Literal["queued", "proposing", "localizing", "judging", "finished"] = "queued"
    differences: Optional[int] = None
    """How many differences will be checked (known once the proposal is made)."""
    decided: int = 0
    attempts: int = 0
    """Times a worker started it (more than 1 after a restart re-ran it)."""


class WebhookAttempt(BaseModel):
    """One try at delivering a webhook."""

    at: float
    status_code: Optional[int] = None
    """The receiver's HTTP status (``None``: no answer, ``error`` says why)."""
    error: Optional[str] = None


class Webhook(BaseModel):
    """The webhook of a comparison: where it goes, and each try so far (docs/serve.md, "Webhooks")."""

    url: str
    state: Literal["pending", "delivered", "failed", "refused"] = "pending"
    """``pending``: not sent yet, or a retry is due; ``delivered``: answered 2xx; ``failed``: every try failed;
    ``refused``: the address is not one the server may call (``serve.webhook_allow``)."""
    attempts: list[WebhookAttempt] = Field(default_factory=list)
    error: Optional[str] = None
    """Why it was refused or given up."""
