"""A synthetic VidPair-Halluc in the published layout, and copies of it with edited rows."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Callable, Optional

import pytest

from viddiff.benchmarks.vidpair.synthetic import write_synthetic_vidpair
from viddiff.config import Config

EditRows = Callable[[dict[str, list[dict]]], None]


@pytest.fixture(scope="session")
def vidpair_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four pairs, one per aspect the synthetic data draws (color, number, location, sequence)."""
    return write_synthetic_vidpair(tmp_path_factory.mktemp("vidpair"), pairs=4, seed=3)


@pytest.fixture
def vidpair_copy(vidpair_dir: Path, tmp_path: Path) -> Callable[..., Path]:
    """``make(edit=None, name=..., drop=())``: the fixture copied (videos hard-linked), its ``qa/hf/*.jsonl`` rows
    (by file name stem) changed in place by ``edit``, files in ``drop`` removed."""

    def make(edit: Optional[EditRows] = None, name: str = "copy", drop: tuple[str, ...] = ()) -> Path:
        out = tmp_path / name
        shutil.copytree(vidpair_dir, out, copy_function=os.link)
        files = sorted((out / "qa" / "hf").glob("*.jsonl"))
        rows = {f.stem: [json.loads(line) for line in f.read_text().splitlines()] for f in files}
        if edit is not None:
            edit(rows)
        for f in files:
            f.unlink()  # a hard link: write a new file rather than through the link
            f.write_text("".join(json.dumps(r) + "\n" for r in rows[f.stem]))
        for relative in drop:
            (out / relative).unlink()
        return out

    return make


def _config_for(path: Path, *overrides: str) -> Config:
    return Config().with_overrides(["data.benchmark=vidpair-halluc", f"data.dataset={path}", *overrides])


@pytest.fixture
def config_for() -> Callable[..., Config]:
    """``config_for(path, *overrides)``: a config reading the VidPair-Halluc copy at ``path``."""
    return _config_for
