"""Fuzzy name matching: cosmetic variants match, distant names do not, aliases map back to their owner."""

from __future__ import annotations

from viddiff.proposer.matching import best_match, best_owner, normalise, same


def test_normalise_folds_case_separators_and_spaces() -> None:
    assert normalise("  Knee_Angle -at\tBottom ") == "knee angle at bottom"
    assert same("Stage one ", "stage-ONE")
    assert not same("stage one", "stage two")


def test_best_match_respects_the_threshold() -> None:
    names = ["setup", "descent", "ascent"]
    assert best_match("Descending", names, 0.8) is None  # 0.71 similar to "descent"
    assert best_match("Descending", names, 0.7) == 1
    assert best_match("ascent ", names, 1.0) == 2
    assert best_match("walk out", names, 0.5) is None
    assert best_match("anything", [], 0.0) is None


def test_best_owner_maps_any_alias_to_its_item() -> None:
    aliases = [["0: the squat is deeper", "depth", "the squat is deeper"], ["1: faster", "speed", "faster"]]
    assert best_owner("Depth", aliases, 0.8) == 0
    assert best_owner("1: faster", aliases, 0.8) == 1
    assert best_owner("the squat is deeper.", aliases, 0.8) == 0
    assert best_owner("grip width", aliases, 0.8) is None


def test_ties_go_to_the_earlier_item() -> None:
    assert best_owner("stage", [["stage a"], ["stage b"]], 0.5) == 0
