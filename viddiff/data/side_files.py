"""Files a VidDiffBench repo keeps beside its rows, which the first public revision needs to be read at all.

That revision (557 rows) has no ``n_differences_open_prediction`` column and
its ``split`` column holds the domain; the repo ships instead, at its root:

* ``n_differences.json``: N_diff per action, ``{action: N}`` (the authors'
  loader also read it grouped, ``{domain: {action: N}}``; both are accepted);
* ``lookup_action_to_split.json``: the difficulty split per action,
  ``{action: "easy"|"medium"|"hard"}``;
* ``egoexo4d_uids.json``: the Ego-Exo4D takes the ballsports and music
  videos come from (read by ``viddiff data download`` for its instructions).

Files are looked up in the row file's folder and then its parents up to
the dataset's folder, read once, and validated; a malformed one is an error
naming the file.
"""

from __future__ import annotations

import json
import re
from functools import cached_property
from pathlib import Path
from typing import Any, Optional, Sequence

from viddiff.errors import DatasetError
from viddiff.schema import SPLITS

N_DIFFERENCES_FILE = "n_differences.json"
SPLIT_LOOKUP_FILE = "lookup_action_to_split.json"
EGOEXO_UIDS_FILE = "egoexo4d_uids.json"
SIDE_FILES = (N_DIFFERENCES_FILE, SPLIT_LOOKUP_FILE, EGOEXO_UIDS_FILE)
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def search_dirs(row_file: Path, dataset_dir: Optional[Path]) -> list[Path]:
    """Where side files of ``row_file`` may be: its folder, then each parent up to ``dataset_dir``.

    Without a ``dataset_dir`` containing the file (a row file given directly),
    the file's folder and its parent are searched, which covers the HF layout
    ``data/test-*.parquet`` with the side files at the repo root.
    """
    folder = row_file.parent
    if dataset_dir is not None and folder.is_relative_to(dataset_dir):
        return [folder, *[p for p in folder.parents if p.is_relative_to(dataset_dir)]]
    return [folder, folder.parent]


class SideFiles:
    """The side files found in ``dirs`` (nearest first), parsed on first use."""

    def __init__(self, dirs: Sequence[Path]):
        self.dirs = list(dict.fromkeys(dirs))

    def path(self, name: str) -> Optional[Path]:
        return next((d / name for d in self.dirs if (d / name).is_file()), None)

    def describe(self, name: str) -> str:
        """Where ``name`` was expected, for error messages."""
        return f"{name} (looked in {', '.join(str(d) for d in self.dirs)})"

    @cached_property
    def n_differences(self) -> Optional[dict[str, int]]:
        """Action -> N_diff from ``n_differences.json``, or ``None`` when there is no such file."""
        path = self.path(N_DIFFERENCES_FILE)
        if path is None:
            return None
        table: dict[str, int] = {}
        for action, value in _flatten(_read_object(path)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise DatasetError(f"{path}: N_diff of {action!r} must be an integer >= 0, got {value!r}")
            if table.get(action, value) != value:
                raise DatasetError(f"{path}: action {action!r} has two different N_diff values ({table[action]}, {value})")
            table[action] = value
        return table

    @cached_property
    def split_lookup(self) -> Optional[dict[str, str]]:
        """Action -> difficulty split from ``lookup_action_to_split.json``, or ``None`` when there is no such file."""
        path = self.path(SPLIT_LOOKUP_FILE)
        if path is None:
            return None
        table = _read_object(path)
        for action, split in table.items():
            if split not in SPLITS:
                raise DatasetError(f"{path}: split of {action!r} must be one of {', '.join(SPLITS)}, got {split!r}")
        return {str(k): v for k, v in table.items()}


def egoexo_uids(path: Path) -> list[str]:
    """The Ego-Exo4D take uids listed in ``path``, in file order, whatever the nesting of the JSON."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            found.extend(_UUID.findall(value))
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(k)
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(_read_json(path))
    return list(dict.fromkeys(uid.lower() for uid in found))


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read the file ({exc})") from None
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno} col {exc.colno})") from None


def _read_object(path: Path) -> dict[str, Any]:
    value = _read_json(path)
    if not isinstance(value, dict):
        raise DatasetError(f"{path}: expected an object keyed by action id, got {type(value).__name__}")
    return value


def _flatten(table: dict[str, Any]) -> list[tuple[str, Any]]:
    """``{action: N}`` or ``{group: {action: N}}`` as (action, N) pairs."""
    pairs: list[tuple[str, Any]] = []
    for key, value in table.items():
        if isinstance(value, dict):
            pairs.extend((str(action), n) for action, n in value.items())
        else:
            pairs.append((str(key), value))
    return pairs
