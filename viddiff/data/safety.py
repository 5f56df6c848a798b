"""Guards for dataset files nobody vetted: a size cap on text fields and video paths kept inside known folders.

A benchmark file is input like any other: a 10 MB "description" would be sent
with every model call of the sample, and a video path such as
``../../etc/passwd`` or a symlink pointing elsewhere would make a run read
files the user never meant to hand to a model. Both are refused with an
error naming the field; the caller adds the row.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from viddiff.errors import DatasetError

_ALLOW_HINT = "data.allow_paths_outside_root=true"


def check_text_size(value: str, cap: Optional[int]) -> None:
    """Raise ``DatasetError`` when ``value`` is longer than ``cap`` characters (``None`` = no cap)."""
    if cap is not None and len(value) > cap:
        raise DatasetError(
            f"{len(value):,} characters, more than data.max_text_chars={cap:,}; "
            "check the dataset file, or raise the cap with --set data.max_text_chars=N if the text is genuine"
        )


def check_field_sizes(value: Any, cap: Optional[int], field: str) -> None:
    """:func:`check_text_size` on ``value`` and every string (and key) nested in its objects and lists; the error
    names the field that is too long by its path (``open_ended_check[0].check_items[1].question``)."""
    if cap is None:
        return
    if isinstance(value, str):
        try:
            check_text_size(value, cap)
        except DatasetError as exc:
            raise DatasetError(f"field '{field}': {exc}") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            check_field_sizes(str(key), cap, f"a key in {field}" if field else "a key")
            check_field_sizes(item, cap, f"{field}.{key}" if field else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            check_field_sizes(item, cap, f"{field}[{index}]")


@dataclass(frozen=True)
class VideoPaths:
    """How a dataset's video paths become absolute paths, and which folders they may point into.

    ``root`` is where relative paths resolve; ``allowed`` are the folders whose
    real (symlink-free) location a video may have. Absolute paths are taken
    as they are and must lie inside ``allowed`` too, unless ``allow_outside``.
    """

    root: Path
    allowed: tuple[Path, ...]
    allow_outside: bool = False

    @classmethod
    def under(cls, root: Path, *extra: Optional[Path], allow_outside: bool = False) -> "VideoPaths":
        """Paths resolve against ``root`` and may lie inside it or any of ``extra`` (``None`` entries are skipped)."""
        allowed = tuple(dict.fromkeys(p for p in (root, *extra) if p is not None))
        return cls(root=root, allowed=allowed, allow_outside=allow_outside)

    def resolve(self, raw: str) -> str:
        """The normalised absolute path of ``raw``; ``DatasetError`` (without row context) when it escapes."""
        if "\x00" in raw:
            raise DatasetError(f"path {raw!r} contains a NUL byte")
        candidate = Path(raw).expanduser()
        if not candidate.is_absolute():
            candidate = self.root / candidate
        normalised = os.path.normpath(candidate)
        if self.allow_outside:
            return normalised
        real = Path(os.path.realpath(normalised))
        if any(_inside(real, Path(os.path.realpath(folder))) for folder in self.allowed):
            return normalised
        via_link = "" if real == Path(normalised) else f" (a symlink leads to {real})"
        folders = " or ".join(str(folder) for folder in self.allowed)
        raise DatasetError(
            f"video path {raw!r} resolves outside the dataset's folders ({folders}){via_link}; "
            f"move the videos under data.video_root, or set {_ALLOW_HINT} if you trust this dataset"
        )


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def hf_storage_folder(snapshot: Path) -> Path:
    """The repo folder of an HF cache snapshot (``.../datasets--o--n/snapshots/<sha>`` -> ``.../datasets--o--n``).

    Files in a snapshot are symlinks into the repo folder's ``blobs/``, so that
    whole folder is the dataset's own. Any other directory is returned as is.
    """
    if snapshot.parent.name == "snapshots":
        return snapshot.parent.parent
    return snapshot

