"""``GET /v1/comparisons``: a key's comparisons a page at a time, as summaries (the results stay behind their
own links), with the next page's link; a cursor is the last id of a page, so new comparisons never shift it."""

from __future__ import annotations

from typing import Optional
from urllib.parse import urlencode

from viddiff.serve.errors import ApiError
from viddiff.serve.jobs import JobRow, JobStore
from viddiff.serve.models import ComparisonList, ComparisonSummary, VerdictCounts
from viddiff.serve.service import links

DEFAULT_PAGE = 50
MAX_PAGE = 200


def comparison_page(
    store: JobStore, owner: str, *, limit: int = DEFAULT_PAGE, after: Optional[str] = None, status: Optional[str] = None
) -> ComparisonList:
    cursor = None
    if after is not None:
        cursor = store.job(after, owner)
        if cursor is None:
            raise ApiError(404, f"after: no comparison {after!r} (deleted or expired): list again without after")
    rows = store.jobs(owner, limit + 1, after=cursor, status=status)
    page = rows[:limit]
    counts = store.verdict_counts([row.id for row in page])
    following = None
    if len(rows) > limit:
        query = {"limit": limit, "after": page[-1].id, **({"status": status} if status else {})}
        following = f"/v1/comparisons?{urlencode(query)}"
    return ComparisonList(comparisons=[_summary(row, counts.get(row.id, {})) for row in page], next=following)


def _summary(row: JobRow, letters: dict[Optional[str], int]) -> ComparisonSummary:
    verdicts = VerdictCounts(
        differences=row.progress.differences, decided=sum(letters.values()), a=letters.get("a", 0),
        b=letters.get("b", 0), c=letters.get("c", 0), unanswered=letters.get(None, 0),
    )
    return ComparisonSummary(
        id=row.id, status=row.status, action=row.action, mode=row.mode, created_at=row.created_at,
        finished_at=row.finished_at, counts=verdicts, links=links(row.id),
    )
