"""VidPair-Halluc predictions files: one answer per question.

Two forms, every problem reported at once:

- the list ``viddiff run`` writes, in dataset order: ``[{"id": "<question id>", "response": "<text>" | null}, ...]``
  (``null``: the method gave no answer, e.g. its sample failed);
- a mapping ``{"<question id>": "<text>" | null, ...}``; a question it leaves out has no answer.

"No answer" is what the release calls a missing prediction: it is left out of its metrics (and counted).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Optional, Union

from viddiff.data.dataset import Dataset
from viddiff.errors import PredictionFormatError, problems_error
from viddiff.eval.predictions import _read_json

logger = logging.getLogger(__name__)

FORMAT_HELP = (
    'expected a JSON list [{"id": "<question id>", "response": "<text>" or null}, ...] in dataset order, or an '
    'object {"<question id>": "<text>" or null, ...}'
)
Responses = dict[str, Optional[str]]


def load_responses(path_or_obj: Union[str, Path, list[Any], dict[str, Any]], dataset: Dataset) -> Responses:
    """The answer to every question of ``dataset`` (``None`` = none), validated."""
    if isinstance(path_or_obj, (str, Path)):
        source, raw = str(path_or_obj), _read_json(Path(path_or_obj))
    else:
        source, raw = "predictions", path_or_obj
    keys = [s.sample_key for s in dataset]
    known = set(keys)
    problems: list[str] = []
    found: Responses = {}
    if isinstance(raw, dict):
        for key, value in raw.items():
            if key not in known:
                problems.append(f"id {key!r} is not a question of the dataset selection (check --dataset/--limit)")
            elif _ok(value, f"id {key!r}", problems):
                found[key] = value
    elif isinstance(raw, list):
        if len(raw) != len(keys):
            problems.append(f"has {len(raw)} items but the selection has {len(keys)} questions (one per question, in dataset order)")
        for index, (item, key) in enumerate(zip(raw, keys)):
            where = f"item {index}"
            if not isinstance(item, dict) or "id" not in item or "response" not in item:
                problems.append(f'{where}: expected an object {{"id": ..., "response": ...}}')
            elif item["id"] != key:
                problems.append(f"{where}: id {item['id']!r} where question {key!r} belongs (keep dataset order)")
            elif _ok(item["response"], f"{where} (id {key!r})", problems):
                found[key] = item["response"]
    else:
        raise PredictionFormatError(f"{source}: top level is a {type(raw).__name__}; {FORMAT_HELP}")
    if problems:
        raise problems_error(source, problems, FORMAT_HELP, about="VidPair-Halluc answers")
    missing = [k for k in keys if k not in found]
    if missing and isinstance(raw, dict):
        logger.warning("%s: no answer to %d of %d questions; the release's scorers leave them out", source, len(missing), len(keys))
    return {k: found.get(k) for k in keys}


def _ok(value: Any, where: str, problems: list[str]) -> bool:
    if value is None or isinstance(value, str):
        return True
    problems.append(f"{where}: response must be a string or null, got {type(value).__name__}")
    return False
