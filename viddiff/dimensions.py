"""The seven dimensions along which describe mode compares two videos, in report order.

Describe mode (``viddiff compare --describe``, and description benchmarks) proposes differences along these
dimensions, renders its verdicts grouped by them, and the LMM baseline's describe prompt lists them. They
follow the taxonomy of video difference captioning checklists (subject, style, background, camera, motion,
position, playback technique); a benchmark plug-in maps its own category spellings onto these keys.
"""

from __future__ import annotations

from typing import Literal

DimensionKey = Literal["subject", "style", "background", "camera", "motion", "position", "playback"]

DIMENSION_NAMES: dict[str, str] = {
    "subject": "subject",
    "style": "style",
    "background": "background",
    "camera": "camera",
    "motion": "motion",
    "position": "position",
    "playback": "playback technique",
}
"""Display names of the keys, in report order."""

DIMENSIONS: tuple[str, ...] = tuple(DIMENSION_NAMES)
"""The keys, in report order."""
