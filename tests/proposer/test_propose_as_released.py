"""The proposer as released (configs/paper.yaml): its prompts' content without a system message, counts only
asked for, the refinement taken wholesale, differences linked to stages by name."""

from __future__ import annotations

import json

from viddiff.config import ProposerConfig
from viddiff.schema import Difference

RELEASED = ProposerConfig(
    model="fake-model", n_retrieval_keys=3, max_stages=3, prompt_style="release", enforce_counts=False,
    refinement="wholesale", link_by="name",
)
GIVEN = [
    Difference(key="3", name="depth", description="the squat is deeper", num_frames="1"),
    Difference(key="7", name="speed", description="the ascent is faster", num_frames="gt_1"),
    Difference(key="9", name="stance width", description="the feet are wider apart"),
]


def _roles(req) -> list[str]:
    return [m["role"] for m in req.messages]


def test_release_style_sends_no_system_message_and_no_persona(harness) -> None:
    harness.script(links=[{"stage one": ["depth", "speed", "stance width"]}])
    harness.propose(n_differences=2, cfg=RELEASED)
    assert sorted(set(harness.kinds())) == ["differences", "links", "refine", "stages"]
    for req in harness.server.requests:
        assert _roles(req) == ["user"], harness.kinds()
        assert "coach" not in req.text.lower()
    differences = harness.of("differences")[0].text
    assert "Suggest 2 differences" in differences and "individual frames" in differences
    stages = harness.of("stages")[0].text
    assert "3 stages or fewer" in stages and "at least 3" in stages


def test_project_style_sends_its_coach_system_message(harness) -> None:
    harness.propose(n_differences=2, cfg=ProposerConfig(model="fake-model", n_retrieval_keys=3))
    assert all(_roles(req) == ["system", "user"] for req in harness.server.requests)
    assert "coach" in harness.server.requests[0].messages[0]["content"]


def test_counts_are_only_asked_for_when_not_enforced(harness, stages) -> None:
    """The release takes any non-empty lists; under enforce_counts=false no answer is re-asked for its counts."""
    short = [{**s, "retrieval_strings": s["retrieval_strings"][:1]} for s in stages]
    four = short + [{"name": "stage four", "description": "rest", "retrieval_strings": ["A photo of a person resting"]}]
    many = [dict(d, name=f"{d['name']} {i}") for i in range(3) for d in harness.DIFFERENCES]  # 6 for N = 2
    harness.script(stages=[{"stages": four}], differences=[{"differences": many}], refine=[{"stages": four}])
    lenient = RELEASED.model_copy(update={"link_by": "id"})
    proposal = harness.propose(n_differences=2, cfg=lenient)
    assert len(harness.of("stages")) == 1 and len(harness.of("differences")) == 1  # nothing re-asked
    assert len(proposal.stages) == 4 and all(len(s.retrieval_strings) == 1 for s in proposal.stages)
    assert len(proposal.differences) == 6  # more than N: left to eval.n_diff_policy, as the release leaves it
    assert any("1 distinct retrieval strings (3 asked for)" in n for n in proposal.notes)

    harness.server.requests.clear()
    harness.script(stages=[{"stages": four}, {"stages": stages}])
    enforced = harness.propose(n_differences=2, cfg=ProposerConfig(model="fake-model", n_retrieval_keys=3, max_stages=3))
    assert len(harness.of("stages")) == 2 and len(enforced.stages) == 3  # the default re-asks


def test_wholesale_refinement_replaces_the_plan_as_returned(harness, stages) -> None:
    refined = [
        {"name": "set up", "description": "getting ready", "retrieval_strings": ["A photo of a person gripping a bar"]},
        {**stages[2], "retrieval_strings": stages[2]["retrieval_strings"][1:]},
    ]
    harness.script(refine=[{"stages": refined}], links=[{"set up": ["depth"], "stage three": ["speed", "stance width"]}])
    proposal = harness.propose(differences=GIVEN, cfg=RELEASED)

    assert [s.name for s in proposal.stages] == ["set up", "stage three"]
    assert proposal.stages[0].retrieval_strings == ["A photo of a person gripping a bar"]  # a new string, kept
    assert proposal.links == {"3": [0], "7": [1], "9": [1]}
    assert any("taken as returned" in n for n in proposal.notes)
    # the refinement saw the whole plan as indented JSON, as the release shows it
    (req,) = harness.of("refine")
    shown = json.loads(req.text.split("look like:\n", 1)[1].split("\n\n", 1)[0])
    assert shown == {"stages": harness.STAGES}


def test_keep_known_refinement_ignores_what_wholesale_takes(harness, stages) -> None:
    refined = [{"name": "set up", "description": "", "retrieval_strings": ["A photo of a person gripping a bar"]}]
    harness.script(refine=[{"stages": refined}])
    proposal = harness.propose(differences=GIVEN, cfg=ProposerConfig(model="fake-model", n_retrieval_keys=3))
    assert [s.name for s in proposal.stages] == [s["name"] for s in stages]
    assert [s.retrieval_strings for s in proposal.stages] == [s["retrieval_strings"] for s in stages]


def test_links_by_name_repair_as_released(harness) -> None:
    links = {
        "Stage Twoo": ["depth", "sped"],  # a misspelt stage (repaired above the threshold) and difference
        "cool-down walk": ["stance width"],  # an unknown stage: dropped
        "stage three": ["the bar path"],  # no such difference: the nearest name, however far
    }
    harness.script(links=[links])
    proposal = harness.propose(differences=GIVEN, cfg=RELEASED.model_copy(update={"refinement": "keep_known"}))

    # "the bar path" is nearest to "depth" (similarity 0.24, far below the 0.8 threshold for stages)
    assert proposal.links == {"3": [1, 2], "7": [1], "9": [1]}  # "9" only under a dropped stage: the middle one
    notes = " | ".join(proposal.notes)
    assert "'Stage Twoo' matched to 'stage two'" in notes and "unknown stage 'cool-down walk'" in notes
    assert "'sped' matched to the nearest name 'speed'" in notes
    assert "'the bar path' matched to the nearest name 'depth'" in notes
    assert "difference '9' linked to no stage" in notes

    (req,) = harness.of("links")
    listed = json.loads(req.text.split("than of the other:\n", 1)[1].split("\n\n", 1)[0])
    assert listed == {
        "3": {"name": "depth", "description": "the squat is deeper", "query_string": "the squat is deeper", "num_frames": "1"},
        "7": {"name": "speed", "description": "the ascent is faster", "query_string": "the ascent is faster",
              "num_frames": "gt_1"},
        "9": {"name": "stance width", "description": "the feet are wider apart",
              "query_string": "the feet are wider apart", "num_frames": "1"},
    }
    assert req.response_format["json_schema"]["schema"]["type"] == "object"


def test_links_by_name_number_repeated_names(harness) -> None:
    twins = [GIVEN[0], GIVEN[1].model_copy(update={"name": "depth"})]
    harness.script(links=[{"stage one": ["depth"], "stage three": ["depth (2)"]}])
    proposal = harness.propose(differences=twins, cfg=RELEASED.model_copy(update={"refinement": "keep_known"}))
    assert proposal.links == {"3": [0], "7": [2]}
    assert '"name": "depth (2)"' in harness.of("links")[0].text


def test_describe_mode_keeps_its_own_prompt_and_system_message(harness) -> None:
    """The release has no describe mode: its dimension proposal stays this project's, system message included."""
    harness.script(links=[{"stage one": ["arm swing"]}])
    proposal = harness.describe(cfg=RELEASED)
    assert [_roles(r) for r in harness.of("dimensions")] == [["system", "user"]]
    assert all(_roles(r) == ["user"] for r in harness.of("stages") + harness.of("links"))
    assert proposal.links["1"] == [0]
