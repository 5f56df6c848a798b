"""The configuration presets shipped with the package (``paper``, ``cpu-fast``, ...), found by name.

The YAML files sit beside this module as package data, so ``--config cpu-fast`` works from an installed
wheel as well as from a checkout (where ``configs/`` at the repository root links here).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Optional

SUFFIX = ".yaml"


def presets_dir() -> Path:
    return Path(str(resources.files(__name__)))


def preset_names() -> list[str]:
    return sorted(path.stem for path in presets_dir().glob(f"*{SUFFIX}"))


def preset_path(name: str) -> Optional[Path]:
    """The preset's file, or None when no preset has that name (``paper`` and ``paper.yaml`` both work)."""
    stem = name.removesuffix(SUFFIX)
    if "/" in stem or "\\" in stem or stem not in preset_names():
        return None
    return presets_dir() / f"{stem}{SUFFIX}"


def preset_summary(name: str) -> str:
    """The first line of the preset's leading comment: what it is for."""
    path = preset_path(name)
    assert path is not None, name
    for line in path.read_text().splitlines():
        if line.startswith("#") and line.strip("# "):
            return line.lstrip("# ").strip()
    return ""
