"""The 14 IF-VidCap rule checks, pinned on passing and failing spans, including the released checker's quirks
(each case's expected value is what the released ``utils/ruled_check.py`` returns for it)."""

from __future__ import annotations

import jsonschema
import pytest

from viddiff.benchmarks.ifvidcap import rules
from viddiff.benchmarks.ifvidcap.rules import check_spans, measure

CASES = [
    # plain_text: JSON values, list-like lines and table rules fail; Markdown emphasis is allowed
    ("plain_text", "A man walks a dog in the park.", {}, True),
    ("plain_text", "It is **bold** and # not a heading", {}, True),
    ("plain_text", "42", {}, False),
    ("plain_text", '"a quoted string"', {}, False),
    ("plain_text", "true", {}, False),
    ("plain_text", "Intro\n- first item", {}, False),
    ("plain_text", "A. Smith arrives early.", {}, False),
    ("plain_text", "2) second", {}, False),
    ("plain_text", "一、 开始", {}, False),
    ("plain_text", "一、开始", {}, True),  # a list marker needs whitespace after it
    ("plain_text", "| a | b |\n|---|---|", {}, False),
    ("plain_text", "left | right", {}, True),
    # json_object / json_array: first opening to last closing bracket, type, schema
    ("json_object", 'Here: {"a": 1} done', {"schema": {"type": "object", "required": ["a"]}}, True),
    ("json_object", '{"a": 1}', {"schema": {"type": "object", "required": ["b"]}}, False),
    ("json_object", '{"a": 1', {"schema": {}}, False),
    ("json_object", "} before {", {"schema": {}}, False),
    ("json_object", '{"a": 1} and {"b": 2}', {"schema": {}}, False),
    ("json_array", '[1, 2, 3]', {"schema": {"type": "array", "items": {"type": "integer"}}}, True),
    ("json_array", '["x", 2]', {"schema": {"type": "array", "items": {"type": "integer"}}}, False),
    ("json_array", '{"a": [1]}', {"schema": {"type": "array"}}, True),  # the slice [1] is an array
    # unordered_list: stripped non-empty lines, each with the marker and whitespace
    ("unordered_list", "- one\n- two", {"symbol": "-"}, True),
    ("unordered_list", "- one\n  - nested", {"symbol": "-"}, True),
    ("unordered_list", "- one\n* two", {}, True),
    ("unordered_list", "- one\n* two", {"symbol": "-"}, False),
    ("unordered_list", "-one", {}, False),
    ("unordered_list", "Items:\n- one", {}, False),
    ("unordered_list", "   \n\n", {}, False),
    # ordered_list with a symbol: start at it, consecutive, whitespace after the separator
    ("ordered_list", "1. a\n2. b\n3. c", {"symbol": "1."}, True),
    ("ordered_list", "2. a\n3. b", {"symbol": "1."}, False),
    ("ordered_list", "1. a\n3. b", {"symbol": "1."}, False),
    ("ordered_list", "1.a\n2.b", {"symbol": "1."}, False),
    ("ordered_list", "1. a\ncontinued\n2. b", {"symbol": "1."}, False),
    ("ordered_list", "a. x\nb. y", {"symbol": "a."}, True),
    ("ordered_list", "I. x\nII. y\nIII. z", {"symbol": "I."}, True),
    ("ordered_list", "i. x\nii. y", {"symbol": "i."}, True),
    ("ordered_list", "V. x\nVI. y", {"symbol": "V."}, True),  # V is read as a roman numeral, not a letter
    ("ordered_list", "Y. x\nZ. y", {"symbol": "Y."}, False),  # stepping past Z fails, even after the Z line
    ("ordered_list", "Y. x", {"symbol": "Y."}, True),
    ("ordered_list", "一、 甲\n二、 乙", {"symbol": "一、"}, True),
    # ordered_list without a symbol: any start, any system tried in order
    ("ordered_list", "2. a\n3. b", {}, True),
    ("ordered_list", "1) a\n2) b", {}, True),
    ("ordered_list", "1: a\n2: b", {}, True),
    ("ordered_list", "A. x\nB. y", {}, True),
    ("ordered_list", "I. x\nII. y", {}, True),
    ("ordered_list", "1. a\n1. b", {}, False),
    ("ordered_list", "- a\n- b", {}, False),
    # table: header cells equal col_name exactly, emphasis ignored, rule line required
    ("table", "| Name | Age |\n|---|:-:|\n| A | 1 |", {"col_name": ["Name", "Age"]}, True),
    ("table", "| **Name** | `Age` |\n| --- | --- |", {"col_name": ["Name", "Age"]}, True),
    ("table", "| Age | Name |\n|---|---|", {"col_name": ["Name", "Age"]}, False),
    ("table", "| name | age |\n|---|---|", {"col_name": ["Name", "Age"]}, False),
    ("table", "| Name | Age |\n| A | 1 |", {"col_name": ["Name", "Age"]}, False),
    ("table", "| Name | Age |", {"col_name": ["Name", "Age"]}, False),
    # keyword: case-insensitive substring, no word boundary
    ("keyword", "A Cat sleeps.", {"keyword": "cat", "keyword_type": "include"}, True),
    ("keyword", "A category", {"keyword": "cat", "keyword_type": "include"}, True),
    ("keyword", "A dog", {"keyword": "cat", "keyword_type": "include"}, False),
    ("keyword", "A category", {"keyword": "cat", "keyword_type": "exclude"}, False),
    ("keyword", "A dog", {"keyword": "cat", "keyword_type": "exclude"}, True),
    ("keyword", "anything", {"keyword": "", "keyword_type": "include"}, True),
    ("keyword", "cat", {"keyword": "cat", "keyword_type": "mention"}, False),
    # markdown
    ("markdown", "## Summary\ntext", {"md_type": "title"}, True),
    ("markdown", "#Summary", {"md_type": "title"}, False),
    ("markdown", "a **b** c", {"md_type": "bold"}, True),
    ("markdown", "a **b** c", {"md_type": "italic"}, True),  # bold also matches italic
    ("markdown", "a *b* c", {"md_type": "bold"}, False),
    ("markdown", "a ==b== c", {"md_type": "highlight"}, True),
    ("markdown", "```\ncode\n```", {"md_type": "code"}, True),
    ("markdown", "plain", {"md_type": "code"}, False),
    ("markdown", "**b**", {"md_type": "underline"}, False),
    # prefix_suffix: a suffix may be followed by punctuation, not by whitespace
    ("prefix_suffix", "Narrative: it rains ---", {"prefix": "Narrative: ", "suffix": " ---"}, True),
    ("prefix_suffix", "It ends here.", {"suffix": "here"}, True),
    ("prefix_suffix", "It ends here!?", {"suffix": "here"}, True),
    ("prefix_suffix", "Done --End--.", {"suffix": "--End--"}, False),  # the suffix's own dashes are stripped too
    ("prefix_suffix", "Done --End--", {"suffix": "--End--."}, False),
    ("prefix_suffix", "Done --End--.!", {"suffix": "--End--."}, False),
    ("prefix_suffix", "Done --End-- ", {"suffix": "--End--"}, False),
    ("prefix_suffix", "结束了。", {"suffix": "结束了"}, True),
    ("prefix_suffix", "narrative: x", {"prefix": "Narrative: "}, False),
    ("prefix_suffix", "anything", {}, True),
    # delimiter: at least two non-blank parts
    ("delimiter", "walks | runs", {"symbol": "|"}, True),
    ("delimiter", "walks |", {"symbol": "|"}, False),
    ("delimiter", "walks", {"symbol": "|"}, False),
    # length: list markers removed first; max_len <= 0 is unbounded
    ("length", "one two three", {"unit": "word", "min_len": 3, "max_len": 3}, True),
    ("length", "- one two\n- three", {"unit": "word", "min_len": 3, "max_len": 3}, True),
    ("length", "one two three four", {"unit": "word", "max_len": 3}, False),
    ("length", "one two three four", {"unit": "word", "min_len": 1, "max_len": 0}, True),
    ("length", "One. Two! Three?", {"unit": "sentence", "min_len": 3, "max_len": 3}, True),
    ("length", "One. Two! Three", {"unit": "sentence", "min_len": 3}, False),
    ("length", "p1\n\np2\n\n\n\np3", {"unit": "paragraph", "min_len": 3, "max_len": 3}, True),
    ("length", "ab cd", {"unit": "character", "max_len": 4}, True),
    ("length", "ab cd", {"unit": "character", "max_len": 3}, False),
    ("length", "ab", {"unit": "token"}, False),
    # count: parenthesised groups
    ("count", "(a red car),(a dog)", {"min_count": 2, "max_count": 2}, True),
    ("count", "(a),(b),(c)", {"min_count": 2, "max_count": 2}, False),
    ("count", "(a)", {"min_count": 2}, False),
    ("count", "(b (c))", {"min_count": 2}, False),  # nesting counts once
    ("count", "(a),(b),(c)", {"min_count": 1, "max_count": 0}, True),
    # case
    ("case", "ALL UPPER 42", {"case_type": "upper"}, True),
    ("case", "Not Upper", {"case_type": "upper"}, False),
    ("case", "all lower here", {"case_type": "lower"}, True),
    ("case", "The start", {"case_type": "lower"}, False),
    ("case", "A Man On The NASA Moon", {"case_type": "title"}, True),
    ("case", "A Man of Action", {"case_type": "title"}, False),
    ("case", "The iPhone", {"case_type": "title"}, False),
    ("case", "HELLO WORLD", {"case_type": "title"}, False),  # only acronyms is not title case
    ("case", "I A", {"case_type": "title"}, False),
    ("case", "123 !", {"case_type": "upper"}, True),  # no Latin words at all passes
    ("case", "word", {"case_type": "sentence"}, False),
    # language: a character-class test
    ("language", "Hello world", {"lang_type": "en"}, True),
    ("language", "Hello 世界", {"lang_type": "en"}, False),
    ("language", "你好世界", {"lang_type": "zh"}, True),
    ("language", "你好 OK", {"lang_type": "zh"}, False),
    ("language", "123 !?", {"lang_type": "en"}, False),
    ("language", "Hello", {"lang_type": "fr"}, False),
]


@pytest.mark.parametrize("constraint, span, params, expected", CASES)
def test_rule_check(constraint: str, span: str, params: dict, expected: bool) -> None:
    assert rules.CHECKS[constraint](span, **params) is expected


def test_every_constraint_type_is_pinned_both_ways() -> None:
    outcomes = {(c, e) for c, _, _, e in CASES}
    assert {c for c, _ in outcomes} == set(rules.RULE_TYPES)
    assert all((c, True) in outcomes and (c, False) in outcomes for c in rules.RULE_TYPES)


@pytest.mark.parametrize(
    "text, words",
    [
        ("don't", 2),
        ("well-known", 1),
        ("10,000mAh battery", 1),
        ("café", 0),
        ("a_b", 0),
        ("中文English", 2),  # a Latin word glued to CJK is not a word
        ("中文 English", 3),
        ("1. first item\n2. second", 3),
    ],
)
def test_word_count(text: str, words: int) -> None:
    assert measure(text, "word") == words


@pytest.mark.parametrize("text, sentences", [("Wait...", 1), ("e.g. this", 2), ("It is 3.5 m", 1), ("No end", 0)])
def test_sentence_count(text: str, sentences: int) -> None:
    assert measure(text, "sentence") == sentences


def test_character_count_removes_only_ascii_spaces() -> None:
    assert measure("a b\nc\u3000d", "character") == 6


def test_an_item_passes_only_if_every_span_passes_and_no_span_passes() -> None:
    assert check_spans("keyword", ["a cat", "the cat"], {"content": None, "keyword": "cat", "keyword_type": "include"})
    assert not check_spans("keyword", ["a cat", "a dog"], {"content": None, "keyword": "cat", "keyword_type": "include"})
    assert check_spans("length", [], {"content": None, "unit": "word", "min_len": 5})  # all([]), as released


def test_malformed_parameters_raise_as_released() -> None:
    with pytest.raises(TypeError):
        check_spans("plain_text", ["x"], {"content": None, "symbol": "-"})
    with pytest.raises(TypeError):
        check_spans("length", ["x"], {"content": None, "unit": "word", "min_len": None})
    with pytest.raises(jsonschema.SchemaError):
        check_spans("json_object", ['{"a": 1}'], {"content": None, "schema": {"type": "no-such-type"}})
