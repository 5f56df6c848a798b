"""Linking differences to stages: fuzzy repairs with a threshold, middle-stage fallback, a valid Proposal."""

from __future__ import annotations

import pytest

from viddiff.config import EndpointsConfig, ProposerConfig
from viddiff.schema import Difference, Proposal

MAX_ATTEMPTS = EndpointsConfig().max_reasks + 1
NO_REFINE = ProposerConfig(model="fake-model", n_retrieval_keys=3, refine_retrieval_strings=False)
GIVEN = [
    Difference(key="0", name="depth", description="the squat is deeper"),
    Difference(key="1", name="speed", description="the ascent is faster"),
    Difference(key="2", name="stance width", description="the feet are wider apart"),
    Difference(key="3", name="bar path", description="the bar moves in a straight line"),
]


def _link(stage: str, *refs: object) -> dict:
    return {"stage": stage, "differences": list(refs)}


def test_exact_links_are_kept_and_the_proposal_is_valid(harness) -> None:
    links = {"links": [_link("stage one", "0", "2"), _link("stage two", "0", "1"), _link("stage three", "3", "1")]}
    harness.script(links=[links])
    proposal = harness.propose(differences=GIVEN, cfg=NO_REFINE)

    assert proposal.links == {"0": [0, 1], "1": [1, 2], "2": [0], "3": [2]}
    assert proposal.notes == []
    Proposal.model_validate(proposal.model_dump())
    (req,) = harness.of("links")
    assert "1. stage one: setup\n2. stage two: descent\n3. stage three: ascent" in req.text


def test_stage_names_are_repaired_above_the_threshold(harness) -> None:
    links = {
        "links": [
            _link("Stage one ", "0"),  # cosmetic: no note needed
            _link("stage_Twoo", "1"),  # misspelt: repaired, noted
            _link("3. stage three", "2", "3"),  # copied from the numbered listing
        ]
    }
    harness.script(links=[links])
    proposal = harness.propose(differences=GIVEN, cfg=NO_REFINE)

    assert proposal.links == {"0": [0], "1": [1], "2": [2], "3": [2]}
    assert any("'stage_Twoo' matched to 'stage two'" in n for n in proposal.notes)
    assert not any("Stage one" in n for n in proposal.notes)


def test_stage_names_far_below_the_threshold_are_not_matched(harness) -> None:
    links = {"links": [_link("stage one", "0", "1", "2"), _link("cool-down walk", "3"), _link("lockout", "3")]}
    harness.script(links=[links])
    proposal = harness.propose(differences=GIVEN, cfg=NO_REFINE)

    assert any("unknown stage 'cool-down walk'" in n for n in proposal.notes)
    assert any("unknown stage 'lockout'" in n for n in proposal.notes)
    # "3" was only linked to unknown stages, so it falls back to the middle stage.
    assert proposal.links["3"] == [1]
    assert any("'3' linked to no stage" in n for n in proposal.notes)


@pytest.mark.parametrize("threshold, expected", [(0.8, [1]), (0.6, [2])])
def test_the_threshold_decides_what_is_repaired(harness, threshold: float, expected: list[int]) -> None:
    # "stage three (ascent)" is about 0.71 similar to "stage three".
    links = {"links": [_link("stage one", "0", "1", "2"), _link("stage three (ascent)", "3")]}
    harness.script(links=[links])
    cfg = ProposerConfig(model="fake-model", n_retrieval_keys=3, refine_retrieval_strings=False, fuzzy_match_threshold=threshold)
    proposal = harness.propose(differences=GIVEN, cfg=cfg)

    assert proposal.links["3"] == expected
    assert any("unknown stage" in n for n in proposal.notes) == (threshold == 0.8)


def test_differences_referenced_by_name_statement_or_number_are_repaired(harness) -> None:
    links = {
        "links": [
            _link("stage one", "Stance-Width", 0),  # by name; JSON number as id
            _link("stage two", "the ascent is faster"),  # by its statement
            _link("stage three", "3: the bar moves in a straight line", "hip hinge"),  # listing line; unknown
        ]
    }
    harness.script(links=[links])
    proposal = harness.propose(differences=GIVEN, cfg=NO_REFINE)

    assert proposal.links == {"0": [0], "1": [1], "2": [0], "3": [2]}
    assert any("'Stance-Width' matched to key '2'" in n for n in proposal.notes)
    assert any("'the ascent is faster' matched to key '1'" in n for n in proposal.notes)
    assert any("unknown difference 'hip hinge'" in n for n in proposal.notes)


def test_unlinked_difference_falls_back_to_the_middle_stage(harness) -> None:
    harness.script(links=[{"links": [_link("stage one", "0", "1", "2")]}])
    proposal = harness.propose(differences=GIVEN, cfg=NO_REFINE)

    assert proposal.links == {"0": [0], "1": [0], "2": [0], "3": [1]}
    assert any("'3' linked to no stage" in n and "'stage two'" in n for n in proposal.notes)


def test_linking_that_stays_invalid_falls_back_for_every_difference(harness) -> None:
    harness.script(links=[{"links": "stage one: 0, 1"}])
    proposal = harness.propose(differences=GIVEN, cfg=NO_REFINE)

    assert harness.kinds().count("links") == MAX_ATTEMPTS
    assert proposal.links == {k: [1] for k in "0123"}
    assert any("linking failed" in n for n in proposal.notes)
    assert sum("linked to no stage" in n for n in proposal.notes) == 4


def test_middle_stage_of_an_even_count_is_the_later_one_as_released(harness, stages: list[dict]) -> None:
    # the authors' proposer assigns unlinked differences to stage n_stages // 2
    harness.script(stages=[{"stages": stages[:2]}], links=[{"links": []}])
    proposal = harness.propose(differences=GIVEN[:1], cfg=NO_REFINE)
    assert proposal.links == {"0": [1]}
    assert len(proposal.stages) == 2


def test_open_mode_links_use_the_assigned_keys(harness) -> None:
    harness.script(
        links=[{"links": [_link("stage two", "0"), _link("stage three", "1"), _link("stage one", "speed")]}]
    )
    proposal = harness.propose(n_differences=2)

    assert harness.kinds() == ["differences", "stages", "refine", "links"]
    assert proposal.links == {"0": [1], "1": [0, 2]}
    assert all(0 <= i < len(proposal.stages) for idx in proposal.links.values() for i in idx)
