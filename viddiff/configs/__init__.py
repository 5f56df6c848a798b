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
    """The first sentence of the preset's leading comment: what it is for.

    A sentence may run over several comment lines and hold colons and abbreviations ("App. G");
    it ends at a full stop outside brackets and quotes that ends its line or precedes a space.
    """
    path = preset_path(name)
    assert path is not None, name
    return first_sentence(leading_paragraph(path.read_text()))


def leading_paragraph(text: str) -> str:
    """The file's opening comment lines up to the first blank comment line, joined by spaces."""
    lines: list[str] = []
    for line in text.splitlines():
        body = line.lstrip("#").strip()
        if not line.startswith("#") or (not body and lines):
            break
        if body:
            lines.append(body)
    return " ".join(lines)


def first_sentence(text: str) -> str:
    depth, quoted = 0, False
    for i, char in enumerate(text):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth = max(depth - 1, 0)
        elif char == '"':
            quoted = not quoted
        elif char == "." and depth == 0 and not quoted and (i + 1 == len(text) or text[i + 1] == " "):
            return text[: i + 1]
    return text
