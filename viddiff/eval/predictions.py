"""Load and validate predictions in the official VidDiffBench format.

The format is a JSON list aligned with dataset order; item ``i`` maps
difference keys (digit strings) to a letter (closed) or to
``{"description": ..., "prediction": ...}`` (open; closed accepts this too).
Every problem is collected and reported at once, naming the sample index
and key, because a predictions file usually comes from someone else's code
and fixing one error per run is miserable.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Optional, Union, get_args

from viddiff.errors import PredictionFormatError, problems_error
from viddiff.eval.groups import key_order
from viddiff.schema import Letter, Mode, Sample
from viddiff.console import count_of

LETTERS: tuple[str, ...] = get_args(Letter)
_DIGITS = re.compile(r"[0-9]+")

ClosedPrediction = dict[str, Optional[str]]
"""Difference key -> ``a``/``b``/``c`` or ``None`` (no valid answer; counts wrong)."""
OpenPrediction = dict[str, dict[str, Optional[str]]]
"""Predicted key -> ``{"description": str, "prediction": letter or None}``."""

FORMAT_HELP = (
    "expected a JSON list with one object per sample in dataset order; closed: "
    '{"0": "a", "1": "b"}, open: {"0": {"description": "...", "prediction": "a"}}'
)


def load_predictions(
    path_or_obj: Union[str, Path, list[Any]], mode: Mode, samples: list[Sample]
) -> list[dict]:
    """Validated predictions for ``samples``: ``ClosedPrediction`` or ``OpenPrediction`` items.

    ``path_or_obj`` is a JSON file or the already-parsed list. Closed-mode
    nested items are flattened to their letter. Raises
    ``PredictionFormatError`` listing every problem found.
    """
    if mode not in ("closed", "open"):
        raise ValueError(f"mode must be 'closed' or 'open', got {mode!r}")
    if isinstance(path_or_obj, (str, Path)):
        source = str(path_or_obj)
        raw = _read_json(Path(path_or_obj))
    else:
        source = "predictions"
        raw = path_or_obj
    if not isinstance(raw, list):
        raise PredictionFormatError(f"{source}: top level is a {type(raw).__name__}; {FORMAT_HELP}")

    problems: list[str] = []
    if len(raw) != len(samples):
        problems.append(
            f"has {count_of(len(raw), 'item')} but the dataset selection has {count_of(len(samples), 'sample')} "
            "(one item per sample, in dataset order; check --split/--dataset)"
        )
    validated: list[dict] = []
    for index, (item, sample) in enumerate(zip(raw, samples)):
        where = f"item {index} (sample {sample.sample_key!r})"
        if mode == "closed":
            validated.append(_closed_item(item, sample, where, problems))
        else:
            validated.append(_open_item(item, where, problems))
    if problems:
        raise problems_error(source, problems, FORMAT_HELP, about=f"{mode}-mode predictions")
    return validated


def _read_json(path: Path) -> Any:
    if not path.is_file():
        raise PredictionFormatError(f"predictions file not found: {path}")
    try:
        return json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_reject_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise PredictionFormatError(f"{path}: not valid JSON ({exc})") from None
    except UnicodeDecodeError as exc:
        raise PredictionFormatError(f"{path}: not UTF-8 text ({exc})") from None
    except _DuplicateKey as exc:
        raise PredictionFormatError(f"{path}: duplicate key {exc.key!r} in a JSON object; keep one") from None


class _DuplicateKey(Exception):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _item_mapping(item: Any, where: str, problems: list[str]) -> Optional[dict]:
    if not isinstance(item, dict):
        problems.append(f"{where}: expected an object mapping difference keys to predictions, got {_kind(item)}")
        return None
    return item


def _valid_key(key: str, where: str, problems: list[str]) -> bool:
    if not _DIGITS.fullmatch(key):
        problems.append(f"{where}: key {key!r} is not a digit string like \"0\"")
        return False
    return True


def _letter(value: Any, where: str, problems: list[str]) -> tuple[bool, Optional[str]]:
    if value is None or value in LETTERS:
        return True, value
    problems.append(f"{where}: prediction {value!r} is not one of 'a', 'b', 'c' or null")
    return False, None


def _closed_item(item: Any, sample: Sample, where: str, problems: list[str]) -> ClosedPrediction:
    mapping = _item_mapping(item, where, problems)
    out: ClosedPrediction = {}
    if mapping is None:
        return out
    for key, value in mapping.items():
        at = f"{where}, key {key!r}"
        if not _valid_key(key, at, problems):
            continue
        if key not in sample.differences:
            known = ", ".join(sorted(sample.differences, key=key_order)) or "none"
            problems.append(f"{at}: not a difference of this sample (its keys: {known})")
            continue
        if isinstance(value, dict):
            if "prediction" not in value:
                problems.append(f"{at}: object has no 'prediction' field")
                continue
            value = value["prediction"]
        ok, letter = _letter(value, at, problems)
        if ok:
            out[key] = letter
    return out


def _open_item(item: Any, where: str, problems: list[str]) -> OpenPrediction:
    mapping = _item_mapping(item, where, problems)
    out: OpenPrediction = {}
    if mapping is None:
        return out
    for key, value in mapping.items():
        at = f"{where}, key {key!r}"
        if not _valid_key(key, at, problems):
            continue
        if not isinstance(value, dict):
            problems.append(f'{at}: expected {{"description": ..., "prediction": ...}}, got {_kind(value)}')
            continue
        missing = [f for f in ("description", "prediction") if f not in value]
        if missing:
            problems.append(f"{at}: missing field(s) {', '.join(missing)}")
            continue
        description = value["description"]
        if not isinstance(description, str) or not description.strip():
            problems.append(f"{at}: description must be a non-empty string, got {description!r}")
            continue
        ok, letter = _letter(value["prediction"], at, problems)
        if ok:
            out[key] = {"description": description.strip(), "prediction": letter}
    return out


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__
