"""The service's request and response bodies: pydantic models, so the OpenAPI page is generated from them.

Results are :class:`viddiff.api.ComparisonResult` and events the :data:`viddiff.api.CompareEvent` s, exactly
as the Python API returns them. A job's states and progress are in :mod:`viddiff.serve.states`.
"""

from __future__ import annotations

from typing import Annotated, Literal, Optional, Union

from pydantic import BaseModel, Field

from viddiff.api import ComparisonResult, DifferenceResult, ProposalEvent, ResultEvent, SegmentationEvent, VerdictEvent
from viddiff.serve.states import JobStatus, Progress, Webhook


class Links(BaseModel):
    self: str
    events: str
    report: str


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
    webhook: Optional[Webhook] = None
    """Its webhook, when a ``callback_url`` was given (with the comparison or the key)."""
    links: Links


class VerdictCounts(BaseModel):
    """A comparison's verdicts so far, by letter."""

    differences: Optional[int] = None
    """How many differences will be checked (known once the proposal is made)."""
    decided: int = 0
    a: int = 0
    b: int = 0
    c: int = 0
    unanswered: int = 0
    """Verdicts the model never answered validly."""


class ComparisonSummary(BaseModel):
    """One comparison in a list: what it is and how far it got, without its result (``links.self`` has it)."""

    id: str
    status: JobStatus
    action: str
    mode: Literal["closed", "open"]
    created_at: float
    finished_at: Optional[float] = None
    counts: VerdictCounts
    links: Links


class ComparisonList(BaseModel):
    """A page of ``GET /v1/comparisons``: newest first."""

    comparisons: list[ComparisonSummary]
    next: Optional[str] = None
    """The next page (path and query), ``None`` on the last page."""


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


class Calibration(BaseModel):
    """An uploaded calibration (``POST /v1/calibrations``): the cameras of a two-view (or more) performance, to be
    referenced by id in comparisons (``calibration_a_id``, ``calibration_b_id``)."""

    id: str
    filename: str
    bytes: int
    format: Literal["toml", "qca"]
    """Judged from the content: ``toml`` (Pose2Sim's, or ``viddiff calibrate``'s) or ``qca`` (Qualisys ``.qca.txt``)."""
    cameras: int
    """How many cameras it holds; a performance using it has that many videos (its main video, then its views)."""
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
    status: Literal["starting", "ok", "degraded", "failed"] = "ok"
    """``starting`` while the models load (``/readyz`` answers 503 until ``ok``); ``degraded``: fewer Ray actors
    live than configured (they are being replaced)."""
    queued: int
    running: int
    actors: Optional[ActorsHealth] = None
    """With ``--ray`` only."""


class ReportLink(BaseModel):
    """``POST /v1/comparisons/{id}/report-link``: a URL that opens the report in a browser tab, no key needed."""

    url: str
    expires_at: int
    """Unix seconds; the link also dies with the server process that made it."""


class FailedEvent(BaseModel):
    """Last event of a comparison that failed."""

    type: Literal["failed"] = "failed"
    error: Optional[str] = None
    """Why, worded as ``viddiff compare`` words it."""


class CancelledEvent(BaseModel):
    """Last event of a comparison that was cancelled (or deleted)."""

    type: Literal["cancelled"] = "cancelled"
    error: Optional[str] = None


ServiceEvent = Annotated[
    Union[ProposalEvent, SegmentationEvent, VerdictEvent, ResultEvent, FailedEvent, CancelledEvent],
    Field(discriminator="type"),
]
"""The ``data`` of each event of ``GET /v1/comparisons/{id}/events``: ``VidDiff.astream``'s events, then a
failure or cancellation ends the stream instead of a result."""
