"""``proposer.calls: one``: differences, stages and links from one structured call, repaired like the rest."""

from __future__ import annotations

import pytest

from viddiff.backends.json_schema import declared_schema
from viddiff.config import ProposerConfig
from viddiff.proposer.answers import proposal_answer
from viddiff.schema import Difference, Proposal

ONE = ProposerConfig(model="fake-model", n_retrieval_keys=3, calls="one")
GIVEN = [
    Difference(key="0", name="depth", description="the squat is deeper"),
    Difference(key="1", name="speed", description="the ascent is faster"),
    Difference(key="2", name="camera", description="the camera is closer", scope="global"),
]


def _link(stage: str, *refs: object) -> dict:
    return {"stage": stage, "differences": list(refs)}


def listed_ids(req) -> list[str]:
    block = req.text.split("(id: statement):\n", 1)[1].split("\n\n", 1)[0]
    return [line.split(":", 1)[0] for line in block.splitlines()]


def test_closed_mode_asks_once_for_stages_and_links_of_the_local_differences(harness) -> None:
    stages = harness.STAGES

    def answer(req):
        assert listed_ids(req) == ["0", "1"]  # the global difference is visible throughout: not asked about
        return {"stages": stages, "links": [_link("stage one", "0"), _link("stage three", "1", "0")]}

    harness.script(one=[answer])
    proposal = harness.propose(differences=GIVEN, cfg=ONE)

    assert harness.kinds() == ["one"]
    assert [s.name for s in proposal.stages] == [s["name"] for s in stages]
    assert proposal.stages[0].retrieval_strings == stages[0]["retrieval_strings"]  # no refinement call
    assert proposal.links == {"0": [0, 2], "1": [2], "2": [0, 1, 2]}
    assert proposal.notes == []
    Proposal.model_validate(proposal.model_dump())
    schema = harness.of("one")[0].json_schema
    assert "differences" not in schema["properties"]  # closed mode: the differences are given


def test_open_mode_links_name_the_differences_and_are_mapped_to_keys(harness) -> None:
    stages, differences = harness.STAGES, harness.DIFFERENCES
    answer = {
        "differences": differences,
        "stages": stages,
        "links": [_link("stage one", "Depth"), _link("Stage_Twoo", "speed ", "depht")],
    }
    harness.script(one=[answer])
    proposal = harness.propose(n_differences=2, cfg=ONE)

    assert harness.kinds() == ["one"]
    assert [(d.key, d.name, d.query_string) for d in proposal.differences] == [
        ("0", "depth", "the hips go lower"),
        ("1", "speed", "the ascent is faster"),  # an empty query string falls back to the statement
    ]
    assert proposal.links == {"0": [0, 1], "1": [1]}
    assert any("'Stage_Twoo' matched to 'stage two'" in n for n in proposal.notes)
    assert any("'depht' matched to key '0'" in n for n in proposal.notes)
    assert not any("Depth" in n or "speed" in n for n in proposal.notes)  # names are what the prompt asks for
    assert harness.of("one")[0].json_schema["properties"]["differences"]["maxItems"] == 2


def test_an_unlinked_difference_falls_back_to_the_middle_stage(harness) -> None:
    stages, differences = harness.STAGES, harness.DIFFERENCES
    harness.script(one=[{"differences": differences, "stages": stages, "links": [_link("cool-down", "depth")]}])
    proposal = harness.propose(n_differences=2, cfg=ONE)

    assert proposal.links == {"0": [1], "1": [1]}
    assert any("unknown stage 'cool-down'" in n for n in proposal.notes)
    assert any("'1' linked to no stage" in n for n in proposal.notes)


def test_only_global_differences_need_no_call(harness) -> None:
    proposal = harness.propose(differences=[GIVEN[2]], cfg=ONE)
    assert harness.kinds() == []
    assert [s.name for s in proposal.stages] == ["whole video"]


def test_given_stages_are_only_linked(harness) -> None:
    """A stage plan shared by an action's samples (``reuse_per_action``) comes from the separate calls."""
    stages = harness.propose(differences=GIVEN[:2], cfg=ONE).stages
    harness.server.reset_log()
    harness.propose(differences=GIVEN[:2], stages=stages, cfg=ONE)
    assert harness.kinds() == ["links"]


@pytest.mark.parametrize("n_differences", [None, 3])
def test_the_schema_states_the_stage_and_string_limits(n_differences) -> None:
    schema = declared_schema(proposal_answer(4, 5, ids=["0", "1"], n_differences=n_differences))
    stages = schema["properties"]["stages"]
    assert (stages["minItems"], stages["maxItems"]) == (1, 4)
    stage = schema["$defs"]["ProposedStage"]["properties"]["retrieval_strings"]
    assert stage["minItems"] == 5 and stage["uniqueItems"] is True
    assert list(schema["properties"])[0] == ("differences" if n_differences else "stages")
