"""VidDiffBench loader: the HF hub or a local JSON / JSONL / parquet copy, into ``Sample`` models.

Rows follow design.md §5. The HF copy stores ``videos``, ``differences_*`` and
``retrieval_frames`` as JSON-encoded strings; local copies may hold them
decoded, so both are accepted. Every problem is reported as a ``DatasetError``
naming the file, row, sample key and field, because a malformed row found
three stages later costs a whole run.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, NoReturn, Optional, Sequence

from pydantic import ValidationError

from viddiff.config import DataConfig
from viddiff.errors import DatasetError
from viddiff.schema import ChecklistItem, Difference, RetrievalFrames, Sample, VideoRef

logger = logging.getLogger(__name__)

DATA_SUFFIXES = (".jsonl", ".json", ".parquet")
"""Row-file formats, in the order a ``dataset.*`` file is preferred when several exist."""
REQUIRED_FIELDS = (
    "sample_key",
    "action",
    "action_name",
    "action_description",
    "split",
    "domain",
    "source_dataset",
    "videos",
    "differences_annotated",
    "differences_gt",
    "n_differences_open_prediction",
)
_TEXT_FIELDS = ("action", "action_name", "action_description", "split", "domain", "source_dataset")
_LETTERS = ("a", "b", "c")
_LOCAL_HINT = "pass --dataset PATH (a directory holding dataset.jsonl, or a .json/.jsonl/.parquet file)"


@dataclass(frozen=True)
class Dataset:
    """Loaded, filtered samples plus where they came from (recorded in run outputs)."""

    samples: list[Sample]
    source: str
    """``hf:<repo>@<revision>`` or the local dataset file."""
    revision: Optional[str]
    root: Path
    """Directory that relative video paths were resolved against."""
    checklists: dict[str, list[ChecklistItem]] = field(default_factory=dict)
    """ViDiC-1K: the yes/no checklist of each sample (empty for VidDiffBench)."""
    benchmark: str = "viddiffbench"

    def __len__(self) -> int:
        return len(self.samples)

    def __iter__(self) -> Iterator[Sample]:
        return iter(self.samples)

    def __getitem__(self, index: int) -> Sample:
        return self.samples[index]


# --------------------------------------------------------------------------- rows -> samples


class _Row:
    """One raw row plus the context every error message about it needs."""

    def __init__(self, row: Any, index: int):
        if not isinstance(row, dict):
            raise DatasetError(f"row {index}: expected an object of fields, got {type(row).__name__}")
        self.row = row
        key = row.get("sample_key")
        self.where = f"row {index}" + (f" (sample_key {key!r})" if key is not None else "")

    def fail(self, field: str, problem: str) -> NoReturn:
        raise DatasetError(f"{self.where}: field '{field}': {problem}")

    def text(self, field: str) -> str:
        value = self.row[field]
        if not isinstance(value, str):
            self.fail(field, f"expected a string, got {type(value).__name__} {value!r}")
        return value

    def decoded(self, field: str) -> Any:
        """The field's value, JSON-decoded when it is stored as a string (as on the HF hub)."""
        value = self.row[field]
        if not isinstance(value, str):
            return value
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            self.fail(field, f"not valid JSON ({exc.msg} at char {exc.pos}): {_short(value)}")

    def mapping(self, field: str) -> dict[str, Any]:
        value = self.decoded(field)
        if not isinstance(value, dict):
            self.fail(field, f"expected an object keyed by difference key, got {type(value).__name__}")
        return {str(k): v for k, v in value.items()}


def parse_row(row: dict[str, Any], index: int, video_root: Path) -> Sample:
    """Turn one benchmark row into a ``Sample``; relative video paths become absolute under ``video_root``.

    ``differences_annotated`` entries that are null are skipped together with
    their label; labels for keys without an annotation are ignored.
    """
    r = _Row(row, index)
    missing = [f for f in REQUIRED_FIELDS if f not in row]
    if missing:
        raise DatasetError(f"{r.where}: missing field(s) {', '.join(missing)}; every row needs {', '.join(REQUIRED_FIELDS)}")
    key = row["sample_key"]
    if isinstance(key, bool) or not isinstance(key, (str, int)):
        r.fail("sample_key", f"expected a string, got {type(key).__name__} {key!r}")
    differences = _differences(r)
    gt = r.mapping("differences_gt")
    for k, label in gt.items():
        if label is not None and label not in _LETTERS:
            r.fail(f"differences_gt[{k!r}]", f"expected one of 'a', 'b', 'c' or null, got {label!r}")
    ignored = sorted(set(gt) - set(differences))
    if ignored:
        logger.debug("%s: labels without an annotation ignored: %s", r.where, ignored)
    n_open = row["n_differences_open_prediction"]
    if isinstance(n_open, bool) or not isinstance(n_open, int) or n_open < 0:
        r.fail("n_differences_open_prediction", f"expected a non-negative integer, got {n_open!r}")
    try:
        return Sample(
            sample_key=str(key),
            **{f: r.text(f) for f in _TEXT_FIELDS},
            videos=_videos(r, video_root),
            differences=differences,
            labels={k: gt.get(k) for k in differences},
            n_differences_open=n_open,
            retrieval_frames=_retrieval_frames(r),
            sample_hash=_sample_hash(r),
        )
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise DatasetError(f"{r.where}: {problems}") from None


def _differences(r: _Row) -> dict[str, Difference]:
    out: dict[str, Difference] = {}
    for key, entry in r.mapping("differences_annotated").items():
        field = f"differences_annotated[{key!r}]"
        if entry is None:
            continue
        if not isinstance(entry, dict):
            r.fail(field, f"expected an object with name and description, got {type(entry).__name__}")
        for name in ("name", "description"):
            if not isinstance(entry.get(name), str) or not entry[name].strip():
                r.fail(f"{field}.{name}", f"expected a non-empty string, got {entry.get(name)!r}")
        query = entry.get("query_string")
        if query is not None and not isinstance(query, str):
            r.fail(f"{field}.query_string", f"expected a string or null, got {query!r}")
        num_frames = str(entry.get("num_frames", "1"))
        if num_frames not in ("1", "gt_1"):
            r.fail(f"{field}.num_frames", f"expected '1' or 'gt_1', got {entry.get('num_frames')!r}")
        out[key] = Difference(
            key=key, name=entry["name"], description=entry["description"], query_string=query, num_frames=num_frames
        )
    return out


def _videos(r: _Row, video_root: Path) -> tuple[VideoRef, VideoRef]:
    videos = r.decoded("videos")
    if not isinstance(videos, list) or len(videos) != 2:
        r.fail("videos", f"expected a list of 2 video objects (A, B), got {_short(repr(videos))}")
    return (_video(r, videos[0], "videos[0]", video_root), _video(r, videos[1], "videos[1]", video_root))


def _video(r: _Row, video: Any, field: str, video_root: Path) -> VideoRef:
    if not isinstance(video, dict):
        r.fail(field, f"expected an object with path, fps_original, frames_trim, got {type(video).__name__}")
    path = video.get("path")
    if not isinstance(path, str) or not path:
        r.fail(f"{field}.path", f"expected a non-empty string, got {path!r}")
    fps = video.get("fps_original")
    if fps is not None and (isinstance(fps, bool) or not isinstance(fps, (int, float)) or not fps > 0):
        r.fail(f"{field}.fps_original", f"expected a positive number or null, got {fps!r}")
    resolved = Path(path).expanduser()
    if not resolved.is_absolute():
        resolved = video_root / resolved
    return VideoRef(
        path=os.path.normpath(resolved),
        fps_original=fps,
        frames_trim=_trim(r, video.get("frames_trim"), f"{field}.frames_trim"),
    )


def _trim(r: _Row, trim: Any, field: str) -> Optional[tuple[Optional[int], Optional[int]]]:
    if trim is None:
        return None
    if not isinstance(trim, (list, tuple)) or len(trim) != 2:
        r.fail(field, f"expected [start, end) with 2 entries (null = open end), got {trim!r}")
    bounds: list[Optional[int]] = []
    for value in trim:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            r.fail(field, f"entries must be frame indices >= 0 or null, got {trim!r}")
        bounds.append(value)
    start, end = bounds
    if start is not None and end is not None and end <= start:
        r.fail(field, f"[{start}, {end}) selects no frames; end must be greater than start")
    return start, end


def _retrieval_frames(r: _Row) -> Optional[RetrievalFrames]:
    """Our own annotation format when the row uses it; any other format is dropped (it is undocumented)."""
    if r.row.get("retrieval_frames") is None:
        return None
    value = r.row["retrieval_frames"]
    try:
        decoded = json.loads(value) if isinstance(value, str) else value
        return None if decoded is None else RetrievalFrames.model_validate(decoded)
    except (json.JSONDecodeError, ValidationError) as exc:
        logger.debug("%s: retrieval_frames not in the RetrievalFrames format, ignored: %s", r.where, exc)
        return None


def _sample_hash(r: _Row) -> Optional[int]:
    """The optional ``sample_hash`` (an integer; the per-sample proposer seed offset)."""
    value = r.row.get("sample_hash")
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        r.fail("sample_hash", f"expected an integer, got {value!r}")
    return value


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


# --------------------------------------------------------------------------- files -> rows


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Raw rows of one JSON (list of rows), JSONL (one row per line) or parquet file."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        import pyarrow
        import pyarrow.parquet as pq

        try:
            return pq.read_table(path).to_pylist()
        except (pyarrow.ArrowException, OSError) as exc:
            raise DatasetError(f"{path}: not a readable parquet file ({exc}); re-download or re-export it") from None
    if suffix not in (".json", ".jsonl"):
        raise DatasetError(f"{path}: unsupported dataset format '{suffix}'; use .json, .jsonl or .parquet")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read the dataset file ({exc})") from None
    if suffix == ".jsonl":
        rows = []
        for line_no, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                rows.append(_json(line, f"{path}: line {line_no}"))
        return rows
    rows = _json(text, str(path))
    if not isinstance(rows, list):
        raise DatasetError(f"{path}: a .json dataset must be a list of rows, got {type(rows).__name__}")
    return rows


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{where}: not valid JSON ({exc.msg}, line {exc.lineno} col {exc.colno})") from None


def find_data_files(root: Path, split_hint: Optional[str] = None) -> list[Path]:
    """Row files of a dataset directory, in reading order.

    Top-level row files are used when there are any, else nested ones (HF
    repo layout such as ``data/test-00000-of-00001.parquet``). Among them a
    ``dataset.*`` file wins, then the files whose name contains
    ``split_hint`` (shards are read in name order), then a single file.
    """
    candidates = sorted(p for p in root.iterdir() if p.is_file() and p.suffix.lower() in DATA_SUFFIXES)
    if not candidates:
        candidates = sorted(
            p
            for p in root.rglob("*")
            if p.is_file()
            and p.suffix.lower() in DATA_SUFFIXES
            and not any(part.startswith(".") for part in p.relative_to(root).parts)
        )
    named = sorted((p for p in candidates if p.stem == "dataset"), key=lambda p: DATA_SUFFIXES.index(p.suffix.lower()))
    if named:
        return named[:1]
    matching = [p for p in candidates if split_hint and split_hint in p.name]
    if matching:
        return matching
    if len(candidates) == 1:
        return candidates
    if not candidates:
        raise DatasetError(f"{root}: no dataset file; expected dataset.jsonl or one .json/.jsonl/.parquet file")
    listing = ", ".join(str(p.relative_to(root)) for p in candidates)
    raise DatasetError(f"{root}: several dataset files ({listing}); name the one to use with --dataset FILE")


def _download_hf(cfg: DataConfig) -> Path:
    """Snapshot the row files of the HF dataset repo (not the video zips) and return its local directory."""
    from huggingface_hub import snapshot_download

    offline = os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}
    try:
        snapshot = snapshot_download(
            repo_id=cfg.hf_repo,
            repo_type="dataset",
            revision=cfg.hf_revision,
            cache_dir=cfg.hf_cache_dir,
            allow_patterns=[f"*{suffix}" for suffix in DATA_SUFFIXES],
            local_files_only=offline,
        )
    except Exception as exc:  # the hub raises many types (HTTP, offline, missing cache, bad revision)
        mode = " (HF_HUB_OFFLINE is set and the local cache has no copy)" if offline else ""
        raise DatasetError(
            f"could not get dataset {cfg.hf_repo!r} (revision {cfg.hf_revision or 'main'}) from the Hugging Face hub"
            f"{mode}: {type(exc).__name__}: {_short(str(exc), 200)}; {_LOCAL_HINT} to use a local copy"
        ) from None
    return Path(str(snapshot))


# --------------------------------------------------------------------------- filters and entry point


def select_samples(
    samples: Sequence[Sample],
    splits: Optional[Sequence[str]] = None,
    subset_per_action: Optional[int] = None,
    limit: Optional[int] = None,
) -> list[Sample]:
    """Apply, in this order: split filter, first N per action (dataset order), first N overall."""
    present = sorted({s.split for s in samples})
    if splits:
        unknown = sorted(set(splits) - set(present))
        if unknown:
            raise DatasetError(f"split(s) {', '.join(unknown)} not in the dataset; it has: {', '.join(present) or 'none'}")
        samples = [s for s in samples if s.split in splits]
    if subset_per_action is not None:
        counts: dict[str, int] = {}
        kept = []
        for sample in samples:
            counts[sample.action] = counts.get(sample.action, 0) + 1
            if counts[sample.action] <= subset_per_action:
                kept.append(sample)
        samples = kept
    selected = list(samples[:limit] if limit is not None else samples)
    if not selected:
        raise DatasetError("no samples left after filtering; check --split / --subset / --limit and the dataset file")
    return selected


def load_dataset(cfg: DataConfig, splits: Optional[Sequence[str]] = None) -> Dataset:
    """Load VidDiffBench (``cfg.dataset == "hf"``) or a local copy, then filter by split / subset / limit."""
    revision: Optional[str] = None
    if cfg.dataset == "hf":
        snapshot = _download_hf(cfg)
        files = find_data_files(snapshot, cfg.hf_split)
        revision = snapshot.name
        source = f"hf:{cfg.hf_repo}@{revision}"
        default_root = snapshot
    else:
        path = Path(cfg.dataset).expanduser().absolute()
        if path.is_dir():
            files = find_data_files(path)
        elif path.is_file():
            files = [path]
        else:
            raise DatasetError(f"dataset {cfg.dataset!r} not found; use --dataset hf or {_LOCAL_HINT}")
        source = str(files[0]) if len(files) == 1 else str(path)
        default_root = files[0].parent
    root = Path(cfg.video_root).expanduser().absolute() if cfg.video_root else default_root
    samples: list[Sample] = []
    for file in files:
        for index, row in enumerate(read_rows(file)):
            try:
                samples.append(parse_row(row, index, root))
            except DatasetError as exc:
                raise DatasetError(f"{file}: {exc}") from None
    _check_unique(samples, source)
    return Dataset(select_samples(samples, splits, cfg.subset_per_action, cfg.limit), source, revision, root)


def _check_unique(samples: Sequence[Sample], source: str) -> None:
    seen: dict[str, int] = {}
    for index, sample in enumerate(samples):
        if sample.sample_key in seen:
            raise DatasetError(
                f"{source}: sample_key {sample.sample_key!r} appears in rows {seen[sample.sample_key]} and {index}; "
                "keys must be unique (results are stored by key)"
            )
        seen[sample.sample_key] = index
