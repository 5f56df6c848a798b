"""Checks on the judge's answers, kept pure so every rule is unit-testable.

The reference implementation credited duplicate matches and validated flip
answers only in total; here a matching must be one-to-one and cover exactly
the ground-truth keys, and every flip batch must have one answer per pair.
What cannot be trusted after the re-asks is salvaged key by key: the
offending ground-truth keys become unmatched, the rest is kept.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from pydantic import ValidationError

from viddiff.eval.prompts import FlipAnswer, MatchAnswer

_NONE_WORDS = {"", "none", "null", "n/a"}


@dataclass
class MatchCheck:
    """A judge matching after checking: what can be used and what was wrong."""

    matches: dict[str, Optional[str]]
    """Every ground-truth key -> a predicted key, or None (unmatched or offending)."""
    offending: list[str] = field(default_factory=list)
    """Ground-truth keys left unmatched because the judge's entry for them was invalid."""
    problems: list[str] = field(default_factory=list)


def normalise_pred_key(value: Optional[str]) -> Optional[str]:
    """``None``, ``"None"``, ``"null"`` and blanks all mean no match."""
    if value is None:
        return None
    text = value.strip()
    return None if text.lower() in _NONE_WORDS else text


def check_matching(answer: MatchAnswer, gt_keys: list[str], pred_keys: list[str]) -> MatchCheck:
    """Validate a matching against the keys that were asked about; salvage the valid entries."""
    gt_set, pred_set = set(gt_keys), set(pred_keys)
    problems: list[str] = []
    offending: set[str] = set()
    entries: dict[str, list[Optional[str]]] = {}
    for raw_key, pred in answer.matches.items():
        key = raw_key.strip()
        if key not in gt_set:
            problems.append(f"gt_key {raw_key!r} is not a key of G (keys: {', '.join(gt_keys)})")
            continue
        entries.setdefault(key, []).append(normalise_pred_key(pred))

    for key in gt_keys:
        given = entries.get(key, [])
        if not given:
            problems.append(f"gt_key {key!r} is missing; give one entry for every key of G")
            offending.add(key)
        elif len(given) > 1:  # " 1" and "1": the same key written twice
            problems.append(f"gt_key {key!r} appears {len(given)} times; give exactly one entry per key of G")
            offending.add(key)
        elif given[0] is not None and given[0] not in pred_set:
            problems.append(f"pred_key {given[0]!r} (for gt_key {key!r}) is not a key of P (keys: {', '.join(pred_keys) or 'none'})")
            offending.add(key)

    single = {k: v[0] for k, v in entries.items() if len(v) == 1 and k not in offending}
    uses = Counter(p for p in single.values() if p is not None)
    for pred, count in sorted(uses.items()):
        if count > 1:
            holders = sorted(k for k, p in single.items() if p == pred)
            problems.append(
                f"pred_key {pred!r} is matched to {count} ground-truth keys ({', '.join(holders)}); "
                "each key of P may be used at most once"
            )
            offending.update(holders)

    matches = {k: (None if k in offending else single[k]) for k in gt_keys}
    return MatchCheck(matches=matches, offending=[k for k in gt_keys if k in offending], problems=problems)


def parse_match_answer(raw: str) -> Optional[MatchAnswer]:
    """Best-effort parse of a rejected answer's text (for salvage); ``None`` if it is not a matching at all."""
    start, end = raw.find("{"), raw.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        return MatchAnswer.model_validate(json.loads(raw[start : end + 1]))
    except (ValueError, ValidationError):
        return None


def flip_problem(answer: FlipAnswer, n_pairs: int) -> Optional[str]:
    """Why a flip answer for a batch of ``n_pairs`` is unusable, or ``None``."""
    if len(answer.results) != n_pairs:
        return f"expected exactly {n_pairs} result(s) (one per pair), got {len(answer.results)}"
    return None
