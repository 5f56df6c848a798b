"""A comparison job's states and progress: what the job store keeps, without the result models.

Apart from :mod:`viddiff.serve.models` so that the store (and ``viddiff serve keys``) need not import the
Python API and the method behind it.
"""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel

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
