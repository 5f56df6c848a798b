import json
from pathlib import Path

import pytest

from viddiff.errors import PredictionFormatError
from viddiff.eval.predictions import load_predictions


@pytest.fixture
def samples(make_sample):
    return [
        make_sample("s0", {"0": "a", "1": "b", "2": "c"}),
        make_sample("s1", {"0": "b", "3": None}),
    ]


def test_closed_flat_and_nested_forms_normalised(samples) -> None:
    preds = [{"0": "a", "1": {"description": "", "prediction": "b"}, "2": None}, {"3": "c"}]
    assert load_predictions(preds, "closed", samples) == [{"0": "a", "1": "b", "2": None}, {"3": "c"}]


def test_closed_from_file(tmp_path: Path, samples) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps([{"0": "b"}, {}]))
    assert load_predictions(path, "closed", samples) == [{"0": "b"}, {}]
    assert load_predictions(str(path), "closed", samples) == [{"0": "b"}, {}]


def test_closed_problems_all_reported_with_location(samples) -> None:
    preds = [{"0": "x", "zero": "a", "7": "a"}, ["a"]]
    with pytest.raises(PredictionFormatError) as info:
        load_predictions(preds, "closed", samples)
    msg = str(info.value)
    assert "4 problem(s)" in msg
    assert "item 0 (sample 's0'), key '0': prediction 'x' is not one of" in msg
    assert "key 'zero' is not a digit string" in msg
    assert "key '7': not a difference of this sample (its keys: 0, 1, 2)" in msg
    assert "item 1 (sample 's1'): expected an object" in msg


def test_wrong_length_reported(samples) -> None:
    with pytest.raises(PredictionFormatError, match="has 1 item but the dataset selection has 2 samples"):
        load_predictions([{}], "closed", samples)


def test_open_items_validated(samples) -> None:
    preds = [
        {"0": {"description": "  deeper squat ", "prediction": "a"}, "5": {"description": "x", "prediction": None}},
        {"1": {"description": "", "prediction": "a"}, "2": {"prediction": "b"}, "3": "a", "4": {"description": "d", "prediction": "B"}},
    ]
    with pytest.raises(PredictionFormatError) as info:
        load_predictions(preds, "open", samples)
    msg = str(info.value)
    assert "4 problem(s)" in msg
    assert "key '1': description must be a non-empty string" in msg
    assert "key '2': missing field(s) description" in msg
    assert "key '3': expected {\"description\": ..., \"prediction\": ...}, got str" in msg
    assert "key '4': prediction 'B' is not one of" in msg


def test_open_valid_keeps_any_digit_keys(samples) -> None:
    preds = [{"9": {"description": " deeper squat ", "prediction": "a"}}, {}]
    assert load_predictions(preds, "open", samples) == [{"9": {"description": "deeper squat", "prediction": "a"}}, {}]


def test_message_lists_at_most_twenty(make_sample) -> None:
    samples = [make_sample(f"s{i}", {"0": "a"}) for i in range(30)]
    with pytest.raises(PredictionFormatError) as info:
        load_predictions([{"0": "q"}] * 30, "closed", samples)
    msg = str(info.value)
    assert "30 problem(s)" in msg and "... and 10 more" in msg
    assert msg.count("is not one of") == 20


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("{not json", "not valid JSON"),
        ('{"0": "a"}', "top level is a dict"),
        ('[{"0": "a", "0": "b"}, {}]', "duplicate key '0'"),
    ],
)
def test_bad_files(tmp_path: Path, samples, content: str, match: str) -> None:
    path = tmp_path / "p.json"
    path.write_text(content)
    with pytest.raises(PredictionFormatError, match=match):
        load_predictions(path, "closed", samples)


def test_missing_file(tmp_path: Path, samples) -> None:
    with pytest.raises(PredictionFormatError, match="predictions file not found"):
        load_predictions(tmp_path / "nope.json", "closed", samples)
