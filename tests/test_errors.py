"""The one error a predictions reader raises for all the problems it found."""

from viddiff.errors import PredictionFormatError, bulleted, problems_error


def test_problems_error_lists_twenty_then_counts_the_rest():
    problems = [f"item {i}: no response" for i in range(23)]
    error = problems_error("answers.json", problems, "expected a list", about="VidPair-Halluc answers")
    assert isinstance(error, PredictionFormatError)
    lines = str(error).splitlines()
    assert lines[0] == "answers.json: 23 problem(s) with VidPair-Halluc answers (expected a list):"
    assert lines[1:21] == [f"  - item {i}: no response" for i in range(20)]
    assert lines[21:] == ["  ... and 3 more"]


def test_a_short_list_has_no_tail_and_about_is_optional():
    assert str(problems_error("f.json", ["a", "b"], "help")) == "f.json: 2 problem(s) (help):\n  - a\n  - b"
    assert bulleted(["x"] * 20) == "\n".join(["  - x"] * 20)
