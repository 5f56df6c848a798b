"""Synthetic IF-VidCap in the published repository layout: clips whose content is known, four instructions each.

``out/annotation/prompt.json``, ``out/annotation/checklist.json`` (aligned by position),
``out/annotation/video_meta_info.json`` and the clips at their ``processed_path``
(``video/preprocessed/clip/NNN.mp4``). Each clip is a white square crossing a coloured background
(:mod:`viddiff.data.synth_clips`); the open-ended questions' correct answers follow from how it was drawn.

The four instructions cover what scoring must handle: rule items of several types with open groups
(01, 02), a JSON answer with, on the first video, an open group without questions (03: it can never pass),
and an instruction with no rule item at all (04). Instructions carry different numbers of constraints, so
micro and macro CSR differ whenever a constraint fails.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from viddiff.benchmarks.ifvidcap.data import CHECKLIST_FILE, META_FILE, PROMPT_FILE
from viddiff.data.synth_clips import COLOURS, DIRECTIONS, Clip, write_clip
from viddiff.errors import DatasetError

MARKER = "viddiff synthetic IF-VidCap"
"""Written into the meta file, so a second ``synth`` into the same folder knows it may overwrite it."""
_DIRECTION_OPTIONS = ["from left to right", "from right to left", "it stays still", "up and down"]


def _letter(options: list[str], correct: str) -> tuple[list[str], str]:
    lettered = [f"{'ABCD'[k]}. {text}" for k, text in enumerate(options)]
    return lettered, "ABCD"[options.index(correct)]


def _colour_item(check_id: str, colour: str) -> dict[str, Any]:
    options, answer = _letter(list(COLOURS), colour)
    return {"check_id": check_id, "check_type": "correctness", "question": "What colour is the background?",
            "options": options, "correct_answer": answer}


def _direction_item(check_id: str, direction: str) -> dict[str, Any]:
    options, answer = _letter(_DIRECTION_OPTIONS, f"from {direction}")
    return {"check_id": check_id, "check_type": "correctness", "question": "Which way does the square move?",
            "options": options, "correct_answer": answer}


def _attempt(check_id: str, question: str) -> dict[str, Any]:
    return {"check_id": check_id, "check_type": "attempt", "question": question, "options": ["yes", "no"],
            "correct_answer": "yes"}


def _rule(n: int, constraint: str, description: str, **params: Any) -> dict[str, Any]:
    return {"check_id": f"rule-{n:03d}", "constraint_id": constraint, "check_description": description,
            "parameters": {"content": None, **params}}


def instructions(clip: Clip, first: bool) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(prompt entry, checklist) for the clip's four instructions."""
    list_prompt = (
        "Using an unordered list starting with '-', state the colour of the background and the direction the "
        "square moves. Use exactly 2 items."
    )
    plain_prompt = "Describe the video in one paragraph of plain text, in at most 30 words, all in lowercase."
    json_prompt = 'Return a JSON object with the keys "background" and "motion" describing the video.'
    chat_prompt = "Tell a friend in one sentence what happens in the video."
    json_group = (
        {"check_content": "The motion is described.", "check_items": []}
        if first
        else {"check_content": "The motion is described.", "check_items": [_direction_item("open-002", clip.direction)]}
    )
    return [
        (
            {"field": "For Understanding", "prompt_id": "01", "generated_prompt": list_prompt,
             "constraints_used": ["unordered_list", "count", "entities_attributes"]},
            {"ruled_based_check": [_rule(1, "unordered_list", "An unordered list starting with '-'.", symbol="-"),
                                   _rule(2, "count", "Exactly 2 items.", min_count=2, max_count=2)],
             "open_ended_check": [{"check_content": "The background colour is stated correctly.",
                                   "check_items": [_attempt("open-001", "Does the response state the background colour?"),
                                                   _colour_item("open-002", clip.colour)]}]},
        ),
        (
            {"field": "For Generation", "prompt_id": "02", "generated_prompt": plain_prompt,
             "constraints_used": ["plain_text", "length", "case", "events_actions"]},
            {"ruled_based_check": [_rule(1, "plain_text", "Plain text."),
                                   _rule(2, "length", "At most 30 words.", unit="word", min_len=0, max_len=30),
                                   _rule(3, "case", "All in lowercase.", case_type="lower")],
             "open_ended_check": [{"check_content": "The motion is described correctly.",
                                   "check_items": [_direction_item("open-001", clip.direction)]}]},
        ),
        (
            {"field": "For Retrieval", "prompt_id": "03", "generated_prompt": json_prompt,
             "constraints_used": ["json_object", "include", "events_actions"]},
            {"ruled_based_check": [
                _rule(1, "json_object", "A JSON object with background and motion.",
                      schema={"type": "object", "required": ["background", "motion"],
                              "properties": {"background": {"type": "string"}, "motion": {"type": "string"}}}),
                _rule(2, "keyword", "Mentions the background.", keyword="background", keyword_type="include")],
             "open_ended_check": [{"check_content": "The background colour is given.",
                                   "check_items": [_colour_item("open-001", clip.colour)]}, json_group]},
        ),
        (
            {"field": "For Communication", "prompt_id": "04", "generated_prompt": chat_prompt,
             "constraints_used": ["summary"]},
            {"ruled_based_check": [],
             "open_ended_check": [{"check_content": "The response says what happens.",
                                   "check_items": [_attempt("open-001", "Does the response describe how the square moves?")]}]},
        ),
    ]


def _prepare(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise DatasetError(f"{out}: exists and is not a directory; choose a directory for the synthetic IF-VidCap")
    out.mkdir(parents=True, exist_ok=True)
    if not any(out.iterdir()):
        return
    try:
        marked = json.loads((out / META_FILE).read_text(encoding="utf-8")).get("_generator") == MARKER
    except (OSError, ValueError, AttributeError):
        marked = False
    if not marked:
        raise DatasetError(f"{out}: not empty and not a synthetic IF-VidCap; choose a new or empty directory")
    shutil.rmtree(out / "video", ignore_errors=True)


def write_synthetic_ifvidcap(out: Path, videos: int = 3, seed: int = 0) -> Path:
    """Write the layout under ``out`` and return ``out/annotation/prompt.json``; video ``i`` depends only on
    ``(seed, i)``, so fewer videos give a prefix."""
    if videos < 1:
        raise DatasetError(f"--pairs (videos) must be at least 1, got {videos}")
    out = Path(out)
    _prepare(out)
    prompts: dict[str, Any] = {}
    checklists: dict[str, Any] = {}
    meta: dict[str, Any] = {"_generator": MARKER}
    for index in range(videos):
        rng = np.random.default_rng([seed, index])
        clip = Clip(colour=list(COLOURS)[int(rng.integers(len(COLOURS)))], direction=DIRECTIONS[int(rng.integers(2))])
        video_id, number = f"clip_{index + 1:03d}", f"{index + 1:03d}"
        rel = f"video/preprocessed/clip/{number}.mp4"
        write_clip(out / rel, clip)
        pairs = instructions(clip, first=index == 0)
        prompts[video_id] = [p for p, _ in pairs]
        checklists[video_id] = [{"field": p["field"], "prompt_id": p["prompt_id"], "checklist": c} for p, c in pairs]
        meta[video_id] = {"duration": "00:03", "processed_fps": 4.0, "original_path": f"video/raw_video/clip/{number}.mp4",
                          "processed_path": rel, "status": "success", "synthetic": {"colour": clip.colour, "direction": clip.direction}}
    for rel, payload in ((PROMPT_FILE, prompts), (CHECKLIST_FILE, checklists), (META_FILE, meta)):
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return out / PROMPT_FILE
