from viddiff.eval.matching import check_matching, flip_problem, normalise_pred_key, parse_match_answer
from viddiff.backends.json_schema import declared_schema
from viddiff.eval.prompts import FlipAnswer, MatchAnswer, flip_answer, flip_prompt, match_answer, match_prompt

GT = ["0", "1", "2"]
PRED = ["0", "1"]


def answer(*pairs) -> MatchAnswer:
    return MatchAnswer(matches=dict(pairs))


def test_valid_matching_has_no_problems() -> None:
    check = check_matching(answer(("0", "1"), ("1", None), ("2", "None")), GT, PRED)
    assert check.problems == [] and check.offending == []
    assert check.matches == {"0": "1", "1": None, "2": None}


def test_duplicate_predicted_key_unmatches_every_holder() -> None:
    check = check_matching(answer(("0", "1"), ("1", "1"), ("2", "0")), GT, PRED)
    assert check.offending == ["0", "1"]
    assert check.matches == {"0": None, "1": None, "2": "0"}
    assert "pred_key '1' is matched to 2 ground-truth keys (0, 1)" in check.problems[0]


def test_repeated_and_missing_and_unknown_keys() -> None:
    check = check_matching(answer(("0", "0"), (" 0", "0"), ("2", "7"), ("9", "1")), GT, PRED)
    assert check.offending == ["0", "1", "2"]
    text = " | ".join(check.problems)
    assert "gt_key '9' is not a key of G" in text
    assert "gt_key '0' appears 2 times" in text
    assert "gt_key '1' is missing" in text
    assert "pred_key '7' (for gt_key '2') is not a key of P" in text


def test_normalise_pred_key() -> None:
    assert [normalise_pred_key(v) for v in (None, " None ", "null", "", " 3 ")] == [None, None, None, None, "3"]


def test_parse_rejected_answer_for_salvage() -> None:
    raw = 'Sure: ```json\n{"matches": {"0": "1"}}\n```'
    assert parse_match_answer(raw) == answer(("0", "1"))
    assert parse_match_answer("no json here") is None
    assert parse_match_answer('{"other": 1}') is None


def test_flip_problem_checks_batch_length() -> None:
    assert flip_problem(FlipAnswer(results=[0, 1]), 2) is None
    assert flip_problem(FlipAnswer(results=[0]), 2) == "expected exactly 2 result(s) (one per pair), got 1"


def test_prompts_carry_keys_and_escaped_statements() -> None:
    text = match_prompt("a squat", {"0": 'knees "in"', "4": "deeper"}, {"1": "shallower"})
    assert '"0", "4"' in text and '"1"' in text and 'knees \\"in\\"' in text
    assert "a squat" in text
    flip = flip_prompt([("deeper", "shallower")])
    assert '"first": "deeper"' in flip and "exactly 1 numbers" in flip


def test_built_in_prompts_carry_the_official_protocol_rules() -> None:
    match = match_prompt("a squat", {"0": "deeper"}, {"1": "shallower"})
    # one-to-one, "no match" allowed, opposite phrasings still match (the flip check then corrects the letter)
    assert "at most one ground-truth difference" in match and "answer null" in match
    assert "phrased as the opposite" in match and "is a match" in match
    flip = flip_prompt([("the stance is wider", "the stance is much wider")])
    # a difference of degree is not an opposite
    assert "differ only in degree" in flip and '"the stance is slightly wider" are 0' in flip


def test_the_schemas_sent_state_the_exact_keys_and_lengths() -> None:
    matches = declared_schema(match_answer(GT, PRED))["properties"]["matches"]
    assert matches["required"] == GT and matches["additionalProperties"] is False
    assert matches["properties"]["0"] == {"anyOf": [{"type": "string", "enum": PRED}, {"type": "null"}]}
    results = declared_schema(flip_answer(3))["properties"]["results"]
    assert (results["minItems"], results["maxItems"], results["items"]["enum"]) == (3, 3, [0, 1])
