"""A synthetic VidPair-Halluc in the published Hub layout: made-up pairs whose answers follow from how they were drawn.

Each pair is one story: the same grey room (the shared background) with coloured discs in front of it, which
differ between the positive and the adversarial video in one aspect: the disc's colour (``color``), how many
discs there are (``number``), where the disc stays (``location``), or the order in which its colour changes
over the clip's three segments (``sequence``). Each video gets two yes/no questions (the same two on both
videos of the pair), one multiple-choice question (letters in order for ``sequence``) and one open question
with a reference answer.

The files follow the release's layout (``VidPair-Halluc/<story>/<file>.mp4``, ``metadata.csv``,
``pairs/pairs.json``, ``qa/hf/*.jsonl`` with ``repo_video_path``, ``question`` and the ``*_json`` strings). The
fields the release does not document are given the names the loader tries first (``qa_id``, ``answer``); the
rows carry no aspect field, so the loader reads the aspect from the story folder as it must for real rows.
``SYNTHETIC.md`` marks the copy as made up.
"""

from __future__ import annotations

import csv
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from viddiff.benchmarks.vidpair.data import SYNTHETIC_MARKER
from viddiff.benchmarks.vidpair.layout import ALL_QA_FILE, LAYOUT_FILE, METADATA_FILE, PAIRS_FILE, QA_FILES, VIDEO_DIR
from viddiff.errors import DatasetError

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (220, 40, 40),
    "green": (40, 170, 60),
    "blue": (40, 80, 220),
    "yellow": (235, 200, 30),
}
"""The discs' colours; nothing else in a frame is this saturated, so a colour seen is a disc seen."""
WIDTH, HEIGHT, FPS, N_FRAMES = 96, 64, 8.0, 24
RADIUS = 8
STORY_ASPECTS = ("color", "number", "location", "sequence")
_OPTIONS = {
    "color": list(COLOURS),
    "number": ["one", "two", "three", "four"],
    "location": ["on the left", "in the centre", "on the right", "at the top"],
    "sequence": list(COLOURS),
}


@dataclass(frozen=True)
class Look:
    """What one video shows: disc colour per segment (3 segments), how many discs, and where (x fraction)."""

    colours: tuple[str, str, str]
    count: int
    x: float


def render(look: Look) -> np.ndarray:
    """(N_FRAMES, HEIGHT, WIDTH, 3): the grey room, then the discs of each segment."""
    yy, xx = np.mgrid[0:HEIGHT, 0:WIDTH]
    room = np.empty((HEIGHT, WIDTH, 3), np.uint8)
    room[:] = (150 + (yy * 40 // HEIGHT))[..., None].astype(np.uint8)  # a floor-to-ceiling grey gradient
    room[8:20, 60:88] = (95, 95, 100)  # a picture on the wall, the same in both videos of every pair
    frames = np.repeat(room[None], N_FRAMES, axis=0)
    for i in range(N_FRAMES):
        colour = COLOURS[look.colours[min(2, i * 3 // N_FRAMES)]]
        for k in range(look.count):
            cx = int(look.x * WIDTH) + k * (2 * RADIUS + 4) - (look.count - 1) * (RADIUS + 2)
            cy = HEIGHT // 2 + 6 + (i % 6) - 3  # a small bounce
            frames[i][(xx - cx) ** 2 + (yy - cy) ** 2 <= RADIUS**2] = colour
    return frames


def _story(aspect: str, rng: np.random.Generator) -> dict[str, Any]:
    """Both looks of a pair and its questions (texts and, per video, the right answers)."""
    names = list(COLOURS)
    a, b = (names[int(i)] for i in rng.choice(len(names), size=2, replace=False))
    absent = next(c for c in names if c not in (a, b))
    if aspect == "color":
        looks = (Look((a, a, a), 1, 0.5), Look((b, b, b), 1, 0.5))
        binary = [(f"Is there a {a} disc in the video?", ("yes", "no")), (f"Is there a {absent} disc in the video?", ("no", "no"))]
        mc = ("What colour is the disc?", (_letter(aspect, a), _letter(aspect, b)))
        describe = (f"A {a} disc bounces in the middle of a grey room.", f"A {b} disc bounces in the middle of a grey room.")
    elif aspect == "number":
        looks = (Look((a, a, a), 1, 0.5), Look((a, a, a), 2, 0.5))
        binary = [("Is there exactly one disc in the video?", ("yes", "no")), ("Are there three discs in the video?", ("no", "no"))]
        mc = ("How many discs are in the video?", ("A", "B"))
        describe = (f"One {a} disc bounces in a grey room.", f"Two {a} discs bounce side by side in a grey room.")
    elif aspect == "location":
        looks = (Look((a, a, a), 1, 0.2), Look((a, a, a), 1, 0.8))
        binary = [("Is the disc on the left side of the frame?", ("yes", "no")), ("Is the disc on the right side of the frame?", ("no", "yes"))]
        mc = ("Where in the frame is the disc?", ("A", "C"))
        describe = (f"A {a} disc bounces on the left of a grey room.", f"A {a} disc bounces on the right of a grey room.")
    else:
        order = (a, absent, b)
        looks = (Look(order, 1, 0.5), Look(order[::-1], 1, 0.5))
        third = next(c for c in names if c not in order)
        binary = [(f"Does the disc turn {a} before it turns {b}?", ("yes", "no")), (f"Does the disc ever turn {third}?", ("no", "no"))]
        mc = (
            "In which order does the disc take these colours? Answer with the letters in order.",
            ("".join(_letter(aspect, c) for c in order), "".join(_letter(aspect, c) for c in order[::-1])),
        )
        describe = (f"A disc turns {a}, then {absent}, then {b}.", f"A disc turns {b}, then {absent}, then {a}.")
    return {"looks": looks, "binary": binary, "mc": mc, "describe": describe}


def _letter(aspect: str, value: str) -> str:
    return "ABCD"[_OPTIONS[aspect].index(value)]


def _prepare(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise DatasetError(f"{out}: exists and is not a directory; choose a directory for the synthetic VidPair-Halluc")
    out.mkdir(parents=True, exist_ok=True)
    if any(out.iterdir()):
        if not (out / SYNTHETIC_MARKER).is_file():
            raise DatasetError(f"{out}: not empty and not a synthetic VidPair-Halluc; choose a new or empty directory")
        for name in (VIDEO_DIR, "qa", "pairs"):
            shutil.rmtree(out / name, ignore_errors=True)


def write_synthetic_vidpair(out: Path, pairs: int = 4, seed: int = 0) -> Path:
    """Write the synthetic copy into ``out`` (see the module docstring); returns ``out``. The same seed writes
    the same rows and frames; pair ``i`` depends only on ``(seed, i)``, so fewer pairs give a prefix."""
    from viddiff.video.write import write_video

    if pairs < 1:
        raise DatasetError(f"--pairs must be at least 1, got {pairs}")
    out = Path(out)
    _prepare(out)
    rows: dict[str, list[dict[str, Any]]] = {t: [] for t in QA_FILES}
    pair_list, metadata = [], []
    for index in range(pairs):
        aspect = STORY_ASPECTS[index % len(STORY_ASPECTS)]
        story_id = f"{aspect}_{index + 1:04d}"
        story = _story(aspect, np.random.default_rng([seed, index]))
        videos = []
        for role, prefix, look in zip(("positive", "adversarial"), ("M", "R"), story["looks"]):
            rel = f"{VIDEO_DIR}/{story_id}/{prefix}_{story_id}_00{1 if role == 'positive' else 2}.mp4"
            write_video(out / rel, render(look), FPS, options={"crf": "12", "preset": "ultrafast"})
            videos.append(rel)
            metadata.append({"video_path": rel, "story_id": story_id, "aspect": aspect, "role": role, "pair_id": f"P{index + 1:04d}"})
        pair_list.append({"pair_id": f"P{index + 1:04d}", "positive_video": videos[0], "adversarial_video": videos[1]})
        for side, (rel, tag) in enumerate(zip(videos, ("pos", "adv"))):
            base = lambda kind, n: {"qa_id": f"{kind}-{story_id}-{tag}-{n}", "repo_video_path": rel}  # noqa: E731
            mask = json.dumps([1, 1, 1] if side == 0 else [0, 1, 0])
            for n, (question, answers) in enumerate(story["binary"], start=1):
                rows["binary"].append({**base("b", n), "question": question, "answer": answers[side],
                                       "choices_json": "", "option_map_json": "", "mask_flags_json": mask})
            question, letters = story["mc"]
            options = [{"label": "ABCD"[i], "text": text} for i, text in enumerate(_OPTIONS[aspect])]
            rows["multiple_choice"].append({**base("m", 1), "question": question, "answer": letters[side],
                                            "choices_json": json.dumps(options), "option_map_json": json.dumps({c: c for c in "ABCD"}),
                                            "mask_flags_json": mask})
            rows["open_ended"].append({**base("o", 1), "question": "Describe what happens in the video.",
                                       "answer": story["describe"][side], "choices_json": "", "option_map_json": "",
                                       "mask_flags_json": mask})
    _write_files(out, rows, pair_list, metadata, pairs, seed)
    return out


def _write_files(out: Path, rows: dict[str, list[dict[str, Any]]], pair_list: list[dict], metadata: list[dict], pairs: int, seed: int) -> None:
    def jsonl(path: Path, items: list[dict[str, Any]]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")

    for kind, relative in QA_FILES.items():
        jsonl(out / relative, rows[kind])
    jsonl(out / ALL_QA_FILE, [{**row, "question_type": kind} for kind in QA_FILES for row in rows[kind]])
    (out / PAIRS_FILE).parent.mkdir(parents=True, exist_ok=True)
    (out / PAIRS_FILE).write_text(json.dumps(pair_list, indent=2) + "\n", encoding="utf-8")
    with (out / METADATA_FILE).open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(metadata[0]))
        writer.writeheader()
        writer.writerows(metadata)
    (out / LAYOUT_FILE).write_text(
        "# Synthetic VidPair-Halluc (viddiff test stand-in)\n\nLaid out like the Hub repo Jethro37/VidPair-Halluc; "
        "rows, texts and videos are made up by `viddiff data synth --benchmark vidpair-halluc`.\n",
        encoding="utf-8",
    )
    (out / SYNTHETIC_MARKER).write_text(
        f"Made up by viddiff (`viddiff data synth --benchmark vidpair-halluc --pairs {pairs} --seed {seed}`); "
        "not the VidPair-Halluc data.\n",
        encoding="utf-8",
    )


SEEN_FRACTION = 0.002
"""A colour counts as shown when at least this share of the pixels is close to it."""


def colours_seen(images: list[np.ndarray], distance: float = 60.0) -> list[str]:
    """The disc colours present in the images (the scripted model's eye); white grid bands and the room are
    far from every one of them."""
    pixels = np.concatenate([img.reshape(-1, 3).astype(np.int32) for img in images])
    seen = []
    for name, rgb in COLOURS.items():
        close = np.sqrt(((pixels - np.asarray(rgb)) ** 2).sum(axis=1)) <= distance
        if close.mean() >= SEEN_FRACTION:
            seen.append(name)
    return seen

