"""VidDiffBench loader: the HF hub or a local JSON / JSONL / parquet copy, into ``Sample`` models.

Rows follow design.md §5. The HF copy stores ``videos``, ``differences_*`` and
``retrieval_frames`` as JSON-encoded strings; local copies may hold them
decoded, so both are accepted. Every published revision loads:

* the first public one (557 rows) has no ``domain`` (taken from the action id,
  ``fitness_3`` -> fitness), no ``n_differences_open_prediction`` (taken from
  ``n_differences.json`` beside the data), and a ``split`` column that holds
  the domain (the difficulty comes from ``lookup_action_to_split.json``);
* ``source_dataset``, ``sample_hash``, the thumbnails and ``retrieval_frames``
  are optional everywhere.

A dataset folder may hold side files and scripts next to the rows (the HF
repo layout: ``data/test-00000-of-00001.parquet`` plus JSON files at the
root); row files are recognised by what they hold. Text fields are capped
(``data.max_text_chars``) and video paths must stay inside the dataset's
folders (``viddiff.data.safety``). Every problem is a ``DatasetError``
naming the file, row, sample key and field, because a malformed row found
three stages later costs a whole run.
"""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, Optional, Sequence

from pydantic import ValidationError

from viddiff.config import DataConfig
from viddiff.data import hub
from viddiff.data.retrieval import UnknownFormat, parse_retrieval_frames
from viddiff.data.safety import VideoPaths, check_text_size, hf_storage_folder
from viddiff.data.side_files import N_DIFFERENCES_FILE, SPLIT_LOOKUP_FILE, SideFiles, search_dirs
from viddiff.errors import DatasetError
from viddiff.data.dataset import Dataset
from viddiff.schema import SPLITS, Difference, RetrievalFrames, Sample, VideoRef

logger = logging.getLogger(__name__)

DATA_SUFFIXES = (".jsonl", ".json", ".parquet")
"""Row-file formats, in the order a ``dataset.*`` file is preferred when several exist."""
REQUIRED_FIELDS = (
    "sample_key",
    "action",
    "action_name",
    "action_description",
    "split",
    "videos",
    "differences_annotated",
    "differences_gt",
)
DOMAINS = ("fitness", "ballsports", "diving", "music", "surgery")
ROW_MARKERS = ("sample_key", "videos")
"""Fields every row has; a file whose records have them holds benchmark rows."""
SKIPPED_COLUMNS = ("vid0_thumbnail", "vid1_thumbnail")
"""Parquet columns never read (images nothing uses)."""
_TEXT_FIELDS = ("action", "action_name", "action_description")
_LETTERS = ("a", "b", "c")
_ACTION_ID = re.compile(r"(?P<domain>.+?)_\d+")
_LOCAL_HINT = "pass --dataset PATH (a directory holding dataset.jsonl, or a .json/.jsonl/.parquet file)"


# --------------------------------------------------------------------------- rows -> samples


@dataclass
class RowContext:
    """What parsing a row needs beyond the row: path rules, side files, the text cap."""

    paths: VideoPaths
    side: SideFiles = field(default_factory=lambda: SideFiles([]))
    max_text_chars: Optional[int] = DataConfig.model_fields["max_text_chars"].default
    unreadable_retrieval: list[str] = field(default_factory=list)
    """``retrieval_frames`` in no known shape, as "row: reason" (reported once per load)."""
    missing_n_diff: dict[str, str] = field(default_factory=dict)
    """Sample key → why its row has no N_diff (only open mode needs one; it refuses such a selection)."""


class _Row:
    """One raw row plus the context every error message about it needs."""

    def __init__(self, row: Any, index: int, context: RowContext):
        if not isinstance(row, dict):
            raise DatasetError(f"row {index}: expected an object of fields, got {type(row).__name__}")
        self.row = row
        self.context = context
        key = row.get("sample_key")
        shown = key if not isinstance(key, str) or len(key) <= 80 else key[:80] + "..."
        self.where = f"row {index}" + (f" (sample_key {shown!r})" if key is not None else "")

    def fail(self, field: str, problem: str) -> NoReturn:
        raise DatasetError(f"{self.where}: field '{field}': {problem}")

    def capped(self, field: str, value: str) -> str:
        try:
            check_text_size(value, self.context.max_text_chars)
        except DatasetError as exc:
            self.fail(field, str(exc))
        return value

    def text(self, field: str) -> str:
        value = self.row[field]
        if not isinstance(value, str):
            self.fail(field, f"expected a string, got {type(value).__name__} {_short(repr(value))}")
        return self.capped(field, value)

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


def parse_row(row: dict[str, Any], index: int, video_root: Path, context: Optional[RowContext] = None) -> Sample:
    """Turn one benchmark row into a ``Sample``; relative video paths become absolute under ``video_root``.

    ``differences_annotated`` entries that are null are skipped together with
    their label; labels for keys without an annotation are ignored. Without
    a ``context``, paths must stay inside ``video_root`` and no side files are
    consulted.
    """
    r = _Row(row, index, context or RowContext(paths=VideoPaths.under(video_root)))
    missing = [f for f in REQUIRED_FIELDS if f not in row]
    if missing:
        raise DatasetError(
            f"{r.where}: missing field(s) {', '.join(missing)}; every row needs {', '.join(REQUIRED_FIELDS)}"
        )
    key = row["sample_key"]
    if isinstance(key, bool) or not isinstance(key, (str, int)):
        r.fail("sample_key", f"expected a string, got {type(key).__name__} {_short(repr(key))}")
    r.capped("sample_key", str(key))
    texts = {f: r.text(f) for f in _TEXT_FIELDS}
    split, domain_from_split = _split(r, texts["action"])
    differences = _differences(r)
    gt = r.mapping("differences_gt")
    for k, label in gt.items():
        if label is not None and label not in _LETTERS:
            r.fail(f"differences_gt[{_short(repr(k))}]", f"expected one of 'a', 'b', 'c' or null, got {_short(repr(label))}")
    ignored = sorted(set(gt) - set(differences))
    if ignored:
        logger.debug("%s: labels without an annotation ignored: %s", r.where, ignored)
    raw_videos = r.decoded("videos")
    try:
        return Sample(
            sample_key=str(key),
            **texts,
            split=split,
            domain=_domain(r, texts["action"], domain_from_split),
            source_dataset=r.text("source_dataset") if row.get("source_dataset") is not None else "",
            videos=_videos(r, raw_videos),
            differences=differences,
            labels={k: gt.get(k) for k in differences},
            n_differences_open=_n_differences(r, texts["action"]),
            retrieval_frames=_retrieval_frames(r, raw_videos),
            sample_hash=_sample_hash(r),
        )
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise DatasetError(f"{r.where}: {problems}") from None


def _split(r: _Row, action: str) -> tuple[str, Optional[str]]:
    """The difficulty split, and the domain when the row's ``split`` held it (first public revision)."""
    split = r.text("split")
    if split in SPLITS or split not in DOMAINS:
        return split, None
    side = r.context.side
    lookup = side.split_lookup
    if lookup is None:
        r.fail(
            "split",
            f"{split!r} is a domain, not a difficulty (the first VidDiffBench revision stores splits that way); "
            f"the difficulty comes from {side.describe(SPLIT_LOOKUP_FILE)}, which is missing: download the whole "
            "dataset repo (or that file) next to the rows",
        )
    if action not in lookup:
        r.fail("split", f"{split!r} is a domain, and action {action!r} is not in {side.path(SPLIT_LOOKUP_FILE)}")
    return lookup[action], split


def _domain(r: _Row, action: str, domain_from_split: Optional[str]) -> str:
    """The ``domain`` column, else the action id's prefix (``fitness_3`` -> ``fitness``), else the legacy split."""
    if r.row.get("domain") is not None:
        return r.text("domain")
    match = _ACTION_ID.fullmatch(action)
    if match:
        return match["domain"]
    if domain_from_split:
        return domain_from_split
    r.fail("domain", f"missing, and action id {action!r} has no domain prefix (like 'fitness_3'); add a domain column")


def _n_differences(r: _Row, action: str) -> int:
    """N_diff from the row's ``n_differences_open_prediction``, else from ``n_differences.json`` beside the data.

    A row with neither gets 0 and is noted in the context: closed mode never uses N_diff, open mode refuses
    the selection (:func:`viddiff.data.dataset.Dataset.missing_n_diff`)."""
    value = r.row.get("n_differences_open_prediction")
    if value is None:
        side = r.context.side
        table = side.n_differences
        if table is None:
            problem = f"missing, and there is no {side.describe(N_DIFFERENCES_FILE)}; add the column or the file (action -> N)"
        elif action not in table:
            problem = f"missing, and action {action!r} is not in {side.path(N_DIFFERENCES_FILE)}"
        else:
            return table[action]
        r.context.missing_n_diff[str(r.row.get("sample_key"))] = f"{r.where}: field 'n_differences_open_prediction': {problem}"
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        r.fail("n_differences_open_prediction", f"expected a non-negative integer, got {_short(repr(value))}")
    return value


def _differences(r: _Row) -> dict[str, Difference]:
    out: dict[str, Difference] = {}
    for key, entry in r.mapping("differences_annotated").items():
        field = f"differences_annotated[{_short(repr(key))}]"
        if entry is None:
            continue
        r.capped(field, key)
        if not isinstance(entry, dict):
            r.fail(field, f"expected an object with name and description, got {type(entry).__name__}")
        for name in ("name", "description"):
            if not isinstance(entry.get(name), str) or not entry[name].strip():
                r.fail(f"{field}.{name}", f"expected a non-empty string, got {_short(repr(entry.get(name)))}")
            r.capped(f"{field}.{name}", entry[name])
        query = entry.get("query_string")
        if query is not None and not isinstance(query, str):
            r.fail(f"{field}.query_string", f"expected a string or null, got {_short(repr(query))}")
        if query is not None:
            r.capped(f"{field}.query_string", query)
        num_frames = str(entry.get("num_frames", "1"))
        if num_frames not in ("1", "gt_1"):
            r.fail(f"{field}.num_frames", f"expected '1' or 'gt_1', got {_short(repr(entry.get('num_frames')))}")
        out[key] = Difference(
            key=key, name=entry["name"], description=entry["description"], query_string=query, num_frames=num_frames
        )
    return out


def _videos(r: _Row, videos: Any) -> tuple[VideoRef, VideoRef]:
    if not isinstance(videos, list) or len(videos) != 2:
        r.fail("videos", f"expected a list of 2 video objects (A, B), got {_short(repr(videos))}")
    return (_video(r, videos[0], "videos[0]"), _video(r, videos[1], "videos[1]"))


def _video(r: _Row, video: Any, field: str, *, a_view: bool = False) -> VideoRef:
    """One video entry; a performance filmed by several calibrated cameras also lists ``views`` (each an entry
    like this one, without views of its own) and ``calibration``, a path relative to the dataset like ``path``."""
    if not isinstance(video, dict):
        r.fail(field, f"expected an object with path, fps_original, frames_trim, got {type(video).__name__}")
    fps = video.get("fps_original")
    if fps is not None and (isinstance(fps, bool) or not isinstance(fps, (int, float)) or not fps > 0):
        r.fail(f"{field}.fps_original", f"expected a positive number or null, got {_short(repr(fps))}")
    views, calibration = video.get("views") or [], video.get("calibration")
    if a_view and (views or calibration is not None):
        r.fail(field, "a view has no views or calibration of its own: list every camera's video in the main entry's views")
    if not isinstance(views, list):
        r.fail(f"{field}.views", f"expected a list of video objects, got {_short(repr(views))}")
    if bool(views) != (calibration is not None):
        r.fail(
            f"{field}.calibration" if views else f"{field}.views",
            "views need a calibration (the cameras of path, then of each view)" if views
            else "a calibration needs views (the other cameras' videos)",
        )
    return VideoRef(
        path=_dataset_path(r, video.get("path"), f"{field}.path"), fps_original=fps,
        frames_trim=_trim(r, video.get("frames_trim"), f"{field}.frames_trim"),
        views=tuple(_video(r, view, f"{field}.views[{i}]", a_view=True) for i, view in enumerate(views)),
        calibration=None if calibration is None else _dataset_path(r, calibration, f"{field}.calibration"),
    )


def _dataset_path(r: _Row, path: Any, field: str) -> str:
    """A path of the row, resolved against the dataset's folders and kept inside them."""
    if not isinstance(path, str) or not path:
        r.fail(field, f"expected a non-empty string, got {_short(repr(path))}")
    r.capped(field, path)
    try:
        return r.context.paths.resolve(path)
    except DatasetError as exc:
        r.fail(field, str(exc))


def _trim(r: _Row, trim: Any, field: str) -> Optional[tuple[Optional[int], Optional[int]]]:
    if trim is None:
        return None
    if not isinstance(trim, (list, tuple)) or len(trim) != 2:
        r.fail(field, f"expected [start, end) with 2 entries (null = open end), got {_short(repr(trim))}")
    bounds: list[Optional[int]] = []
    for value in trim:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            r.fail(field, f"entries must be frame indices >= 0 or null, got {_short(repr(trim))}")
        bounds.append(value)
    start, end = bounds
    if start is not None and end is not None and end <= start:
        r.fail(field, f"[{start}, {end}) selects no frames; end must be greater than start")
    return start, end


def _retrieval_frames(r: _Row, videos: Any) -> Optional[RetrievalFrames]:
    """The row's keyframe annotations in any published shape; an unreadable one is recorded and ignored.

    Optional data never blocks loading: a run without the oracle localizer
    does not need it, and the oracle falls back for unannotated differences.
    """
    try:
        return parse_retrieval_frames(r.row.get("retrieval_frames"), videos if isinstance(videos, list) else ())
    except UnknownFormat as exc:
        r.context.unreadable_retrieval.append(f"{r.where}: {exc}")
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
        r.fail("sample_hash", f"expected an integer, got {_short(repr(value))}")
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
            names = pq.read_schema(path).names
            return pq.read_table(path, columns=[n for n in names if n not in SKIPPED_COLUMNS]).to_pylist()
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


def holds_rows(path: Path) -> bool:
    """Whether a candidate file holds benchmark rows (records with ``sample_key`` and ``videos``).

    A file that cannot be parsed counts as a row file: it may be a damaged
    one, and reading it then says exactly what is wrong.
    """
    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            return all(m in pq.read_schema(path).names for m in ROW_MARKERS)
        with path.open(encoding="utf-8") as f:
            if suffix == ".jsonl":
                first = next((line for line in f if line.strip()), "")
                return _is_row(json.loads(first)) if first else False
            value = json.load(f)
    except Exception:  # unreadable or malformed: let read_rows report it
        return True
    return isinstance(value, list) and bool(value) and _is_row(value[0])


def _is_row(value: Any) -> bool:
    return isinstance(value, dict) and all(m in value for m in ROW_MARKERS)


def find_data_files(root: Path, split_hint: Optional[str] = None) -> list[Path]:
    """Row files of a dataset directory, in reading order.

    Folders are searched level by level (hidden ones skipped) and the search
    stops at the shallowest level holding row files, so unpacked videos and
    their metadata further down are never opened. A ``.json``/``.jsonl``/
    ``.parquet`` file is a candidate when it holds rows; side files such as
    ``n_differences.json`` are not. Among candidates a ``dataset.*`` file
    wins, then the files whose name contains ``split_hint`` (shards in name
    order), then a single file.
    """
    seen: list[Path] = []
    level = [root]
    visited = {os.path.realpath(root)}
    candidates: list[Path] = []
    while level and not candidates:
        files, folders = _scan(level, visited)
        seen += files
        candidates = [p for p in files if holds_rows(p)]
        level = folders
    named = sorted((p for p in candidates if p.stem == "dataset"), key=lambda p: DATA_SUFFIXES.index(p.suffix.lower()))
    if named:
        return named[:1]
    matching = sorted(p for p in candidates if split_hint and split_hint in p.name)
    if matching:
        return matching
    if len(candidates) == 1:
        return candidates
    if not candidates:
        others = f" ({', '.join(_listing(root, seen))} hold no rows)" if seen else ""
        raise DatasetError(
            f"{root}: no dataset file{others}; expected dataset.jsonl or one .json/.jsonl/.parquet file of rows "
            f"(records with {' and '.join(ROW_MARKERS)})"
        )
    raise DatasetError(
        f"{root}: several dataset files ({', '.join(_listing(root, candidates))}); name the one to use with --dataset FILE"
    )


def _scan(folders: Sequence[Path], visited: set[str]) -> tuple[list[Path], list[Path]]:
    """Data-format files directly in ``folders``, and their non-hidden subfolders not seen before (symlink loops)."""
    files: list[Path] = []
    subfolders: list[Path] = []
    for folder in folders:
        try:
            entries = list(folder.iterdir())
        except OSError:  # unreadable folder: it holds nothing we can load
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            if entry.is_dir():
                real = os.path.realpath(entry)
                if real not in visited:
                    visited.add(real)
                    subfolders.append(entry)
            elif entry.suffix.lower() in DATA_SUFFIXES and entry.is_file():
                files.append(entry)
    return sorted(files), sorted(subfolders)


def _listing(root: Path, paths: Sequence[Path], limit: int = 10) -> list[str]:
    shown = [str(p.relative_to(root)) for p in paths[:limit]]
    return shown + (["..."] if len(paths) > limit else [])


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
    """Load VidDiffBench (``cfg.dataset == "hf"``) or a local copy, then filter by split / subset / limit.

    Relative video paths resolve against ``cfg.video_root``; without it,
    against the ``--dataset`` folder, or for the hub against a stable folder
    per repo (``hub.default_video_root``, where ``viddiff data download``
    unpacks the archives).
    """
    revision: Optional[str] = None
    if cfg.dataset == "hf":
        data_dir = hub.snapshot(cfg.hf_repo, cfg.hf_revision, cfg.hf_cache_dir)
        files = find_data_files(data_dir, cfg.hf_split)
        revision = data_dir.name
        source = f"hf:{cfg.hf_repo}@{revision}"
        default_root = hub.default_video_root(cfg.hf_repo)
        own_folder = hf_storage_folder(data_dir)
        side_root: Optional[Path] = data_dir
    else:
        path = Path(cfg.dataset).expanduser().absolute()
        if path.is_dir():
            data_dir, files, side_root = path, find_data_files(path), path
        elif path.is_file():
            data_dir, files, side_root = path.parent, [path], None
        else:
            raise DatasetError(f"dataset {cfg.dataset!r} not found; use --dataset hf or {_LOCAL_HINT}")
        source = str(files[0]) if len(files) == 1 else str(path)
        default_root = own_folder = data_dir
    root = Path(cfg.video_root).expanduser().absolute() if cfg.video_root else default_root
    paths = VideoPaths.under(root, own_folder, allow_outside=cfg.allow_paths_outside_root)
    samples: list[Sample] = []
    unreadable: list[str] = []
    missing_n_diff: dict[str, str] = {}
    for file in files:
        context = RowContext(
            paths=paths,
            side=SideFiles(search_dirs(file, side_root)),
            max_text_chars=cfg.max_text_chars,
        )
        for index, row in enumerate(read_rows(file)):
            try:
                samples.append(parse_row(row, index, root, context))
            except DatasetError as exc:
                raise DatasetError(f"{file}: {exc}") from None
        unreadable += [f"{file.name} {problem}" for problem in context.unreadable_retrieval]
        missing_n_diff.update({key: f"{file}: {problem}" for key, problem in context.missing_n_diff.items()})
    if unreadable:
        logger.warning(
            "retrieval_frames of %d row(s) are in no known format and were ignored (the oracle localizer falls back "
            "for them); first: %s",
            len(unreadable),
            unreadable[0],
        )
    _check_unique(samples, source)
    selected = select_samples(samples, splits, cfg.subset_per_action, cfg.limit)
    without = [missing_n_diff[s.sample_key] for s in selected if s.sample_key in missing_n_diff]
    n = len(without)
    missing = f"{n} {'row has' if n == 1 else 'rows have'} none, the first: {without[0]}" if without else None
    return Dataset(selected, source, revision, root, data_dir=data_dir, missing_n_diff=missing)


def _check_unique(samples: Sequence[Sample], source: str) -> None:
    seen: dict[str, int] = {}
    for index, sample in enumerate(samples):
        if sample.sample_key in seen:
            raise DatasetError(
                f"{source}: sample_key {sample.sample_key!r} appears in rows {seen[sample.sample_key]} and {index}; "
                "keys must be unique (results are stored by key)"
            )
        seen[sample.sample_key] = index
