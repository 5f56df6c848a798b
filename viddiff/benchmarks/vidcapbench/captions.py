"""VidCapBench caption files: ``{"question", "video" | "video_dir", "model_generation"}`` per caption.

The README writes the video under ``video``, the released scorer reads ``video_dir``: both are accepted,
and captions are matched to videos by file name (paths in either field may be absolute or bare). A JSONL
file (one caption per line, the published layout), a JSON list of the same objects, or the parsed list are
read. ``viddiff run`` writes the list with both keys. A second caption for one video, or one for a video
outside the dataset selection, is an error. A video without a caption is missing (absent from
:data:`Captions`), which ``vidcapbench.missing_caption`` decides about; ``""`` is a blank caption.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Union

from viddiff.benchmarks.vidcapbench.data import VidcapbenchDataset, video_name
from viddiff.errors import MAX_LISTED, PredictionFormatError, problems_error
from viddiff.eval.predictions import _read_json

logger = logging.getLogger(__name__)

FORMAT_HELP = 'expected JSONL lines (or a JSON list) of {"question": ..., "video" or "video_dir": ..., "model_generation": "<caption>"}'

Captions = dict[str, str]
"""Video file name (sample key) -> caption, for the videos the file captions."""
MISSING_EFFECT = {
    "not_mentioned": "they count as blank captions (vidcapbench.missing_caption=not_mentioned)",
    "leave_out": "their questions are left out of the counts (vidcapbench.missing_caption=leave_out)",
}


def _rows(path_or_obj: Union[str, Path, list[Any]]) -> tuple[str, list[Any]]:
    if not isinstance(path_or_obj, (str, Path)):
        return "captions", path_or_obj
    path = Path(path_or_obj)
    if path.suffix.lower() != ".jsonl":
        return str(path), _read_json(path)
    if not path.is_file():
        raise PredictionFormatError(f"captions file not found: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PredictionFormatError(f"{path}: cannot read the captions file ({exc})") from None
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise PredictionFormatError(f"{path}: line {number}: not valid JSON ({exc.msg})") from None
    return str(path), rows


def load_captions(
    path_or_obj: Union[str, Path, list[Any]], dataset: VidcapbenchDataset, missing_caption: str = "not_mentioned"
) -> Captions:
    source, rows = _rows(path_or_obj)
    if not isinstance(rows, list):
        raise PredictionFormatError(f"{source}: top level is a {type(rows).__name__}; {FORMAT_HELP}")
    keys = {s.sample_key for s in dataset}
    problems: list[str] = []
    found: Captions = {}
    for k, row in enumerate(rows):
        where = f"caption {k}"
        if not isinstance(row, dict):
            problems.append(f"{where}: expected an object, got {type(row).__name__}")
            continue
        ref = row.get("video_dir", row.get("video"))
        if not isinstance(ref, str) or not ref.strip():
            problems.append(f"{where}: no 'video' or 'video_dir' naming its video")
            continue
        if not isinstance(row.get("model_generation"), str):
            problems.append(f"{where}: 'model_generation' must be the caption text")
            continue
        name = video_name(ref.strip())
        if name not in keys:
            problems.append(f"{where}: video {name!r} is not in the dataset selection (check --dataset/--limit)")
        elif name in found:
            problems.append(f"{where}: a second caption for {name!r}; keep one")
        else:
            found[name] = row["model_generation"]
    if problems:
        raise problems_error(source, problems, FORMAT_HELP)
    missing = [s.sample_key for s in dataset if s.sample_key not in found]
    if missing:
        logger.warning(
            "%s: no caption for %d of %d video(s) (%s); %s",
            source, len(missing), len(dataset), ", ".join(missing[:MAX_LISTED]), MISSING_EFFECT[missing_caption],
        )
    return {s.sample_key: found[s.sample_key] for s in dataset if s.sample_key in found}


def captions_file(dataset: VidcapbenchDataset, captions: dict[str, str]) -> list[dict[str, str]]:
    """The published layout, in dataset order, with both ``video`` (README) and ``video_dir`` (scorer) keys."""
    return [
        {"question": s.task.prompt if s.task else "", "video": s.sample_key, "video_dir": s.sample_key,
         "model_generation": captions.get(s.sample_key, "")}
        for s in dataset
    ]
