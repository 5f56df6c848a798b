"""Load and validate ViDiC-1K response files: one generated description per video pair.

Three forms are accepted, because responses come from ``viddiff run`` as well
as from other people's inference scripts:

- the list ``viddiff run`` writes, aligned with dataset order:
  ``[{"id": "<sample key>", "response": "<text>"}, ...]``;
- a mapping ``{"<sample key>": "<text>", ...}``;
- the ViDiC-1K repository's response lists
  ``[{"video1_path": ..., "video2_path": ..., "response": "<text>"}, ...]``,
  matched to pairs by their video paths (relative paths match the end of the
  resolved ones).

Every problem is collected and reported at once. A pair with no response in
a mapping or a path list is logged and left out of :data:`Responses` (every
item wrong, as released); ``""`` is a blank response (``vidic.empty_response``).
A ``null`` response (an inference script's failed call) is blank by default; under
``vidic.empty_response=judge`` it is the text ``"None"``, because the released judge
reads every response as ``str(response)`` and so judges that text.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, Literal, Optional, Union

from viddiff.errors import MAX_LISTED, PredictionFormatError, problems_error
from viddiff.eval.predictions import _read_json

if TYPE_CHECKING:
    from viddiff.data.dataset import Dataset

logger = logging.getLogger(__name__)

FORMAT_HELP = (
    'expected a JSON list [{"id": "<sample key>", "response": "<text>"}, ...] in dataset order, '
    'an object {"<sample key>": "<text>", ...}, or a ViDiC-1K response list of '
    '{"video1_path": ..., "video2_path": ..., "response": ...}'
)

Responses = dict[str, str]
"""Sample key -> generated description, for the pairs the file answers."""
RELEASED_NULL_TEXT = str(None)
"""What the released judge sends for a ``null`` response: it reads every response as ``str(response)``."""


@dataclass
class _Reading:
    """What reading the file found besides the responses: its problems, and the pairs whose response is null."""

    null_text: str
    problems: list[str] = field(default_factory=list)
    nulls: list[str] = field(default_factory=list)


def load_responses(
    path_or_obj: Union[str, Path, list[Any], dict[str, Any]],
    dataset: "Dataset",
    empty_response: Literal["wrong", "judge"] = "wrong",
) -> Responses:
    """Validated responses for every pair of ``dataset``, from a JSON file or the parsed object.

    A null response becomes ``""`` (blank), or ``"None"`` under ``empty_response="judge"`` (as released).
    Raises ``PredictionFormatError`` listing every problem: unknown ids,
    ids out of dataset order, responses neither text nor null, a list of the wrong length.
    """
    if isinstance(path_or_obj, (str, Path)):
        source = str(path_or_obj)
        raw = _read_json(Path(path_or_obj))
    else:
        source = "responses"
        raw = path_or_obj
    keys = [s.sample_key for s in dataset]
    reading = _Reading(null_text=RELEASED_NULL_TEXT if empty_response == "judge" else "")
    if isinstance(raw, dict):
        found = _from_mapping(raw, keys, reading)
    elif isinstance(raw, list) and raw and isinstance(raw[0], dict) and "id" not in raw[0] and "video1_path" in raw[0]:
        found = _from_video_paths(raw, dataset, reading)
    elif isinstance(raw, list):
        found = _from_ordered_list(raw, keys, reading)
    else:
        raise PredictionFormatError(f"{source}: top level is a {_kind(raw)}; {FORMAT_HELP}")
    if reading.problems:
        raise problems_error(source, reading.problems, FORMAT_HELP, about="ViDiC-1K responses")
    if reading.nulls:
        effect = (
            f'judged as the text "{RELEASED_NULL_TEXT}", as released (vidic.empty_response=judge)'
            if reading.null_text else "they count as blank: every item wrong (vidic.empty_response=wrong)"
        )
        shown = ", ".join(reading.nulls[:MAX_LISTED]) + (" ..." if len(reading.nulls) > MAX_LISTED else "")
        logger.warning("%s: a null response for %d pair(s) (%s); %s", source, len(reading.nulls), shown, effect)
    missing = [k for k in keys if k not in found]
    if missing:
        shown = ", ".join(missing[:MAX_LISTED]) + (" ..." if len(missing) > MAX_LISTED else "")
        logger.warning(
            "%s: no response for %d of %d pair(s) (%s); every item of theirs counts wrong",
            source,
            len(missing),
            len(keys),
            shown,
        )
    return {k: found[k] for k in keys if k in found}


def _from_ordered_list(raw: list[Any], keys: list[str], reading: _Reading) -> Responses:
    problems = reading.problems
    if len(raw) != len(keys):
        problems.append(
            f"has {len(raw)} items but the dataset selection has {len(keys)} pairs "
            "(one item per pair, in dataset order; check --dataset/--limit)"
        )
    known = set(keys)
    out: Responses = {}
    for index, (item, key) in enumerate(zip(raw, keys)):
        where = f"item {index}"
        if not isinstance(item, dict):
            problems.append(f'{where}: expected an object {{"id": ..., "response": ...}}, got {_kind(item)}')
            continue
        missing = [f for f in ("id", "response") if f not in item]
        if missing:
            problems.append(f"{where}: missing field(s) {', '.join(missing)}")
            continue
        given = item["id"]
        if given != key:
            why = "is not a pair of the dataset" if given not in known else "belongs elsewhere"
            problems.append(f"{where}: id {given!r} {why}; item {index} must be pair {key!r} (keep dataset order)")
            continue
        text = _text(item["response"], f"{where} (id {key!r})", key, reading)
        if text is not None:
            out[key] = text
    return out


def _from_mapping(raw: dict[str, Any], keys: list[str], reading: _Reading) -> Responses:
    problems = reading.problems
    known = set(keys)
    out: Responses = {}
    for key, value in raw.items():
        if key not in known:
            problems.append(f"id {key!r} is not a pair of the dataset selection (check --dataset/--limit)")
            continue
        text = _text(value, f"id {key!r}", key, reading)
        if text is not None:
            out[key] = text
    return out


def _from_video_paths(raw: list[Any], dataset: "Dataset", reading: _Reading) -> Responses:
    problems = reading.problems
    by_names: dict[tuple[str, str], list[tuple[str, tuple[PurePath, PurePath]]]] = {}
    for sample in dataset:
        paths = (PurePath(sample.videos[0].path), PurePath(sample.videos[1].path))
        by_names.setdefault((paths[0].name, paths[1].name), []).append((sample.sample_key, paths))
    out: Responses = {}
    for index, item in enumerate(raw):
        where = f"item {index}"
        if not isinstance(item, dict):
            problems.append(f"{where}: expected an object with video1_path, video2_path and response, got {_kind(item)}")
            continue
        missing = [f for f in ("video1_path", "video2_path", "response") if f not in item]
        if missing:
            problems.append(f"{where}: missing field(s) {', '.join(missing)}")
            continue
        v1, v2 = item["video1_path"], item["video2_path"]
        if not isinstance(v1, str) or not isinstance(v2, str):
            problems.append(f"{where}: video1_path and video2_path must be strings")
            continue
        key = _match_pair(PurePath(v1), PurePath(v2), by_names)
        if key is None:
            problems.append(f"{where}: no pair of the dataset selection has videos {v1!r} and {v2!r}")
            continue
        if key in out:
            problems.append(f"{where}: a second response for pair {key!r} ({v1!r}, {v2!r}); keep one")
            continue
        text = _text(item["response"], f"{where} (pair {key!r})", key, reading)
        if text is not None:
            out[key] = text
    return out


def _match_pair(
    v1: PurePath, v2: PurePath, by_names: dict[tuple[str, str], list[tuple[str, tuple[PurePath, PurePath]]]]
) -> Optional[str]:
    for key, (a, b) in by_names.get((v1.name, v2.name), []):
        if _ends_with(a, v1) and _ends_with(b, v2):
            return key
    return None


def _ends_with(path: PurePath, tail: PurePath) -> bool:
    parts = [p for p in tail.parts if p not in (".", "/")]
    return list(path.parts[-len(parts) :]) == parts


def _text(value: Any, where: str, key: str, reading: _Reading) -> Optional[str]:
    if isinstance(value, str):
        return value
    if value is None:
        reading.nulls.append(key)
        return reading.null_text
    reading.problems.append(f'{where}: response must be a string or null, got {_kind(value)}')
    return None


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__
