"""Pairs without an action description (ViDiC-1K): the differencer must not claim an action or people."""

from __future__ import annotations

import json

from viddiff.config import DifferencerConfig
from viddiff.differencer import prompts


def test_empty_action_is_two_videos_compared(vlm) -> None:
    vlm.answer(lambda req: json.dumps({"answer_detailed": "", "answer": "c"}))
    abc = DifferencerConfig(model="fake-vlm", options="abc")  # describe mode always allows "c"
    assert vlm.judge(action="  ", cfg=abc).prediction == "c"
    vlm.judge(action="barbell squat", cfg=abc)

    no_action, with_action = vlm.requests
    assert no_action.messages[0]["content"] == prompts.SYSTEM_NO_ACTION
    assert prompt(no_action).startswith("Two videos are compared.\nThe first image")
    # with an action, the request is the one VidDiffBench runs have always sent (so their caches stay valid)
    assert with_action.messages[0]["content"] == prompts.SYSTEM
    assert prompt(with_action).startswith('Two videos show people performing this action: "barbell squat".\n')


def prompt(req) -> str:
    """The text part of the user message (before the images)."""
    return req.messages[1]["content"][0]["text"]
