"""A loaded benchmark selection: its samples and where they came from (recorded in every run's outputs)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

from viddiff.schema import Sample


@dataclass(frozen=True)
class Dataset:
    """Loaded, filtered samples plus their provenance. Benchmarks with more per-sample annotations
    (a checklist, say) subclass it in their plug-in."""

    samples: list[Sample]
    source: str
    """``hf:<repo>@<revision>`` or the local dataset file."""
    revision: Optional[str]
    root: Path
    """Directory that relative video paths were resolved against."""
    benchmark: str = "viddiffbench"
    """The registry name of the benchmark (``viddiff.benchmarks``) the samples belong to."""
    data_dir: Optional[Path] = None
    """Folder holding the dataset's files (HF snapshot or ``--dataset`` directory), where side files live."""
    missing_n_diff: Optional[str] = None
    """Why some selected rows have no N_diff (how many, and the first named), or ``None``: open mode, the only
    one that uses N_diff, refuses such a selection; closed mode never looks."""

    def __len__(self) -> int:
        return len(self.samples)

    def __iter__(self) -> Iterator[Sample]:
        return iter(self.samples)

    def __getitem__(self, index: int) -> Sample:
        return self.samples[index]
