"""Synthetic VidCapBench-AE in the published layout: ``VidCapBench-AE_QA.jsonl`` and ``videos/<name>.mp4``.

Each clip is a white square crossing a coloured background (:mod:`viddiff.data.synth_clips`); its QA pairs
ask about what was drawn, one or more per dimension, in the published sub-categories. Some are answered
by any faithful caption (colour, subject, direction), one only partly (where the square starts), one never
(a sound), one is phrased so a caption of the clip contradicts it (a circle): all four grades occur.
The last video has no QA pairs, as six videos of the real file have none. ``video_dir`` values are
absolute paths on a machine that is not this one, as in one circulating copy of the file, so that the
loader must match on file names.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from viddiff.data.synth_clips import COLOURS, DIRECTIONS, Clip, write_clip
from viddiff.errors import DatasetError

QA_FILE = "VidCapBench-AE_QA.jsonl"
NAMES = ("video_main_{}.mp4", "Tarsier_{}.mp4", "videos_qa_{}.mp4")
FOREIGN_ROOT = "/pfs/Datasets/VidCapBench/videos"
"""Where ``video_dir`` says the videos are (a path on the authors' machine, not here)."""


def qa_pairs(clip: Clip) -> list[dict[str, Any]]:
    start = "left" if clip.direction == "left to right" else "right"
    pairs = [
        ("What colour is the background?", f"The background is {clip.colour}.", "color", "video aesthetics"),
        ("What moves in the video?", "A white square.", "subjects", "video content"),
        ("In which direction does the square move?", f"From {clip.direction}.", "object motion", "video motion"),
        ("Where is the square when the video starts?", f"On the {start} side.", "spatial relationships", "physical laws"),
        ("What sound can be heard?", "A dog barking.", "common sense", "physical laws"),
        ("What shape moves across the frame?", "A circle.", "subjects", "video content"),
    ]
    return [{"question": q, "answer": a, "sub_category": sub, "primary_category": primary} for q, a, sub, primary in pairs]


def _prepare(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise DatasetError(f"{out}: exists and is not a directory; choose a directory for the synthetic VidCapBench")
    out.mkdir(parents=True, exist_ok=True)
    if any(out.iterdir()):
        if not (out / QA_FILE).is_file() or FOREIGN_ROOT not in (out / QA_FILE).read_text(encoding="utf-8")[:2000]:
            raise DatasetError(f"{out}: not empty and not a synthetic VidCapBench; choose a new or empty directory")
        shutil.rmtree(out / "videos", ignore_errors=True)


def write_synthetic_vidcapbench(out: Path, videos: int = 3, seed: int = 0) -> Path:
    """Write ``out/VidCapBench-AE_QA.jsonl`` and ``out/videos/``; returns the QA file. With two or more videos the
    last one has no QA pairs. Video ``i`` depends only on ``(seed, i)``."""
    if videos < 1:
        raise DatasetError(f"--pairs (videos) must be at least 1, got {videos}")
    out = Path(out)
    _prepare(out)
    lines = []
    for index in range(videos):
        rng = np.random.default_rng([seed, index])
        clip = Clip(colour=list(COLOURS)[int(rng.integers(len(COLOURS)))], direction=DIRECTIONS[int(rng.integers(2))])
        name = NAMES[index % len(NAMES)].format(index)
        write_clip(out / "videos" / name, clip)
        pairs = qa_pairs(clip) if index < videos - 1 or videos == 1 else []
        lines.append(json.dumps({"video_dir": f"{FOREIGN_ROOT}/{name}", "QA_pairs": pairs}))
    path = out / QA_FILE
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
