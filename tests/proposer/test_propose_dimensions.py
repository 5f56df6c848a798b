"""Describe mode: differences along the seven ViDiC-1K dimensions, global ones linked without the LLM."""

from __future__ import annotations

import copy

import pytest

from viddiff.benchmarks.vidic.data import CATEGORIES
from viddiff.errors import ViddiffError
from viddiff.proposer import prompts
from viddiff.proposer.answers import dimension_key
from viddiff.proposer.propose import WHOLE_VIDEO
from viddiff.schema import Difference
from viddiff.testing.fake_openai import ChatRequest


def dimension_answer(harness, **changes_per_item: dict) -> dict:
    """The harness's default answer with per-item changes: ``i1={"scope": "global"}`` edits the second item."""
    items = copy.deepcopy(harness.DIMENSION_DIFFERENCES)
    for index, changes in changes_per_item.items():
        items[int(index[1:])].update(changes)
    return {"differences": items}


def listed_ids(req: ChatRequest) -> list[str]:
    """Difference ids listed in a links request."""
    block = req.text.split("(id: statement):\n", 1)[1].split("\n\n", 1)[0]
    return [line.split(":", 1)[0] for line in block.splitlines()]


def test_the_prompt_lists_the_benchmark_categories_in_order() -> None:
    assert tuple(prompts.DIMENSIONS) == CATEGORIES
    text = prompts.dimension_differences("", 10)
    assert "List 10 candidate differences" in text
    for key in CATEGORIES:
        assert f"\n- {key}: " in text


def test_describe_mode_keeps_category_scope_and_contrast_and_links_global_to_every_stage(harness) -> None:
    proposal = harness.describe(n=2)

    camera, motion = proposal.differences
    assert (camera.key, camera.category, camera.scope) == ("0", "camera", "global")
    assert camera.contrast == "the camera is further from the subject"
    assert camera.query_string == camera.description  # blank query string falls back to the statement
    assert (motion.category, motion.scope, motion.num_frames) == ("motion", "local", "gt_1")
    assert motion.query_string == "the hands rise above the head"
    assert harness.kinds() == ["dimensions", "stages", "refine", "links"]
    # Only the local difference is put to the linking LLM; the global one spans every stage.
    (links_request,) = harness.of("links")
    assert listed_ids(links_request) == ["1"]
    assert proposal.links == {"0": [0, 1, 2], "1": [0]}


def test_only_global_differences_need_no_stage_plan(harness) -> None:
    harness.script(dimensions=[dimension_answer(harness, i1={"scope": "global"})])
    proposal = harness.describe(n=2)

    assert harness.kinds() == ["dimensions"]
    assert proposal.stages == [WHOLE_VIDEO]
    assert proposal.links == {"0": [0], "1": [0]}


def test_given_global_differences_skip_linking_in_closed_mode_too(harness) -> None:
    given = [Difference(key="x", name="light", description="the scene is brighter", scope="global")]
    proposal = harness.propose(differences=given)
    assert harness.kinds() == []
    assert proposal.links == {"x": [0]}


def test_label_variants_are_folded_and_unknown_categories_reasked(harness) -> None:
    variant = dimension_answer(
        harness, i0={"category": "Camera work", "scope": " Global "}, i1={"category": "Playback technique"}
    )
    harness.script(dimensions=[dimension_answer(harness, i1={"category": "sound"}), variant])
    proposal = harness.describe(n=2)

    first, second = harness.of("dimensions")
    assert "differences.1.category: Input should be 'subject', 'style'" in second.text
    assert [(d.category, d.scope) for d in proposal.differences] == [("camera", "global"), ("playback", "local")]


def test_more_differences_than_asked_are_reasked(harness) -> None:
    harness.script(dimensions=[dimension_answer(harness), dimension_answer(harness)])
    with pytest.raises(ViddiffError, match="no valid DimensionDifferencesAnswer"):
        harness.describe(n=1)
    assert "differences: List should have at most 1 item" in harness.of("dimensions")[-1].text


def test_n_must_be_positive(harness) -> None:
    with pytest.raises(ViddiffError, match="proposer.describe_n_differences"):
        harness.describe(n=0)
    assert harness.kinds() == []


def test_an_empty_action_reads_as_two_undescribed_videos(harness) -> None:
    harness.describe(action="", n=2)
    for req in harness.server.requests:
        assert req.text.count("Two videos are compared.") == 1
        assert 'this action: ""' not in req.text
    harness.server.requests.clear()
    harness.describe(action="juggling", n=2)
    assert all('Two videos show people performing this action: "juggling".' in r.text for r in harness.server.requests)


@pytest.mark.parametrize(
    "raw, key",
    [
        ("camera", "camera"),
        ("  Background ", "background"),
        ("playback technique", "playback"),
        ("subject_appearance", "subject"),
        ("postion", "position"),
        ("camera motion", None),
        ("audio", None),
    ],
)
def test_dimension_key(raw: str, key: str | None) -> None:
    assert dimension_key(raw, 0.8) == key
