"""Stage proposals and retrieval-string refinement, through the real client and the fake server."""

from __future__ import annotations

import pytest

from viddiff.config import EndpointsConfig, ProposerConfig

MAX_ATTEMPTS = EndpointsConfig().max_reasks + 1


def _strings(stages: list[dict]) -> list[list[str]]:
    return [s["retrieval_strings"] for s in stages]


def test_stages_are_stripped_and_deduplicated(harness, stages: list[dict]) -> None:
    stages[0]["name"] = "  stage one \n"
    stages[1]["retrieval_strings"] = ["  A photo of a person with knees bent ", *stages[1]["retrieval_strings"]]
    harness.script(stages=[{"stages": stages}])
    proposal = harness.propose(n_differences=2, cfg=ProposerConfig(model="fake-model", n_retrieval_keys=3, refine_retrieval_strings=False))

    assert [s.name for s in proposal.stages] == ["stage one", "stage two", "stage three"]
    assert [s.description for s in proposal.stages] == ["setup", "descent", "ascent"]
    assert [s.retrieval_strings for s in proposal.stages] == _strings(harness.STAGES)


@pytest.mark.parametrize("problem", ["too-many-stages", "too-few-strings", "duplicate-strings", "blank-string"])
def test_invalid_stages_are_reasked(harness, stages: list[dict], problem: str) -> None:
    """Each of these breaks a constraint the request's JSON schema states (maxItems, minItems, uniqueItems,
    pattern), so only a model that ignores the schema is re-asked."""
    bad = [dict(s) for s in stages]
    if problem == "too-many-stages":
        bad = bad + [{"name": "stage four", "retrieval_strings": ["A", "B", "C"]}]
        reason = "stages: List should have at most 3 items"
    elif problem == "too-few-strings":
        bad[1] = {**bad[1], "retrieval_strings": bad[1]["retrieval_strings"][:2]}
        reason = "stages.1.retrieval_strings: List should have at least 3 items"
    elif problem == "duplicate-strings":
        first = bad[2]["retrieval_strings"][0]
        bad[2] = {**bad[2], "retrieval_strings": [first, first, bad[2]["retrieval_strings"][1]]}
        reason = "the retrieval strings must be distinct"
    else:
        bad[2] = {**bad[2], "retrieval_strings": [*bad[2]["retrieval_strings"][:2], "  "]}
        reason = "stages.2.retrieval_strings.2: String should have at least 1 character"
    harness.script(stages=[{"stages": bad}, {"stages": stages}])
    proposal = harness.propose(n_differences=2, cfg=ProposerConfig(model="fake-model", n_retrieval_keys=3, max_stages=3))

    first, second = harness.of("stages")
    assert reason in second.text
    assert [s.retrieval_strings for s in proposal.stages] == _strings(harness.STAGES)


def test_repeated_stage_names_and_case_variant_strings_are_repaired_not_reasked(harness, stages: list[dict]) -> None:
    """Distinct names (up to case) cannot be stated in JSON Schema: a repeat is renamed, with a note."""
    stages[1]["name"] = "Stage_One"
    first = stages[2]["retrieval_strings"][0]
    stages[2]["retrieval_strings"] = [first, first.upper(), stages[2]["retrieval_strings"][1]]
    harness.script(stages=[{"stages": stages}])
    proposal = harness.propose(n_differences=2, cfg=ProposerConfig(model="fake-model", n_retrieval_keys=3, refine_retrieval_strings=False))

    assert len(harness.of("stages")) == 1
    assert [s.name for s in proposal.stages] == ["stage one", "Stage_One (2)", "stage three"]
    assert proposal.stages[2].retrieval_strings == [first, stages[2]["retrieval_strings"][2]]
    assert any("repeats" in n and "'Stage_One (2)'" in n for n in proposal.notes)
    assert any("2 distinct retrieval strings" in n for n in proposal.notes)


def test_stage_count_at_the_limit_is_accepted(harness) -> None:
    harness.propose(n_differences=2, cfg=ProposerConfig(model="fake-model", max_stages=3, n_retrieval_keys=3))
    assert len(harness.of("stages")) == 1
    (req,) = harness.of("stages")
    assert "at most 3 stages" in req.text and 'at least 3 "retrieval_strings"' in req.text


def test_refinement_removes_strings_and_ignores_invented_ones(harness, stages: list[dict]) -> None:
    refined = [dict(s) for s in stages]
    refined[0] = {**refined[0], "retrieval_strings": [stages[0]["retrieval_strings"][2], "A photo of a dog on a beach"]}
    refined[1] = {**refined[1], "retrieval_strings": ["A photo of a cat", "A photo of a red car parked"]}
    harness.script(refine=[{"stages": refined}])
    proposal = harness.propose(n_differences=2)

    strings = [s.retrieval_strings for s in proposal.stages]
    assert strings[0] == [harness.STAGES[0]["retrieval_strings"][2]]
    # Every string of stage two was invented: the stage keeps its originals rather than none.
    assert strings[1] == harness.STAGES[1]["retrieval_strings"]
    assert strings[2] == harness.STAGES[2]["retrieval_strings"]
    assert any("invented" in n and "dog on a beach" in n for n in proposal.notes)
    assert any("kept no known string" in n and "stage two" in n for n in proposal.notes)
    # The refinement prompt lists every stage's strings.
    (req,) = harness.of("refine")
    assert all(f'"{r}"' in req.text for s in harness.STAGES for r in s["retrieval_strings"])


def test_refinement_near_copies_map_to_the_original_with_a_note(harness, stages: list[dict]) -> None:
    original = stages[1]["retrieval_strings"][0]
    refined = [dict(s) for s in stages]
    refined[1] = {**refined[1], "name": "Stage Two ", "retrieval_strings": [original.rstrip("t") + "t."]}
    harness.script(refine=[{"stages": refined}])
    proposal = harness.propose(n_differences=2)

    assert proposal.stages[1].retrieval_strings == [original]
    assert proposal.stages[1].name == "stage two"
    assert any("taken as the original" in n for n in proposal.notes)


def test_refinement_leaving_a_stage_empty_is_reasked(harness, stages: list[dict]) -> None:
    emptied = [dict(s) for s in stages]
    emptied[2] = {**emptied[2], "retrieval_strings": [" "]}
    harness.script(refine=[{"stages": emptied}, {"stages": stages}])
    proposal = harness.propose(n_differences=2)

    first, second = harness.of("refine")
    assert "stages.2.retrieval_strings.0: String should have at least 1 character" in second.text
    assert [s.retrieval_strings for s in proposal.stages] == _strings(harness.STAGES)
    assert not proposal.notes


@pytest.mark.parametrize("problem", ["fewer-stages", "renamed-stage", "not-json"])
def test_refinement_that_stays_invalid_keeps_unrefined_stages(harness, stages: list[dict], problem: str) -> None:
    if problem == "fewer-stages":
        bad = {"stages": stages[:2]}
    elif problem == "renamed-stage":
        bad = {"stages": [stages[0], {**stages[1], "name": "preparation"}, stages[2]]}
    else:
        bad = "I would remove the second string of each stage."
    harness.script(refine=[bad])
    proposal = harness.propose(n_differences=2)

    assert harness.kinds().count("refine") == MAX_ATTEMPTS
    assert [s.retrieval_strings for s in proposal.stages] == _strings(harness.STAGES)
    assert any("refinement failed" in n and "kept the unrefined strings" in n for n in proposal.notes)


def test_no_refine_call_when_disabled(harness) -> None:
    proposal = harness.propose(n_differences=2, cfg=ProposerConfig(model="fake-model", n_retrieval_keys=3, refine_retrieval_strings=False))
    assert harness.kinds() == ["differences", "stages", "links"]
    assert [s.retrieval_strings for s in proposal.stages] == _strings(harness.STAGES)
