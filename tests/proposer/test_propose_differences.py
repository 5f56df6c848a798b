"""Open-mode difference proposals and closed-mode input, through the real client and the fake server."""

from __future__ import annotations

import pytest

from viddiff.config import EndpointsConfig
from viddiff.errors import InvalidAnswerError, ViddiffError
from viddiff.schema import Difference

MAX_ATTEMPTS = EndpointsConfig().max_reasks + 1


def _diff(name: str, description: str = "", **kw: str) -> dict:
    return {"name": name, "description": description or f"the {name} is greater", **kw}


def test_open_mode_assigns_keys_and_keeps_fields(harness) -> None:
    answer = {
        "differences": [
            _diff("depth", "the squat is deeper", query_string="the hips are lower", num_frames="1"),
            _diff("speed", "the ascent is faster", num_frames="gt_1"),
            _diff("  stance ", " the stance is wider ", query_string="   "),
        ]
    }
    harness.script(differences=[answer])
    proposal = harness.propose(n_differences=3)

    assert [d.key for d in proposal.differences] == ["0", "1", "2"]
    assert [d.num_frames for d in proposal.differences] == ["1", "gt_1", "1"]
    assert proposal.differences[0].query_string == "the hips are lower"
    # Missing or blank query strings fall back to the description; display text is stripped.
    assert proposal.differences[1].query_string == "the ascent is faster"
    assert (proposal.differences[2].name, proposal.differences[2].query_string) == ("stance", "the stance is wider")
    assert harness.kinds() == ["differences", "stages", "refine", "links"]
    (req,) = harness.of("differences")
    assert "List 3 ways" in req.text and '"barbell squat"' in req.text


def test_too_many_differences_are_reasked_and_the_valid_answer_used(harness) -> None:
    too_many = {"differences": [_diff(n) for n in ("depth", "speed", "stance")]}
    valid = {"differences": [_diff("knee angle"), _diff("back angle")]}
    harness.script(differences=[too_many, valid])
    proposal = harness.propose(n_differences=2)

    first, second = harness.of("differences")
    assert "differences: List should have at most 2 items" in second.text
    assert [d.name for d in proposal.differences] == ["knee angle", "back angle"]
    assert [d.key for d in proposal.differences] == ["0", "1"]


def test_blank_names_are_reasked(harness) -> None:
    bad = {"differences": [{"name": n, "description": f"statement {i}"} for i, n in enumerate(["depth", "   "])]}
    valid = {"differences": [_diff("depth"), _diff("speed")]}
    harness.script(differences=[bad, valid])
    proposal = harness.propose(n_differences=2)

    first, second = harness.of("differences")
    assert "differences.1.name" in second.text
    assert [d.name for d in proposal.differences] == ["depth", "speed"]


def test_repeated_names_are_dropped_not_reasked(harness) -> None:
    """JSON Schema cannot ask for distinct names, so a schema-following answer with a repeat is kept, less the repeat."""
    harness.script(differences=[{"differences": [_diff("knee angle"), _diff("Knee_Angle"), _diff("speed")]}])
    proposal = harness.propose(n_differences=3)

    assert len(harness.of("differences")) == 1
    assert [(d.key, d.name) for d in proposal.differences] == [("0", "knee angle"), ("1", "speed")]


def test_differences_that_stay_invalid_raise(harness) -> None:
    harness.script(differences=[{"differences": []}])
    with pytest.raises(InvalidAnswerError, match="DifferencesAnswer"):
        harness.propose(n_differences=2)
    assert harness.kinds() == ["differences"] * MAX_ATTEMPTS


def test_closed_mode_makes_no_differences_call_and_keeps_keys(harness) -> None:
    given = [
        Difference(key="7", name="depth", description="the squat is deeper"),
        Difference(key="12", name="speed", description="the ascent is faster", num_frames="gt_1"),
    ]
    proposal = harness.propose(differences=given)

    assert "differences" not in harness.kinds()
    assert proposal.differences == given
    assert proposal.links == {"7": [0], "12": [0]}
    (links_req,) = harness.of("links")
    assert "7: the squat is deeper" in links_req.text and "12: the ascent is faster" in links_req.text


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"n_differences": 0}, "n_differences >= 1"),
        ({}, "n_differences >= 1"),
        ({"differences": []}, "empty list of differences"),
        (
            {"differences": [Difference(key="1", name="a", description="x"), Difference(key="1", name="b", description="y")]},
            "must be distinct",
        ),
    ],
    ids=["zero", "missing", "empty-closed", "duplicate-keys"],
)
def test_bad_inputs_raise_before_any_call(harness, kwargs: dict, message: str) -> None:
    with pytest.raises(ViddiffError, match=message):
        harness.propose(**kwargs)
    assert harness.kinds() == []
