"""Baseline answer schemas and prompts: what the model is told and what is accepted from it."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from viddiff.methods.lmm import prompts
from viddiff.methods.lmm.answers import OpenAnswer, closed_answer_model, closed_letters


def test_closed_schema_requires_exactly_the_asked_keys() -> None:
    model = closed_answer_model(["0", "3", "10"])
    schema = model.model_json_schema()
    assert schema["title"] == "ClosedAnswer"
    assert schema["required"] == ["0", "3", "10"] and schema["additionalProperties"] is False
    answer = model.model_validate_json('{"0": "a", "3": "b", "10": "a"}')
    assert closed_letters(answer) == {"0": "a", "3": "b", "10": "a"}
    for bad in ('{"0": "a", "3": "b"}', '{"0": "a", "3": "b", "10": "a", "4": "b"}', '{"0": "c", "3": "b", "10": "a"}'):
        with pytest.raises(ValidationError):
            model.model_validate_json(bad)


def test_open_answer_strips_and_rejects_empty_statements() -> None:
    answer = OpenAnswer.model_validate_json('{"differences": [{"description": "  deeper squat ", "prediction": "b"}]}')
    assert answer.differences[0].description == "deeper squat"
    for bad in ('{"differences": [{"description": "  ", "prediction": "a"}]}',
                '{"differences": [{"description": "x", "prediction": "c"}]}'):
        with pytest.raises(ValidationError):
            OpenAnswer.model_validate_json(bad)


def test_prompts_state_frame_layout_and_rates() -> None:
    same = prompts.video_layout(6, 8, 2.0, 2.0, as_video=False)
    assert "first 6 images are the frames of video A" in same and "following 8 images" in same
    assert "2 frames per second (0.5 s between frames)" in same
    mixed = prompts.video_layout(6, 8, 4.0, 5.0, as_video=True)
    assert "A at 4 frames per second" in mixed and "B at 5 frames per second" in mixed
    closed = prompts.closed_prompt("a squat", same, {"0": "the squat is deeper", "2": "the stance is wider"})
    assert '"0": the squat is deeper' in closed and '"2": the stance is wider' in closed
    assert "at most 7 differences" in prompts.open_prompt("a squat", same, 7)


def test_release_prompts_carry_the_released_content_and_nothing_added() -> None:
    """``baseline.prompt_style=release``: no advice on what to look at or leave out, which the project's
    prompts add (its open-mode focus on coaching raises recall against the paper's Table 3)."""
    layout = prompts.release_layout(6, 8, 4.0, 4.0, as_video=False)
    assert "first 6 images are video A and the last 8 images are video B" in layout
    assert "same for both, 4 frames per second" in layout
    statements = {"0": "the squat is deeper", "2": "the stance is wider"}
    released_open = prompts.release_open_prompt("a squat", layout, 7)
    released_closed = prompts.release_closed_prompt("a squat", layout, statements)
    ours_open = prompts.open_prompt("a squat", layout, 7)
    ours_closed = prompts.closed_prompt("a squat", layout, statements)
    for added in ("coach", "background", "clothing", "camera"):
        assert added in ours_open and added not in released_open
    assert "Look carefully" in ours_closed and "Look carefully" not in released_closed
    assert "at most 7 differences" in released_open and 'not "the jump in video B is higher"' in released_open
    assert '"0": "the squat is deeper"' in released_closed and '"2": "the stance is wider"' in released_closed
