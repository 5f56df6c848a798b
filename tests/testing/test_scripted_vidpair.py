"""ScriptedModel on VidPair-Halluc questions: deterministic answers read from the disc colours it is shown
(pair-aware requests pool both videos), fixed fragile and unreadable phrasings, and our judge's grades;
requests it answered before are answered as before."""

from __future__ import annotations

from PIL import Image

from viddiff.benchmarks.vidpair.prompts import judge_prompt, task_prompt
from viddiff.benchmarks.vidpair.synthetic import Look, render
from viddiff.testing.fake_openai import ChatRequest, ImagePart
from viddiff.testing.responders import ScriptedModel, _stable_int


def request(text: str, *looks: Look, response_format=None) -> ChatRequest:
    images = [ImagePart(Image.fromarray(render(look)[i]), "image/jpeg", "auto") for look in looks for i in (0, 12, 23)]
    body = {"model": "m", "messages": [{"role": "user", "content": text}]}
    if response_format:
        body["response_format"] = response_format
    return ChatRequest(index=0, body=body, headers={}, texts=[text], images=images)


RED = Look(("red", "red", "red"), 1, 0.5)
BLUE = Look(("blue", "blue", "blue"), 1, 0.5)


def ask(kind: str, question: str, *looks: Look, pair_aware: bool = False) -> str:
    return ScriptedModel()(request(task_prompt(kind, question, grid=False, pair_aware=pair_aware), *looks))


def plain(question: str, seen: str) -> bool:
    """Whether the scripted model answers this question plainly (not its fixed fragile or unreadable phrasing)."""
    return _stable_int(question + "|" + seen) % 10 > 1


def test_yes_no_follows_the_colours_shown() -> None:
    questions = [f"Is there a red disc in the video? ({n})" for n in range(12)]
    for q in questions:
        if plain(q, "red"):
            assert ask("binary", q, RED) == "Yes."
        if plain(q, "blue"):
            assert ask("binary", q, BLUE) == "No."
        if plain(q, "red,blue"):
            assert ask("binary", q, BLUE, RED, pair_aware=True) == "Yes."  # pooled: the other video's red counts
    odd = {ask("binary", q, RED) for q in questions if not plain(q, "red")}
    assert odd <= {"I don't know.", "Unclear from these frames."} and odd  # some of the twelve get them


def test_multiple_choice_names_the_seen_colours_in_option_order_and_open_describes_them() -> None:
    question = "Which colours appear?\nA. red\nB. green\nC. blue\nD. yellow"
    answer = ask("multiple_choice", question, BLUE, RED, pair_aware=True)
    assert answer in ("AC", "A, C")
    assert ask("multiple_choice", question, RED) == "A"
    assert ask("open_ended", "Describe the video.", RED) == "A red disc bounces in a grey room."


def test_open_answers_are_graded_by_shared_reference_words() -> None:
    text = judge_prompt("Describe it.", "A red disc bounces.", "A red disc sits still.")
    reply = ScriptedModel()(request(text, response_format={"type": "json_schema", "json_schema": {"name": "DescriptionScoreAnswer", "schema": {}}}))
    assert '"score": 7' in reply  # "red" and "disc": 2 of the reference's 3 words of 3+ letters


def test_a_question_without_our_instructions_is_not_taken_for_one() -> None:
    import pytest

    with pytest.raises(ValueError, match="does not know how to answer"):
        ScriptedModel()(request("Is there a dog?\nQuestion: what is this?"))
