"""The differencer as released (configs/paper.yaml): its neutral system message, json_object answers asked
once, an invalid answer recorded as invalid (never mapped to ``a``), repeated frames said to be 0.00 s apart."""

from __future__ import annotations

import json

import numpy as np
import pytest

from viddiff.config import DifferencerConfig

RELEASED = DifferencerConfig(model="fake-vlm", prompt_style="release")
AS_RELEASED = {"response_format": "json_object", "max_reasks": 0}


def test_release_style_sends_the_neutral_system_message_and_its_question(vlm) -> None:
    vlm.answer(lambda req: json.dumps({"answer_detailed": "video A is deeper", "answer": "a"}))
    prediction = vlm.judge(cfg=RELEASED, endpoints=AS_RELEASED)
    (req,) = vlm.requests
    system, user = req.messages
    assert system["role"] == "system" and "coach" not in system["content"]
    assert "public machine-learning dataset" in system["content"] and "real world" in system["content"]
    assert req.response_format == {"type": "json_object"}
    assert "Which video shows more of what the statement describes?" in req.text
    assert 'Statement: "the squat is deeper"' in req.text and "The answer must be \"a\" or \"b\"" in req.text
    assert prediction.prediction == "a"


def test_project_style_keeps_the_coach(vlm) -> None:
    vlm.answer(lambda req: json.dumps({"answer_detailed": "", "answer": "b"}))
    vlm.judge()
    assert "expert coach" in vlm.requests[0].messages[0]["content"]


@pytest.mark.parametrize("answer", ["maybe", "a|b", "", "c"])
def test_an_invalid_answer_is_asked_once_and_recorded_invalid(vlm, answer) -> None:
    """The release maps any answer but a/b/c to ``a`` (a defect fixed here, declared); with no re-asks the
    answer is recorded as invalid after exactly one call: prediction null, which scores wrong."""
    vlm.answer(lambda req: json.dumps({"answer_detailed": "unsure", "answer": answer}))
    prediction = vlm.judge(cfg=RELEASED, endpoints=AS_RELEASED)
    assert len(vlm.requests) == 1
    assert prediction.prediction is None and prediction.votes == []
    assert json.loads(prediction.raw_answers[0])["answer"] == answer


def test_the_default_re_asks_an_invalid_answer(vlm) -> None:
    vlm.answer(lambda req: json.dumps({"answer_detailed": "unsure", "answer": "maybe"}))
    assert vlm.judge().prediction is None
    assert len(vlm.requests) == 3  # 1 + endpoints.max_reasks (2)


def test_repeated_frames_are_said_to_be_zero_seconds_apart(vlm) -> None:
    """At 1 fps the release sends one frame three times per video and says they are 0.00 s apart."""
    vlm.answer(lambda req: json.dumps({"answer_detailed": "", "answer": "b"}))
    frame_a, frame_b = np.full((16, 16, 3), 200, np.uint8), np.full((16, 16, 3), 50, np.uint8)
    vlm.judge([frame_a] * 3, [frame_b] * 3, cfg=RELEASED, seconds_between_frames=0.0, endpoints=AS_RELEASED)
    (req,) = vlm.requests
    assert len(req.images) == 6
    assert "The first 3 images are frames from video A and the last 3 images are frames from video B" in req.text
    assert "very close in time: 0.00 seconds apart" in req.text
