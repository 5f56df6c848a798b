"""Fuzzy name matching used to repair LLM answers that misspell a name.

A threshold keeps repairs honest: a name too far from every candidate is
reported as unmatched rather than silently mapped to the nearest one.
"""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import Optional, Sequence


def normalise(text: str) -> str:
    return " ".join(text.lower().replace("_", " ").replace("-", " ").split())


def best_match(name: str, candidates: Sequence[str], threshold: float) -> Optional[int]:
    """Index of the candidate most similar to ``name`` if its similarity reaches ``threshold``."""
    target = normalise(name)
    best_index, best_score = None, -1.0
    for i, candidate in enumerate(candidates):
        score = SequenceMatcher(None, target, normalise(candidate)).ratio()
        if score > best_score:
            best_index, best_score = i, score
    return best_index if best_score >= threshold else None
