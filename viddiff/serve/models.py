"""The service's request and response bodies: pydantic models, so the OpenAPI page is generated from them.

Results are :class:`viddiff.api.ComparisonResult` and events the :data:`viddiff.api.CompareEvent` s, exactly
as the Python API returns them.
"""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, Field

from viddiff.api import ComparisonResult, DifferenceResult

JobStatus = Literal["queued", "running", "done", "failed", "cancelled"]
FINISHED: frozenset[str] = frozenset({"done", "failed", "cancelled"})


class Links(BaseModel):
    self: str
    events: str
    report: str


class Progress(BaseModel):
    """How far a comparison is: its last step, and verdicts decided out of the differences to check."""

    step: Literal["queued", "proposing", "localizing", "judging", "finished"] = "queued"
    differences: Optional[int] = None
    """How many differences will be checked (known once the proposal is made)."""
    decided: int = 0
    attempts: int = 0
    """Times a worker started it (more than 1 after a restart re-ran it)."""


class ComparisonCreated(BaseModel):
    """The answer to ``POST /v1/comparisons`` (202)."""

    id: str
    status: JobStatus
    links: Links


class Comparison(BaseModel):
    """One comparison job: ``GET /v1/comparisons/{id}``."""

    id: str
    status: JobStatus
    action: str
    mode: Literal["closed", "open"]
    created_at: float
    started_at: Optional[float] = None
    finished_at: Optional[float] = None
    progress: Progress
    result: Optional[ComparisonResult] = None
    """The whole result once ``done``, identical to what ``VidDiff.acompare`` returns."""
    partial: list[DifferenceResult] = Field(default_factory=list)
    """Verdicts decided before the job failed or was cancelled (and, while running, so far)."""
    error: Optional[str] = None
    """Why it failed, worded as ``viddiff compare`` words it after ``viddiff: error:``."""
    report: bool = False
    """Whether an HTML report was asked for (``GET .../report`` once done)."""
    links: Links


class ComparisonList(BaseModel):
    comparisons: list[Comparison]


class Video(BaseModel):
    """An uploaded video (``POST /v1/videos``), to be referenced by id in comparisons."""

    id: str
    filename: str
    bytes: int
    kind: str
    """The container, judged from the content: ``mp4`` (MOV too), ``matroska`` (WebM too) or ``avi``."""
    duration_s: Optional[float]
    width: Optional[int]
    height: Optional[int]
    n_frames: Optional[int]
    created_at: float


class Problem(BaseModel):
    """Every 4xx/5xx answer: what is wrong and what to do."""

    detail: str


class ActorsHealth(BaseModel):
    """The Ray actors of ``viddiff serve --ray``: fewer live than configured while dead ones are replaced."""

    configured: int
    live: int
    by_node: dict[str, int] = Field(default_factory=dict, description="Live actors per Ray node (its IP address).")


class Health(BaseModel):
    status: Literal["ok", "degraded"] = "ok"
    """``degraded``: fewer Ray actors live than configured (they are being replaced)."""
    queued: int
    running: int
    actors: Optional[ActorsHealth] = None
    """With ``--ray`` only."""
