"""VidCapBench loader: the QA file (one line per video), the videos, the sub-category -> dimension table.

``VidCapBench-AE_QA.jsonl`` (the auto-evaluated subset) holds one JSON line per video:
``{"video_dir": <path or file name>, "QA_pairs": [{"question", "answer", "sub_category", ...}, ...]}``.
Copies in circulation differ in ``video_dir`` (an absolute path on the authors' machine, or the bare file
name), so videos are matched on the file name alone. One :class:`~viddiff.schema.Sample` per video, keyed
by that file name, with a ``caption`` task (``vidcapbench.prompt``); videos without QA pairs are kept
(they are captioned and their captions count in the mean caption length, as released).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Optional, Sequence

from pydantic import BaseModel, ConfigDict

from viddiff.config import DataConfig, VidcapbenchConfig
from viddiff.data.dataset import Dataset
from viddiff.data import hub
from viddiff.data.safety import VideoPaths, check_field_sizes, hf_storage_folder
from viddiff.data.viddiffbench import select_samples
from viddiff.errors import DatasetError
from viddiff.schema import Sample, VideoRef, VideoTask

logger = logging.getLogger(__name__)

DIMENSIONS: dict[str, tuple[str, ...]] = {
    "Video Aesthetics": ("cinematography", "composition", "lighting", "color", "style"),
    "Video Content": ("background", "subjects", "events"),
    "Video Motion": ("attribute changes", "object motion", "body movements", "environmental motion", "spatiotemporal transformations"),
    "Physical Laws": ("spatial relationships", "counter intuitive", "common sense"),
}
"""The paper's four dimensions and the ``sub_category`` values each one holds (the released scorer's lists)."""
DIMENSION_OF = {sub: dim for dim, subs in DIMENSIONS.items() for sub in subs}
DOMAIN = "vidcapbench"
VIDEO_FOLDERS = ("videos", "video", ".")
_LOCAL_HINT = "pass --dataset PATH (a folder holding the QA file and a videos/ folder, or the QA file itself)"


class QAPair(BaseModel):
    model_config = ConfigDict(extra="forbid")

    index: int
    question: str
    answer: str
    sub_category: str
    dimension: str


@dataclass(frozen=True)
class VidcapbenchDataset(Dataset):
    """The selected videos (one sample each) plus their QA pairs."""

    qa: dict[str, list[QAPair]] = field(default_factory=dict)
    benchmark: str = "vidcapbench"


def video_name(ref: str) -> str:
    """The file name of a ``video_dir`` / ``video`` value, whichever path style it was written in."""
    return PureWindowsPath(ref).name if "\\" in ref else PurePosixPath(ref).name


def _capped(value: Any, cap: Optional[int], where: str, field: str = "") -> None:
    """``data.max_text_chars`` on every text in ``value``; the error starts with ``where`` (file and line)."""
    try:
        check_field_sizes(value, cap, field)
    except DatasetError as exc:
        raise DatasetError(f"{where}: {exc}") from None


def _qa_pairs(raw: Any, where: str, cap: Optional[int]) -> list[QAPair]:
    if not isinstance(raw, list):
        raise DatasetError(f"{where}: QA_pairs must be a list, got {type(raw).__name__}")
    out = []
    for k, qa in enumerate(raw):
        at = f"{where} QA {k}"
        if not isinstance(qa, dict):
            raise DatasetError(f"{at}: expected an object, got {type(qa).__name__}")
        _capped(qa, cap, at)
        missing = [f for f in ("question", "answer", "sub_category") if not isinstance(qa.get(f), str)]
        if missing:
            raise DatasetError(f"{at}: missing or non-text {', '.join(missing)}")
        sub = qa["sub_category"].strip()
        if sub not in DIMENSION_OF:
            raise DatasetError(f"{at}: unknown sub_category {sub!r}; known: {', '.join(DIMENSION_OF)}")
        out.append(QAPair(index=k, question=qa["question"], answer=qa["answer"], sub_category=sub, dimension=DIMENSION_OF[sub]))
    return out


def read_qa_file(path: Path, cap: Optional[int]) -> list[tuple[str, list[QAPair]]]:
    """(video file name, its QA pairs) per line, in file order; a name used twice, or a text longer than ``cap``
    (``data.max_text_chars``), is an error."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise DatasetError(f"{path}: QA file not found; {_LOCAL_HINT}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read the QA file ({exc})") from None
    out: list[tuple[str, list[QAPair]]] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}: line {number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{where}: not valid JSON ({exc.msg})") from None
        if not isinstance(row, dict) or not isinstance(row.get("video_dir") or row.get("video"), str):
            raise DatasetError(f"{where}: expected an object with video_dir and QA_pairs")
        _capped(row.get("video_dir") or row["video"], cap, where, "video_dir" if row.get("video_dir") else "video")
        name = video_name(row.get("video_dir") or row["video"])
        if name in seen:
            raise DatasetError(f"{where}: video {name!r} appears twice (videos are matched by file name)")
        seen.add(name)
        out.append((name, _qa_pairs(row.get("QA_pairs", []), where, cap)))
    return out


def _find_video(root: Path, name: str) -> str:
    candidates = [f"{folder}/{name}" if folder != "." else name for folder in VIDEO_FOLDERS]
    return next((c for c in candidates if (root / c).is_file()), candidates[0])


def _download_qa(data: DataConfig, cfg: VidcapbenchConfig) -> Path:
    return hub.snapshot(
        cfg.hf_repo, cfg.hf_revision, data.hf_cache_dir, [cfg.qa_file, f"*/{cfg.qa_file}"],
        what=cfg.qa_file, hint=_LOCAL_HINT,
    )


def _fetch_videos(names: Sequence[str], snapshot: Path, data: DataConfig, cfg: VidcapbenchConfig) -> None:
    import glob

    missing = [n for n in names if not any((snapshot / f).joinpath(n).is_file() for f in VIDEO_FOLDERS)]
    if not missing:
        return
    logger.info("downloading %d VidCapBench videos from %s", len(missing), cfg.hf_repo)
    patterns = [p for n in missing for p in (glob.escape(n), f"*/{glob.escape(n)}")]
    try:
        hub.download_files(cfg.hf_repo, snapshot.name, data.hf_cache_dir, patterns)
    except Exception as exc:  # a partial download is still usable; `data check` names what is missing
        logger.warning("could not download %d VidCapBench videos from %s: %s: %s", len(missing), cfg.hf_repo, type(exc).__name__, exc)


def load_vidcapbench(
    data: DataConfig, cfg: VidcapbenchConfig, splits: Optional[Sequence[str]] = None, *, fetch_videos: bool = True
) -> VidcapbenchDataset:
    """Load the QA file (``vidcapbench.qa_file``) from the Hub (``data.dataset == "hf"``) or a local folder or file.

    Videos are looked up by file name under ``data.video_root`` (else the QA file's folder) in ``videos/``,
    ``video/`` or the folder itself. ``data.limit`` keeps the first N videos.
    """
    if splits:
        raise DatasetError(f"VidCapBench has no splits (got --split {', '.join(splits)}); use --limit to run fewer")
    revision: Optional[str] = None
    if data.dataset == "hf":
        snapshot = _download_qa(data, cfg)
        matches = sorted(snapshot.rglob(cfg.qa_file), key=lambda p: len(p.parts))
        if not matches:
            raise DatasetError(f"{cfg.hf_repo}: no {cfg.qa_file} in the repo (vidcapbench.qa_file)")
        file, root, revision = matches[0], snapshot, snapshot.name
        source = f"hf:{cfg.hf_repo}@{revision}"
    else:
        path = Path(data.dataset).expanduser().absolute()
        if path.is_dir():
            file, root = path / cfg.qa_file, path
        elif path.is_file():
            file, root = path, path.parent
        else:
            raise DatasetError(f"VidCapBench dataset {data.dataset!r} not found; use --dataset hf or {_LOCAL_HINT}")
        source = str(file)
    video_root = Path(data.video_root).expanduser().absolute() if data.video_root else root
    own = hf_storage_folder(root) if data.dataset == "hf" else root
    paths = VideoPaths.under(video_root, own, allow_outside=data.allow_paths_outside_root)
    rows = read_qa_file(file, data.max_text_chars)
    if data.dataset == "hf" and fetch_videos and not data.video_root:
        first = min((n for n in (data.limit, data.subset_per_action) if n is not None), default=len(rows))
        _fetch_videos([name for name, _ in rows[:first]], root, data, cfg)
    samples = [
        Sample(
            sample_key=name, action=DOMAIN, action_name=name, action_description="", split="test", domain=DOMAIN,
            source_dataset="vidcapbench", videos=(VideoRef(path=paths.resolve(_find_video(video_root, name))),),
            task=VideoTask(prompt=cfg.prompt),
        )
        for name, _ in rows
    ]
    selected = select_samples(samples, None, data.subset_per_action, data.limit)
    qa = dict(rows)
    logger.info(
        "VidCapBench: %d videos, %d QA pairs from %s", len(selected), sum(len(qa[s.sample_key]) for s in selected), source
    )
    return VidcapbenchDataset(
        selected, source, revision, video_root, data_dir=root, qa={s.sample_key: qa[s.sample_key] for s in selected}
    )
