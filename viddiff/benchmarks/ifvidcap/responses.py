"""IF-VidCap response files: ``{video_id: [{"field", "prompt_id", "response"}, ...]}``, the benchmark's layout.

``viddiff run`` writes this layout as ``predictions.json`` (a failed sample gets ``""``), and ``viddiff
eval`` reads files in it from any inference script. Entries are matched to instructions by ``prompt_id``;
entries without one are matched by position within their video (the released scorer matches by position
only, and its files carry the ``prompt_id`` of that position, so the two agree on its files). Videos the
dataset selection does not hold are skipped (a selection scores part of a full file). Every problem is
reported at once. An instruction without an entry is missing (absent from :data:`Responses`), which
``ifvidcap.missing_response`` decides about; one with ``""`` has a blank response. A ``null`` response (an
inference script's failed call) is missing too: the released scorer fails on it (``response[:2048]``) and
drops that video, which ``missing_response=leave_out`` reproduces.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Union

from viddiff.benchmarks.ifvidcap.data import IfvidcapDataset, sample_key
from viddiff.errors import MAX_LISTED, PredictionFormatError, problems_error
from viddiff.eval.predictions import _read_json

logger = logging.getLogger(__name__)

FORMAT_HELP = 'expected {"<video_id>": [{"field": ..., "prompt_id": "01", "response": "<text>"}, ...], ...}'

Responses = dict[str, str]
"""Sample key (``<video_id>/<prompt_id>``) -> response, for the samples the file answers."""
MISSING_EFFECT = {
    "blank": "they count as blank responses (ifvidcap.missing_response=blank)",
    "leave_out": "their videos are left out of the metrics (ifvidcap.missing_response=leave_out)",
}


def load_responses(
    path_or_obj: Union[str, Path, dict[str, Any]], dataset: IfvidcapDataset, missing_response: str = "blank"
) -> Responses:
    source = str(path_or_obj) if isinstance(path_or_obj, (str, Path)) else "responses"
    raw = _read_json(Path(path_or_obj)) if isinstance(path_or_obj, (str, Path)) else path_or_obj
    if not isinstance(raw, dict):
        raise PredictionFormatError(f"{source}: top level is a {type(raw).__name__}; {FORMAT_HELP}")
    by_video: dict[str, list[str]] = {}
    for s in dataset:
        ins = dataset.instructions[s.sample_key]
        by_video.setdefault(ins.video_id, []).append(ins.prompt_id)
    problems: list[str] = []
    found: Responses = {}
    nulls: list[str] = []
    skipped = 0
    for video_id, entries in raw.items():
        if video_id not in by_video:
            skipped += 1
            continue
        if not isinstance(entries, list):
            problems.append(f"video {video_id!r}: expected a list of responses, got {type(entries).__name__}")
            continue
        for k, entry in enumerate(entries):
            where = f"video {video_id!r} entry {k}"
            if not isinstance(entry, dict) or "response" not in entry:
                problems.append(f"{where}: expected an object with a 'response'")
                continue
            if entry["response"] is not None and not isinstance(entry["response"], str):
                problems.append(f'{where}: response must be a string or null, got {type(entry["response"]).__name__}')
                continue
            prompt_id = entry.get("prompt_id")
            if prompt_id is None:
                ids = by_video[video_id]
                if k >= len(ids):
                    problems.append(f"{where}: no prompt_id and no instruction at this position")
                    continue
                prompt_id = ids[k]
            key = sample_key(video_id, str(prompt_id))
            if key not in dataset.instructions:
                skipped += 1
                continue
            if key in found or key in nulls:
                problems.append(f"{where}: a second response for prompt {prompt_id!r}; keep one")
                continue
            if entry["response"] is None:
                nulls.append(key)
                continue
            found[key] = entry["response"]
    if problems:
        raise problems_error(source, problems, FORMAT_HELP)
    if skipped:
        logger.info("%s: %d entries for videos or prompts outside the dataset selection were skipped", source, skipped)
    if nulls:
        logger.warning(
            "%s: a null response for %d instruction(s) (%s%s); they count as unanswered: %s",
            source, len(nulls), ", ".join(nulls[:MAX_LISTED]), " ..." if len(nulls) > MAX_LISTED else "",
            MISSING_EFFECT[missing_response],
        )
    missing = [s.sample_key for s in dataset if s.sample_key not in found and s.sample_key not in nulls]
    if missing:
        logger.warning(
            "%s: no response for %d of %d instruction(s) (%s%s); %s",
            source, len(missing), len(dataset), ", ".join(missing[:MAX_LISTED]), " ..." if len(missing) > MAX_LISTED else "",
            MISSING_EFFECT[missing_response],
        )
    return {s.sample_key: found[s.sample_key] for s in dataset if s.sample_key in found}


def responses_file(dataset: IfvidcapDataset, responses: dict[str, str]) -> dict[str, list[dict[str, str]]]:
    """The benchmark layout for ``responses`` (sample key -> text), in dataset order."""
    out: dict[str, list[dict[str, str]]] = {}
    for s in dataset:
        ins = dataset.instructions[s.sample_key]
        out.setdefault(ins.video_id, []).append(
            {"field": ins.field, "prompt_id": ins.prompt_id, "response": responses.get(s.sample_key, "")}
        )
    return out
