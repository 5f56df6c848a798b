"""What a failed sample leaves behind, and which failures stop a whole run.

A sample's failure is recorded for that sample only: one line in the
append-only ``failures.jsonl`` (kept across resumes, so the calls a failed
attempt paid for stay in ``usage.json``), and, for the samples still
unfinished when a run ends, ``errors.json``. A run stops early only on an
error that every other sample would hit as well (:func:`is_fatal`).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from viddiff.errors import (
    CostLimitError,
    EndpointError,
    InvalidAnswerError,
    ModelLoadError,
    OutputError,
    PoseUnavailableError,
    VideoError,
    ViddiffError,
)
from viddiff.schema import StageUsage
from viddiff.store import JsonlLog

log = logging.getLogger(__name__)
FAILURES_FILE = "failures.jsonl"
ERRORS_FILE = "errors.json"
_ANSWER_KEPT = 500

FailureKind = Literal["endpoint", "invalid_answer", "video", "input", "internal", "interrupted"]


class SampleFailure(BaseModel):
    """One failed attempt at one sample: a line of ``failures.jsonl``, an entry of ``errors.json``."""

    model_config = ConfigDict(extra="forbid")

    sample_key: str
    index: int
    stage: str
    """Where it failed: ``video`` (reading the pair) or a method stage (``proposer``, ``differencer``, ...)."""
    kind: FailureKind
    error: str
    """One line saying what went wrong and what to do."""
    status: Optional[int] = None
    """HTTP status of the endpoint's refusal, if that was the cause."""
    server_message: Optional[str] = None
    """The endpoint's own words, if it refused."""
    last_answer: Optional[str] = None
    """The start of the model's last answer, if the answers were invalid."""
    usage: dict[str, StageUsage] = Field(default_factory=dict)
    """Model calls this attempt made before it failed (they were paid for)."""


class FailureLog:
    """``failures.jsonl`` of one run directory."""

    def __init__(self, out_dir: Path):
        self.path = Path(out_dir) / FAILURES_FILE
        self._log = JsonlLog(self.path, SampleFailure)

    def has_records(self) -> bool:
        return self._log.has_records()

    def load(self) -> list[SampleFailure]:
        return self._log.load()

    def append(self, failure: SampleFailure) -> None:
        self._log.append(failure)


def is_fatal(exc: BaseException) -> bool:
    """Errors that every sample would hit: stop the run instead of failing each sample in turn."""
    if isinstance(exc, EndpointError):
        return exc.fatal
    return isinstance(exc, (ModelLoadError, OutputError, CostLimitError, PoseUnavailableError))


def describe_failure(
    exc: BaseException, *, sample_key: str, index: int, stage: str, usage: dict[str, StageUsage]
) -> SampleFailure:
    """The record of ``exc`` ending one sample; ``stage`` is where the sample was when it failed."""
    stage = getattr(exc, "stage", None) or stage
    common = dict(sample_key=sample_key, index=index, stage=stage, usage=usage)
    if isinstance(exc, EndpointError):
        return SampleFailure(
            **common, kind="endpoint", error=str(exc), status=exc.status, server_message=exc.server_message
        )
    if isinstance(exc, InvalidAnswerError):
        return SampleFailure(**common, kind="invalid_answer", error=str(exc), last_answer=exc.raw[:_ANSWER_KEPT])
    if isinstance(exc, VideoError):
        return SampleFailure(**common, kind="video", error=str(exc))
    if isinstance(exc, ViddiffError):  # e.g. a request over endpoints.max_prompt_chars
        return SampleFailure(**common, kind="input", error=str(exc))
    detail = " ".join(str(exc).split())[:300]
    return SampleFailure(
        **common,
        kind="internal",
        error=f"internal error {type(exc).__name__}: {detail} (a bug: please report it; --debug shows the traceback)",
    )


def interrupted(sample_key: str, index: int, stage: str, usage: dict[str, StageUsage], why: str) -> SampleFailure:
    """A sample cut off by a run stopping (its calls were still paid for)."""
    return SampleFailure(
        sample_key=sample_key, index=index, stage=stage, kind="interrupted", error=f"interrupted: {why}", usage=usage
    )
