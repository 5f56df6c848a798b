"""The variants of ``viddiff ablate``: the paper's localisation ablation as the paper ran it, and extras.

A variant is a localizer method plus the settings that define its row. The paper's four rows (Table 4, easy
split) carry the paper's number and the settings the paper's row was run with; this project's extras (the
oracle asked a/b like the other rows, the no-Viterbi window measured in frames, and every other segmenter in
the table) carry no number. Kept apart from :mod:`viddiff.runs.ablate` so the CLI can list the names without
importing the evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from viddiff.localizer.segmenters import get_segmenter, segmenter_names

AB = (("differencer.options", "ab"),)


@dataclass(frozen=True)
class Variant:
    name: str
    """``--variant`` choice and results sub-directory."""
    method: str
    """``localizer.method``."""
    label: str
    definition: str
    overrides: tuple[str, ...] = ()
    """``--set`` settings besides ``localizer.method`` that define the row."""
    paper_easy: Optional[float] = None
    """Closed accuracy (%) on the easy split in the paper's localisation ablation."""
    paper_settings: tuple[tuple[str, object], ...] = ()
    """Settings the paper's row was run with: a run with other values is not given the paper's number."""

    @property
    def settings(self) -> list[str]:
        return [f"localizer.method={self.method}", *self.overrides]


PAPER_VARIANTS = (
    Variant(
        "oracle", "oracle", "oracle (3-way)",
        "the benchmark's annotated keyframes, asked with a/b/c questions as the paper's Table 4 says of this row",
        overrides=("differencer.options=abc",), paper_easy=78.6, paper_settings=(("differencer.options", "abc"),),
    ),
    Variant(
        "random", "random", "random", "keyframes at random places, as many and as far apart as the method's",
        paper_easy=50.1, paper_settings=AB,
    ),
    Variant(
        "no_viterbi", "no_viterbi", "no Viterbi (as released)",
        "per stage, the window around its first string's best match, int(1.3 * 5 / K) frames as the release "
        "shipped it (7, 3, 3, 1, 1 for K = 1..5), no temporal model",
        overrides=("localizer.no_viterbi_window=as_released",), paper_easy=57.4,
        paper_settings=(*AB, ("localizer.no_viterbi_window", "as_released")),
    ),
    Variant("viterbi", "viterbi", "full (Viterbi)", "the method: Viterbi over CLIP stage scores", paper_easy=65.8,
            paper_settings=AB),
)
EXTRA_VARIANTS = (
    Variant(
        "oracle_ab", "oracle", "oracle (a/b)", "the benchmark's annotated keyframes, asked a/b like the other rows",
        overrides=("differencer.options=ab",),
    ),
    Variant(
        "no_viterbi_frames", "no_viterbi", "no Viterbi (1.3·T/K frames)",
        "per stage, a window of int(1.3 * T / K) sampled frames around its first string's best match",
        overrides=("localizer.no_viterbi_window=frames",),
    ),
)


def all_variants() -> list[Variant]:
    """The paper's four rows, this project's named extras, then every other segmenter in table order."""
    named = [*PAPER_VARIANTS, *EXTRA_VARIANTS]
    taken = {v.method for v in named}
    others = [
        Variant(name, name, name.replace("_", " "), get_segmenter(name).summary)
        for name in segmenter_names()
        if name not in taken
    ]
    return [*named, *others]


def variant_names() -> list[str]:
    return [v.name for v in all_variants()]
