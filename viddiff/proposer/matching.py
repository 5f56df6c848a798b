"""Fuzzy name matching used to repair LLM answers that misspell a name.

A threshold keeps repairs honest: a name too far from every candidate is
reported as unmatched rather than silently mapped to the nearest one.
"""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import Optional, Sequence


def normalise(text: str) -> str:
    """Case, separators and whitespace folded, so cosmetic variants compare equal."""
    return " ".join(text.lower().replace("_", " ").replace("-", " ").split())


def same(a: str, b: str) -> bool:
    """Equal up to :func:`normalise` (a match that needs no note)."""
    return normalise(a) == normalise(b)


def best_match(name: str, candidates: Sequence[str], threshold: float) -> Optional[int]:
    """Index of the candidate most similar to ``name`` if its similarity reaches ``threshold``."""
    return best_owner(name, [[c] for c in candidates], threshold)


def best_owner(name: str, aliases: Sequence[Sequence[str]], threshold: float) -> Optional[int]:
    """Index of the item whose most similar alias best matches ``name``, if that similarity reaches ``threshold``.

    Items can be referred to in several ways (an id line, a name, a
    description); each item lists its accepted spellings in ``aliases``.
    Ties go to the earlier item.
    """
    target = normalise(name)
    best_index, best_score = None, -1.0
    for i, spellings in enumerate(aliases):
        for alias in spellings:
            score = SequenceMatcher(None, target, normalise(alias)).ratio()
            if score > best_score:
                best_index, best_score = i, score
    return best_index if best_score >= threshold else None
