"""Size caps alone: text counted without images, each cap optional, messages that name the setting."""

from __future__ import annotations

import numpy as np
import pytest

from viddiff.backends.llm.limits import MAX_RAW_KEPT, check_answer_size, check_request_size, text_chars
from viddiff.backends.messages import system_message, user_message
from viddiff.errors import InvalidAnswerError, RequestTooLargeError


def test_only_text_counts() -> None:
    messages = [system_message("abc"), user_message("de", np.zeros((64, 64, 3), np.uint8), "f")]
    assert text_chars(messages) == 6


def test_request_cap() -> None:
    check_request_size([user_message("x" * 10)], "m", "s", 10)
    check_request_size([user_message("x" * 10**6)], "m", "s", None)
    with pytest.raises(RequestTooLargeError, match=r"holds 11 characters of text, over endpoints.max_prompt_chars=10"):
        check_request_size([user_message("x" * 11)], "m", "s", 10)


def test_answer_cap_keeps_only_the_start_of_the_answer() -> None:
    check_answer_size(None, "m", "s", 1)
    check_answer_size("x" * 10**6, "m", "s", None)
    with pytest.raises(InvalidAnswerError, match="over endpoints.max_answer_chars=10") as info:
        check_answer_size("y" * 5000, "m", "s", 10)
    assert info.value.raw == "y" * MAX_RAW_KEPT
