"""Small stand-ins for each published VidDiffBench repo layout, with our own rows and tiny videos.

Each writer produces a folder laid out like one published revision of the
benchmark's Hugging Face repo (file names, side files, column set and
encodings as published), to be served by :mod:`viddiff.testing.fake_hf` or
read as a local ``hf download`` copy. The rows, texts and videos are made
up here; only the structure follows the published repos:

* ``viddiff/VidDiffBench`` (first public revision, 557 rows): no ``domain``
  and no ``n_differences_open_prediction`` column; ``split`` holds the
  domain; thumbnails, ``sample_hash`` and ``retrieval_frames`` columns; the
  repo root holds ``n_differences.json``, ``lookup_action_to_split.json``,
  ``egoexo4d_uids.json``, scripts and a README next to
  ``data/test-00000-of-00001.parquet`` and the ``data/videos_<domain>.zip``
  archives;
* ``viddiff/VidDiffBench_2`` (the authors' updated revision): ``domain``,
  difficulty ``split`` and ``n_differences_open_prediction`` columns;
* ``jmhb/VidDiffBench`` (the copy the paper's README points to): the updated
  columns, a ``data/download_data.py`` script beside the rows.

``FIXTURE`` describes the rows so tests can state what loading must give.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np

from viddiff.video.write import write_video

LAYOUTS = ("viddiff/VidDiffBench", "viddiff/VidDiffBench_2", "jmhb/VidDiffBench")
FIRST_REVISION = LAYOUTS[0]
ARCHIVED_DOMAINS = ("fitness", "surgery")
"""Domains whose videos the repos ship as ``data/videos_<domain>.zip``."""
VIDEO_FPS = 8.0
VIDEO_FRAMES = 12
EGOEXO_UIDS = ["3f2a6c1e-0b7d-4e59-9a1c-5d8e7f6a4b21", "a9c04d7e-61f3-4b2a-8e5d-0c1b2a3f4e5d"]


@dataclass(frozen=True)
class FixtureSample:
    key: str
    action: str
    domain: str
    split: str
    labels: dict[str, Optional[str]]
    n_diff_file: int
    """N_diff of the action in ``n_differences.json`` (first revision)."""
    keyframes: dict[str, tuple[list[int], list[int]]] = field(default_factory=dict)
    """Published ``retrieval_frames`` (keys annotated in both videos)."""
    one_sided: dict[str, list[int]] = field(default_factory=dict)
    """Keys annotated in video A only (must be left out by the loader)."""

    @property
    def n_diff_column(self) -> int:
        """N_diff in ``n_differences_open_prediction`` (updated revisions): ceil(1.5 x labelled)."""
        return math.ceil(1.5 * sum(v is not None for v in self.labels.values()))

    @property
    def sample_hash(self) -> int:
        return int(hashlib.sha256(self.key.encode()).hexdigest()[:15], 16)

    def video_path(self, which: str) -> str:
        suffix = "" if self.domain == "diving" else ".mp4"  # FineDiving videos are frame folders
        return f"videos/{self.domain}/{self.key}_{which}{suffix}"


FIXTURE = (
    FixtureSample("f0-0001", "fitness_0", "fitness", "easy", {"0": "a", "1": "b", "2": None}, 4,
                  keyframes={"0": ([2], [3]), "1": ([1, 3, 5], [2, 4, 6])}, one_sided={"2": [7]}),
    FixtureSample("f0-0002", "fitness_0", "fitness", "easy", {"0": "b", "1": "c", "2": "a"}, 4),
    FixtureSample("f1-0001", "fitness_1", "fitness", "medium", {"0": "a", "3": "b"}, 3, keyframes={"3": ([4], [5])}),
    FixtureSample("s0-0001", "surgery_0", "surgery", "hard", {"0": "b", "1": "a", "2": "c"}, 5),
    FixtureSample("b2-0001", "ballsports_2", "ballsports", "medium", {"0": "a", "1": None}, 2),
    FixtureSample("d0-0001", "diving_0", "diving", "hard", {"0": "b"}, 2, keyframes={"0": ([6], [6])}),
)

_DIFFERENCES = {
    "0": ("depth", "the movement goes deeper"),
    "1": ("speed", "the movement is faster"),
    "2": ("posture", "the back stays straighter"),
    "3": ("stance", "the stance is wider"),
}


def write_layout(repo: str, out: Path) -> Path:
    """Write the ``repo`` layout (one of ``LAYOUTS``) into ``out``; returns ``out``."""
    if repo not in LAYOUTS:
        raise ValueError(f"unknown layout {repo!r}; choose one of {', '.join(LAYOUTS)}")
    first = repo == FIRST_REVISION
    out.mkdir(parents=True, exist_ok=True)
    data = out / "data"
    data.mkdir(exist_ok=True)
    _write_parquet(data / "test-00000-of-00001.parquet", [_row(s, first) for s in FIXTURE])
    for domain in ARCHIVED_DOMAINS:
        _write_archive(data / f"videos_{domain}.zip", [s for s in FIXTURE if s.domain == domain])
    (out / "README.md").write_text(f"# {repo} (test stand-in)\n\nRows and videos made up for viddiff's tests.\n")
    lfs = "filter=lfs diff=lfs merge=lfs -text"
    (out / ".gitattributes").write_text(f"*.parquet {lfs}\n*.zip {lfs}\n")
    if first:
        by_domain: dict[str, dict[str, int]] = {}
        for s in FIXTURE:
            by_domain.setdefault(s.domain, {})[s.action] = s.n_diff_file
        (out / "n_differences.json").write_text(json.dumps(by_domain, indent=2))
        (out / "lookup_action_to_split.json").write_text(json.dumps({s.action: s.split for s in FIXTURE}, indent=2))
        (out / "egoexo4d_uids.json").write_text(json.dumps(EGOEXO_UIDS))
        (out / "download_videos.py").write_text("# stand-in for the repo's video download script\n")
        (out / "load_viddiff_dataset.py").write_text("# stand-in for the repo's loading script\n")
    elif repo == "jmhb/VidDiffBench":
        (data / "download_data.py").write_text("# stand-in for the repo's archive download script\n")
    return out


def write_videos(root: Path, samples: tuple[FixtureSample, ...] = FIXTURE) -> list[Path]:
    """The fixture's videos (both of each sample) under ``root``, at the paths the rows give."""
    written = []
    for s in samples:
        for which in ("a", "b"):
            path = root / s.video_path(which)
            frames = _frames(s.key + which)
            if s.domain == "diving":
                from PIL import Image

                path.mkdir(parents=True, exist_ok=True)
                for i, frame in enumerate(frames):
                    Image.fromarray(frame).save(path / f"{i:05d}.jpg")
            else:
                write_video(path, frames, VIDEO_FPS, options={"preset": "ultrafast"})
            written.append(path)
    return written


def _row(s: FixtureSample, first: bool) -> dict[str, Any]:
    videos = []
    for which in ("a", "b"):
        entry: dict[str, Any] = {
            "path": s.video_path(which), "fps_original": VIDEO_FPS, "frames_trim": [1, VIDEO_FRAMES - 1]
        }
        if first:
            entry["fps"] = VIDEO_FPS  # the first revision also had "fps"; the update removed it
        videos.append(entry)
    annotated = {k: {"name": _DIFFERENCES[k][0], "description": _DIFFERENCES[k][1], "query_string": _DIFFERENCES[k][1],
                     "num_frames": "gt_1" if k == "1" else "1"} for k in s.labels}
    per_video = [{k: a for k, (a, _) in s.keyframes.items()}, {k: b for k, (_, b) in s.keyframes.items()}]
    per_video[0].update(s.one_sided)
    row: dict[str, Any] = {
        "sample_key": s.key,
        "vid0_thumbnail": {"bytes": _png(s.key + "a"), "path": None},
        "vid1_thumbnail": {"bytes": _png(s.key + "b"), "path": None},
        "videos": json.dumps(videos),
        "action": s.action,
        "action_name": s.action.replace("_", " "),
        "action_description": f"a made-up description of {s.action}",
        "source_dataset": {"fitness": "Fitness-AQA", "surgery": "JIGSAWS", "ballsports": "EgoExo4D",
                           "diving": "FineDiving"}[s.domain],
        "sample_hash": s.sample_hash,
        "retrieval_frames": json.dumps(per_video),
        "differences_annotated": json.dumps(annotated),
        "differences_gt": json.dumps(s.labels),
        "split": s.domain if first else s.split,
    }
    if not first:
        row["domain"] = s.domain
        row["n_differences_open_prediction"] = s.n_diff_column
    return row


def _write_parquet(path: Path, rows: list[dict[str, Any]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(rows), path)


def _write_archive(path: Path, samples: list[FixtureSample]) -> None:
    """A zip whose members sit at the paths the rows reference (as the authors' zips unpack into the repo root)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        for video in write_videos(Path(tmp), tuple(samples)):
            zf.write(video, video.relative_to(tmp).as_posix())


def _frames(seed_text: str) -> np.ndarray:
    rng = np.random.default_rng(int(hashlib.sha256(seed_text.encode()).hexdigest()[:8], 16))
    base = rng.integers(0, 255, size=(1, 32, 32, 3), dtype=np.uint8)
    ramp = (np.arange(VIDEO_FRAMES, dtype=np.uint8) * 8)[:, None, None, None]
    return (base + ramp).astype(np.uint8)


def _png(seed_text: str) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(_frames(seed_text)[0]).save(buf, format="PNG")
    return buf.getvalue()
