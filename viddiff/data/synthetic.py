"""Synthetic benchmark in the VidDiffBench row format: rendered stick-figure pairs with derived labels.

Offline tests, demos and localisation benches need pairs whose differences
and sub-action stages are *known*. Each pair performs one action of
``synth_actions.ACTIONS`` with sampled parameters (B differs from A in a
random subset of them); labels, stage boundaries and keyframes follow from
the parameters. The rows are written like the HF copy (JSON-encoded string
columns) so the real loader reads them unchanged, and the files exercise the
loader's harder cases: two frame rates, a frame-image directory, and a video
with idle frames around a ``frames_trim``.
"""

from __future__ import annotations

import itertools
import json
import math
import shutil
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional

import numpy as np

from viddiff.data.synth_actions import ACTIONS, HEIGHT, WIDTH, ActionSpec, DifferenceSpec, Param, Params, ground_truth
from viddiff.data.synth_figure import render
from viddiff.errors import DatasetError
from viddiff.schema import RetrievalFrames, StageBoundaries

DATASET_FILE = "dataset.jsonl"
SOURCE_DATASET = "synthetic"
_MIN_STAGE_FRAMES = 2
_GAP = 1.5
"""A changed parameter moves by at least this many thresholds, so no label sits on the edge."""
_UNLABELLED_RATE = 0.25
"""Share of pairs with one difference left unlabelled (null), as in the real benchmark."""


def stage_frame_counts(spec: ActionSpec, params: Params) -> list[int]:
    """Frames of each stage at the action's fps (at least 2, so every stage is seen)."""
    return [max(_MIN_STAGE_FRAMES, round(seconds * spec.fps)) for seconds in spec.durations(params)]


def render_performance(spec: ActionSpec, params: Params) -> Iterator[np.ndarray]:
    """Frames of one performance, stage by stage; progress within a stage runs 0 -> 1 inclusive."""
    for stage, count in enumerate(stage_frame_counts(spec, params)):
        for k in range(count):
            yield render(spec.pose(params, stage, k / (count - 1)), WIDTH, HEIGHT, spec.floor_y)


def sample_pair(spec: ActionSpec, rng: np.random.Generator) -> tuple[Params, Params]:
    """Parameters of A and B: B copies A except a random non-empty subset of the difference parameters."""
    a = {p.name: _uniform(rng, p.low, p.high) for p in spec.params}
    varying = [p for p in spec.params if not p.nuisance]
    changed = [p for p in varying if rng.random() < 0.5] or [varying[int(rng.integers(len(varying)))]]
    b = dict(a)
    for p in spec.params:
        if p.nuisance:
            b[p.name] = _uniform(rng, p.low, p.high)
        elif p in changed:
            b[p.name] = _far_value(rng, p, a[p.name])
    return a, b


def _uniform(rng: np.random.Generator, low: float, high: float) -> float:
    return round(float(rng.uniform(low, high)), 3)


def _far_value(rng: np.random.Generator, p: Param, value: float) -> float:
    """Uniform over the part of ``[low, high]`` at least ``_GAP`` thresholds away from ``value``."""
    gap = _GAP * p.threshold
    below = max(0.0, value - gap - p.low)
    above = max(0.0, p.high - value - gap)
    x = float(rng.uniform(0.0, below + above))
    return round(p.low + x if x < below else value + gap + (x - below), 3)


def _keyframes(diff: DifferenceSpec, stages: StageBoundaries) -> list[int]:
    """Frames of ``diff``'s stage that show it: one at ``diff.at``, or first/middle/last for motion."""
    first = stages.starts[diff.stage]
    last = (stages.starts[diff.stage + 1] if diff.stage + 1 < len(stages.starts) else stages.end) - 1
    if diff.num_frames == "gt_1":
        return [first, (first + last) // 2, last]
    return [first + round(diff.at * (last - first))]


def _write_frames(out: Path, rel: str, frames: Iterable[np.ndarray], fps: float, as_images: bool) -> None:
    from PIL import Image

    from viddiff.video.write import write_video

    path = out / rel
    if not as_images:
        write_video(path, frames, fps, options={"crf": "18"})
        return
    path.mkdir(parents=True, exist_ok=True)
    for i, frame in enumerate(frames):
        Image.fromarray(frame).save(path / f"{i:05d}.png", compress_level=1)


def _pair_row(out: Path, index: int, seed: int) -> dict[str, Any]:
    """Render and write the two videos of pair ``index``; return its dataset row.

    Layout by ``index % 3``: 0 stores B as a PNG directory, 1 pads A with
    empty frames before and after the action and trims them off, 2 is plain.
    """
    spec = ACTIONS[index % len(ACTIONS)]
    rng = np.random.default_rng([seed, index])
    params = sample_pair(spec, rng)
    key = f"pair_{index:04d}"
    empty = render([], WIDTH, HEIGHT, spec.floor_y)
    videos: list[dict[str, Any]] = []
    boundaries: list[StageBoundaries] = []
    for letter, p in zip("ab", params):
        counts = stage_frame_counts(spec, p)
        trimmed = index % 3 == 1 and letter == "a"
        before, after = (int(rng.integers(6, 13)), int(rng.integers(4, 10))) if trimmed else (0, 0)
        as_images = index % 3 == 0 and letter == "b"
        rel = f"videos/{key}_{letter}" + ("" if as_images else ".mp4")
        frames = itertools.chain(
            itertools.repeat(empty, before), render_performance(spec, p), itertools.repeat(empty, after)
        )
        _write_frames(out, rel, frames, spec.fps, as_images)
        starts = before + np.concatenate([[0], np.cumsum(counts)[:-1]])
        boundaries.append(StageBoundaries(starts=[int(s) for s in starts], end=before + sum(counts)))
        trim: Optional[list[int]] = [before, before + sum(counts)] if trimmed else None
        videos.append({"path": rel, "fps_original": spec.fps, "frames_trim": trim})
    labels: dict[str, Optional[str]] = dict(ground_truth(spec, *params))
    if rng.random() < _UNLABELLED_RATE:
        labels[str(int(rng.integers(len(labels))))] = None
    retrieval = RetrievalFrames(
        stages=(boundaries[0], boundaries[1]),
        keyframes={str(k): (_keyframes(d, boundaries[0]), _keyframes(d, boundaries[1])) for k, d in enumerate(spec.differences)},
    )
    annotated = {
        str(k): {"name": d.name, "description": d.description, "query_string": d.query_string, "num_frames": d.num_frames}
        for k, d in enumerate(spec.differences)
    }
    return {
        "sample_key": key,
        "action": spec.action,
        "action_name": spec.name,
        "action_description": spec.description,
        "split": spec.split,
        "domain": spec.domain,
        "source_dataset": SOURCE_DATASET,
        "videos": json.dumps(videos),
        "differences_annotated": json.dumps(annotated),
        "differences_gt": json.dumps(labels),
        "n_differences_open_prediction": math.ceil(1.5 * sum(v is not None for v in labels.values())),
        "retrieval_frames": retrieval.model_dump_json(),
        "synthetic": {"params": {"a": params[0], "b": params[1]}, "stages": list(spec.stages)},
    }


def _prepare_out(out: Path) -> None:
    """Make ``out`` ready; only an earlier synthetic benchmark may be overwritten (its videos are replaced)."""
    if out.exists() and not out.is_dir():
        raise DatasetError(f"{out}: exists and is not a directory; choose a directory for the synthetic benchmark")
    out.mkdir(parents=True, exist_ok=True)
    if not any(out.iterdir()):
        return
    try:
        with (out / DATASET_FILE).open(encoding="utf-8") as f:
            first = json.loads(f.readline())
    except (OSError, ValueError):
        first = None
    if not isinstance(first, dict) or first.get("source_dataset") != SOURCE_DATASET:
        raise DatasetError(f"{out}: not empty and not a synthetic benchmark; choose a new or empty directory")
    shutil.rmtree(out / "videos", ignore_errors=True)


def write_synthetic_benchmark(out: Path, pairs: int = 12, seed: int = 0) -> Path:
    """Write ``out/dataset.jsonl`` and ``out/videos/``; returns the dataset file.

    Same ``seed`` gives the same rows byte for byte and the same frames;
    pair ``i`` depends only on ``(seed, i)``, so fewer pairs give a prefix.
    Each row also carries a ``synthetic`` field (parameters of A and B, stage
    names) for tests and benches; the loader ignores it like any extra field.
    """
    if pairs < 1:
        raise DatasetError(f"--pairs must be at least 1, got {pairs}")
    out = Path(out)
    _prepare_out(out)
    rows = [_pair_row(out, index, seed) for index in range(pairs)]
    path = out / DATASET_FILE
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path
