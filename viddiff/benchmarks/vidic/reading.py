"""How the released ViDiC-1K judge script reads a reply (``vidic.answer_reading=as_released``; pure functions).

The release asks for free text (no response format) and never asks again. It takes the first JSON object it
can parse, from a ```` ```json ```` fenced block and then from the whole reply, and uses its ``answer`` as
written (``error`` when the key is missing). Failing that it looks for ``answer: yes|no|unsure`` anywhere,
case-insensitively, and lower-cases what it found; nothing found is ``error``. Its tally then compares the
answer lower-cased, but not stripped, with the correct one: ``" yes "``, ``"unsure"`` and ``"error"`` count
wrong. The structured reading (the default) forgives case and surrounding spaces and re-asks instead.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Optional

UNREAD = "error"
"""The release's answer for a reply it could not read."""
_FENCED_JSON = re.compile(r"```json\s*(.*?)\s*```", re.DOTALL)
_ANSWER_PATTERN = re.compile(r"answer\s*[:：]\s*(yes|no|unsure)", re.IGNORECASE)
_REASON_PATTERN = re.compile(r"(?:explanation|because|reason)[:：]?\s*(.*)", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class ReleasedAnswer:
    """A judge reply as the release reads it; ``answer`` may be any JSON value the reply held."""

    answer: Any
    explanation: str

    @property
    def text(self) -> str:
        """The answer as recorded (non-strings in their JSON form)."""
        return self.answer if isinstance(self.answer, str) else json.dumps(self.answer)

    def matches(self, correct: str) -> bool:
        """The release's comparison: lower-cased, not stripped (a non-string answer never matches)."""
        return isinstance(self.answer, str) and self.answer.lower() == correct.lower()


def _object(text: str) -> Optional[dict[str, Any]]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def read_as_released(reply: str) -> ReleasedAnswer:
    """The answer and explanation the released script would record for ``reply``."""
    fenced = _FENCED_JSON.search(reply)
    for candidate in ([fenced.group(1)] if fenced else []) + [reply]:
        found = _object(candidate)
        if found is not None:
            return ReleasedAnswer(found.get("answer", UNREAD), str(found.get("explanation", "")))
    answer = _ANSWER_PATTERN.search(reply)
    reason = _REASON_PATTERN.search(reply)
    return ReleasedAnswer(
        answer.group(1).lower() if answer else UNREAD, (reason.group(1) if reason else reply).strip()
    )
