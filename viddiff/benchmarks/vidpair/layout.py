"""VidPair-Halluc's published layout, and how the row fields it leaves undocumented are found.

What the release defines (its ``vidpair_halluc/dataset.py`` and ``scripts/validate_release.py``): videos under
``VidPair-Halluc/<id>/<file>.mp4``; ``metadata.csv``; ``pairs/pairs.json``, a list of
``{pair_id, positive_video, adversarial_video}``; question rows in ``qa/hf/{binary,multiple_choice,open_ended,
all_qa}.jsonl`` with ``repo_video_path`` (else ``video_path``), ``question`` and the JSON-encoded strings
``choices_json``, ``option_map_json`` and ``mask_flags_json``. A video path whose first part is
``VidPair-Halluc`` is relative to the dataset root, any other to ``<root>/VidPair-Halluc/``.

What it does not define: the names of the answer, question-id, aspect, pair and question-group fields. Each of
those is looked up among plausible names (:data:`CANDIDATES`) in every row of a file; a ``vidpair.fields``
setting names it outright. A name found in some rows of a file but not in others is an error, never a guess.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal, Optional, Sequence

from viddiff.config import VIDPAIR_ASPECTS
from viddiff.errors import DatasetError

QuestionType = Literal["binary", "multiple_choice", "open_ended"]
Role = Literal["positive", "adversarial"]

VIDEO_DIR = "VidPair-Halluc"
QA_FILES: dict[str, str] = {
    "binary": "qa/hf/binary.jsonl",
    "multiple_choice": "qa/hf/multiple_choice.jsonl",
    "open_ended": "qa/hf/open_ended.jsonl",
}
ALL_QA_FILE = "qa/hf/all_qa.jsonl"
PAIRS_FILE = "pairs/pairs.json"
METADATA_FILE = "metadata.csv"
LAYOUT_FILE = "DATA_LAYOUT.md"
VIDEO_PATH_FIELDS = ("repo_video_path", "video_path")
ID_LIKE_FIELDS = ("id", "story_id", "video_id", "sample_id")
"""Fields that may hold a story id such as ``action_0002`` (the aspect is its part before the last ``_``)."""

CANDIDATES: dict[str, tuple[str, ...]] = {
    "answer": ("answer", "gt_answer", "ground_truth", "correct_answer", "gt", "label", "reference", "reference_answer"),
    "question_id": ("qa_id", "question_id", "uid", "id"),
    "aspect": ("aspect", "category", "hallucination_type", "halluc_type", "aspect_type", "semantic_aspect"),
    "question_type": ("question_type", "qa_type", "task_type", "type"),
    "pair_id": ("pair_id",),
    "question_group": ("question_group", "qa_group", "polarity", "question_polarity", "pos_neg", "qa_key"),
    "spatial_temporal": ("spatial_temporal", "reasoning_type", "st_type", "reasoning"),
}
"""Field names tried, in order, for each thing the release leaves unnamed (``vidpair.fields.<role>`` overrides)."""

_ASPECT_ALIASES = {
    **{a: a for a in VIDPAIR_ASPECTS},
    "temporal_sequence": "sequence",
    "colour": "color",
    "objects": "object",
    "actions": "action",
    "colors": "color",
    "numbers": "number",
    "count": "number",
    "people": "person",
    "locations": "location",
    "static_relations": "static_relation",
    "dynamic_relations": "dynamic_relation",
    "dynamic_attributes": "dynamic_attribute",
}


@dataclass(frozen=True)
class RowRef:
    """One question row and where it came from."""

    file: str
    """Path relative to the dataset root (``qa/hf/binary.jsonl``)."""
    line: int
    """1-based line number."""
    row: dict[str, Any]

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def read_jsonl(path: Path, relative: str) -> list[RowRef]:
    """The rows of a JSONL file (blank lines skipped, as the release's reader does); errors name the line."""
    rows = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read it ({exc})") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{relative}:{number}: not valid JSON ({exc.msg} at char {exc.pos})") from None
        if not isinstance(row, dict):
            raise DatasetError(f"{relative}:{number}: expected a JSON object per line, got {type(row).__name__}")
        rows.append(RowRef(relative, number, row))
    return rows


def decoded(ref: RowRef, field: str) -> Any:
    """A JSON-encoded field (``choices_json`` ...) decoded; absent or empty gives ``None``. Like the release's
    reader, a value that is not valid JSON stays the raw string."""
    value = ref.row.get(field)
    if isinstance(value, str):
        if not value:
            return None
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def video_field(ref: RowRef) -> tuple[str, str]:
    """``(field, value)`` of the row's video path: ``repo_video_path``, else ``video_path`` (the release's order)."""
    for field in VIDEO_PATH_FIELDS:
        value = ref.row.get(field)
        if value:
            if not isinstance(value, str):
                raise DatasetError(f"{ref.where}: field '{field}': expected a path string, got {value!r}")
            return field, value
    raise DatasetError(f"{ref.where}: no video path (fields {' or '.join(VIDEO_PATH_FIELDS)}; the release reads them in that order)")


def repo_relative(path: str) -> str:
    """A release video path as a path relative to the dataset root: ``VidPair-Halluc/...`` as it is, anything
    else under ``VidPair-Halluc/`` (the release's rule)."""
    parts = PurePosixPath(path.replace("\\", "/")).parts
    if parts and parts[0] == VIDEO_DIR:
        return PurePosixPath(*parts).as_posix()
    return PurePosixPath(VIDEO_DIR, *parts).as_posix()


def category_of_id(identifier: str) -> str:
    """The release's category of an id: a leading ``T_`` dropped, then the part before the last ``_``
    (``action_0002`` -> ``action``, ``T_sequence_0004`` -> ``sequence``)."""
    if identifier.startswith("T_"):
        identifier = identifier[2:]
    head, sep, _ = identifier.rpartition("_")
    return head if sep else identifier


def canonical_aspect(raw: Any) -> Optional[str]:
    """One of :data:`~viddiff.config.VIDPAIR_ASPECTS` for a spelling of it (case, spaces, plurals,
    ``temporal sequence``), else ``None``."""
    if not isinstance(raw, str):
        return None
    key = re.sub(r"[^a-z0-9]+", "_", raw.strip().lower()).strip("_")
    return _ASPECT_ALIASES.get(key)


def aspect_from_path(relative: str) -> Optional[str]:
    """The aspect a video's folder names (``VidPair-Halluc/action_0002/x.mp4`` -> ``action``), or ``None``."""
    parts = PurePosixPath(relative).parts
    if len(parts) >= 3 and parts[0] == VIDEO_DIR:
        return canonical_aspect(category_of_id(parts[1]))
    return None


def choose_field(role: str, refs: Sequence[RowRef], configured: Optional[str]) -> Optional[str]:
    """The field that plays ``role`` in these rows (one file): the configured one, else the first candidate
    every row has; ``None`` when no candidate appears at all. A field in some rows only is an error."""
    if not refs:
        return configured
    setting = f"vidpair.fields.{role}"
    if configured:
        missing = [r for r in refs if r.row.get(configured) in (None, "")]
        if missing:
            raise DatasetError(
                f"{refs[0].file}: {setting}={configured!r}, but {len(missing)} of {len(refs)} rows have no such "
                f"field (first: line {missing[0].line}); fields there: {', '.join(sorted(missing[0].row))}"
            )
        return configured
    for name in CANDIDATES[role]:
        having = [r for r in refs if r.row.get(name) not in (None, "")]
        if len(having) == len(refs):
            return name
        if having:
            lacking = next(r for r in refs if r.row.get(name) in (None, ""))
            raise DatasetError(
                f"{refs[0].file}: field {name!r} (read as the {role.replace('_', ' ')}) is in {len(having)} of "
                f"{len(refs)} rows but not at line {lacking.line}; fill it in every row, or name the field that "
                f"holds the {role.replace('_', ' ')} with --set {setting}=NAME"
            )
    return None


def fields_listing(refs: Sequence[RowRef]) -> str:
    names = sorted({name for r in refs[:50] for name in r.row})
    return ", ".join(names) or "none"
