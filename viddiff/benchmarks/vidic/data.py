"""ViDiC-1K loader: the checklist JSON from the HF hub or a local copy, into ``Sample`` models plus checklists.

ViDiC-1K (video difference captioning) pairs two videos with a yes/no
checklist: ``structured_analysis = {"Similarities": [q...], "Differences":
[q...]}``, each ``q`` with ``class`` (one of 7 categories), ``question`` and
``correct_answer``. Similarity questions ask "is X different?" so their
answer is ``no``; difference questions state the difference, answer ``yes``.
A question that breaks this convention would be scored against the wrong
side, so it is rejected like any other malformed field, naming the item.

Videos (licence CC-BY-NC-SA-4.0) live in the same HF dataset repo and are
never shipped with viddiff. With ``data.dataset == "hf"`` and no
``data.video_root``, the loader downloads the checklist and then exactly
the videos of the *selected* pairs (so ``--limit`` bounds the download);
a failed video download is only logged, and ``viddiff data check --benchmark
vidic`` then lists the missing files with the way to get them.

Overlap with VidDiffBench (about 50 pairs): a pair counts as taken from
VidDiffBench when its explicit source field (``source_dataset``, ``source``
or ``dataset``) or a directory of a *relative* video path starts with
``viddiff`` once lower-cased with non-alphanumerics removed (``VidDiffBench``,
``viddiff_bench``, ``VidDiff``). Absolute paths are not inspected, since a
user's own directory names say nothing about the data's origin.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal, NoReturn, Optional, Sequence

from pydantic import BaseModel, ConfigDict

from viddiff.config import DataConfig, ProposerConfig, VidicConfig
from viddiff.data.dataset import Dataset
from viddiff.data import hub
from viddiff.data.safety import VideoPaths, check_text_size, hf_storage_folder
from viddiff.data.viddiffbench import read_rows, select_samples
from viddiff.schema import DIMENSION_NAMES, DIMENSIONS
from viddiff.errors import DatasetError
from viddiff.schema import Sample, VideoRef

logger = logging.getLogger(__name__)

CATEGORIES = DIMENSIONS
"""Canonical category keys, in the order the paper reports them: describe mode's dimensions."""
CATEGORY_NAMES = DIMENSION_NAMES
"""Display names of the canonical keys, as the dataset and the paper spell them."""
ChecklistKind = Literal["similarity", "difference"]


class ChecklistItem(BaseModel):
    """One ViDiC-1K yes/no question about a pair, judged against a generated description."""

    model_config = ConfigDict(extra="forbid")

    key: str
    kind: ChecklistKind
    category: str
    """One of :data:`CATEGORIES`."""
    question: str
    correct_answer: Literal["yes", "no"]


@dataclass(frozen=True)
class VidicDataset(Dataset):
    """The selected pairs plus each pair's yes/no checklist."""

    checklists: dict[str, list[ChecklistItem]] = field(default_factory=dict)
    benchmark: str = "vidic"
_CATEGORY_ALIASES: dict[str, str] = {
    **{key: key for key in CATEGORIES},
    "subjects": "subject",
    "subjectattributes": "subject",
    "styles": "style",
    "visualstyle": "style",
    "backgrounds": "background",
    "environment": "background",
    "setting": "background",
    "scene": "background",
    "camerawork": "camera",
    "cameramovement": "camera",
    "cameramotion": "camera",
    "cinematography": "camera",
    "motions": "motion",
    "movement": "motion",
    "action": "motion",
    "positions": "position",
    "location": "position",
    "spatialposition": "position",
    "spatialrelationship": "position",
    "playbacktechnique": "playback",
    "playbacktechniques": "playback",
    "playbackspeed": "playback",
    "technique": "playback",
    "techniques": "playback",
    "tech": "playback",
}
"""Category spellings (lower-case, letters only) -> canonical key; the paper says cinematography and location."""

CHECKLIST_FILE = "checklist.json"
"""Name the loader looks for in a dataset directory or HF snapshot when ``vidic.checklist_file`` is unset."""
VIDDIFFBENCH_SOURCE = "viddiffbench"
DEFAULT_SOURCE = "vidic"
ACTION = DOMAIN = SPLIT = "vidic"
"""ViDiC pairs have no action, domain or split; every sample carries this placeholder."""
REQUIRED_FIELDS = ("video1_path", "video2_path", "structured_analysis")
QUESTION_FIELDS = ("class", "question", "correct_answer")
_ID_FIELDS = ("id", "sample_key", "index")
_SOURCE_FIELDS = ("source_dataset", "source", "dataset")
_GENERIC_DIRS = {"data", "videos", "video"}
_SECTIONS: tuple[tuple[str, ChecklistKind, str, Literal["yes", "no"]], ...] = (
    ("Similarities", "similarity", "s", "no"),
    ("Differences", "difference", "d", "yes"),
)
"""(checklist section, ChecklistItem.kind, key prefix, the answer every question of the section must have)."""
_CHECKLIST_SUFFIXES = (".json", ".jsonl", ".parquet")
_LOCAL_HINT = "pass --dataset PATH (a directory holding checklist.json, or the checklist JSON file itself)"


def normalise_category(raw: str) -> str:
    """Canonical key of a checklist ``class`` string: case, spacing and wording variants are accepted.

    ``"Camera Work"`` -> ``camera``, ``"playback technique"`` -> ``playback``,
    ``"subject "`` -> ``subject``; anything unknown is a ``DatasetError``
    because a silently dropped category would skew the per-category scores.
    """
    key = re.sub(r"[^a-z]", "", str(raw).lower())
    if key in _CATEGORY_ALIASES:
        return _CATEGORY_ALIASES[key]
    names = ", ".join(CATEGORY_NAMES.values())
    raise DatasetError(
        f"unknown checklist category {raw!r}; expected one of {names} "
        "(case and spacing variants, 'cinematography' and 'location' are accepted)"
    )


def is_viddiffbench_name(text: str) -> bool:
    """Whether a source name or directory component names VidDiffBench (see the module docstring)."""
    return re.sub(r"[^a-z0-9]", "", text.lower()).startswith("viddiff")


# --------------------------------------------------------------------------- items -> samples


class _Item:
    """One raw checklist item plus the context every error message about it needs."""

    def __init__(self, item: Any, index: int, max_text_chars: Optional[int] = None):
        if not isinstance(item, dict):
            raise DatasetError(
                f"item {index}: expected an object with video1_path, video2_path, structured_analysis, "
                f"got {type(item).__name__}"
            )
        self.item = item
        self.index = index
        self.max_text_chars = max_text_chars
        self.id_field = next((f for f in _ID_FIELDS if item.get(f) is not None), None)
        self.where = f"item {index}" + (f" ({self.id_field} {item[self.id_field]!r})" if self.id_field else "")

    def fail(self, field: str, problem: str) -> NoReturn:
        raise DatasetError(f"{self.where}: field '{field}': {problem}")

    def capped(self, field: str, value: str) -> str:
        """``value``, or an error naming the field when it is longer than ``data.max_text_chars``."""
        try:
            check_text_size(value, self.max_text_chars)
        except DatasetError as exc:
            self.fail(field, str(exc))
        return value

    def sample_key(self) -> str:
        """The item's own id (``id``, ``sample_key`` or ViDiC's ``index``), else its zero-padded position."""
        if self.id_field is None:
            return f"{self.index:04d}"
        value = self.item[self.id_field]
        if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
            self.fail(self.id_field, f"expected a non-empty string or an integer, got {value!r}")
        return self.capped(self.id_field, str(value).strip())

    def path(self, field: str) -> str:
        value = self.item[field]
        if not isinstance(value, str) or not value.strip():
            self.fail(field, f"expected a non-empty video path, got {value!r}")
        return self.capped(field, value.strip())

    def analysis(self) -> dict[str, Any]:
        value = self.item["structured_analysis"]
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                self.fail("structured_analysis", f"not valid JSON ({exc.msg} at char {exc.pos})")
        if not isinstance(value, dict):
            self.fail(
                "structured_analysis",
                f"expected an object with Similarities and Differences, got {type(value).__name__}",
            )
        missing = [name for name, *_ in _SECTIONS if name not in value]
        if missing:
            self.fail(
                "structured_analysis",
                f"missing {' and '.join(missing)} (has: {', '.join(map(str, value)) or 'nothing'}); "
                "use [] for an empty list",
            )
        return value


def parse_item(
    item: Any,
    index: int,
    video_root: Path,
    n_differences: int,
    *,
    paths: Optional[VideoPaths] = None,
    max_text_chars: Optional[int] = DataConfig.model_fields["max_text_chars"].default,
) -> tuple[Sample, list[ChecklistItem]]:
    """Turn one checklist item into a ``Sample`` (absolute video paths under ``video_root``) and its checklist.

    Checklist keys are ``s0, s1, ...`` for similarities and ``d0, d1, ...``
    for differences, in file order. Video paths must stay inside the folders
    ``paths`` allows (default: ``video_root``); text fields are capped at
    ``max_text_chars``.
    """
    it = _Item(item, index, max_text_chars)
    paths = paths or VideoPaths.under(video_root)
    missing = [f for f in REQUIRED_FIELDS if f not in it.item]
    if missing:
        raise DatasetError(
            f"{it.where}: missing field(s) {', '.join(missing)}; every item needs {', '.join(REQUIRED_FIELDS)}"
        )
    key = it.sample_key()
    files = (it.path("video1_path"), it.path("video2_path"))
    analysis = it.analysis()
    checklist = [q for section in _SECTIONS for q in _questions(it, analysis, *section)]
    if not checklist:
        logger.warning("%s: empty checklist (no Similarities or Differences); the pair cannot be scored", it.where)
    sample = Sample(
        sample_key=key,
        action=ACTION,
        action_name="",
        action_description="",
        split=SPLIT,
        domain=DOMAIN,
        source_dataset=source_of(it.item, files),
        videos=(_video(it, "video1_path", files[0], paths), _video(it, "video2_path", files[1], paths)),
        n_differences_open=n_differences,
    )
    return sample, checklist


def _questions(
    it: _Item, analysis: dict[str, Any], section: str, kind: ChecklistKind, prefix: str, expected: Literal["yes", "no"]
) -> list[ChecklistItem]:
    questions = analysis[section]
    if not isinstance(questions, list):
        it.fail(f"structured_analysis.{section}", f"expected a list of questions, got {type(questions).__name__}")
    out = []
    for k, q in enumerate(questions):
        field = f"structured_analysis.{section}[{k}]"
        if not isinstance(q, dict):
            it.fail(field, f"expected an object with class, question, correct_answer, got {type(q).__name__}")
        missing = [f for f in QUESTION_FIELDS if f not in q]
        if missing:
            it.fail(field, f"missing {', '.join(missing)}; every question needs {', '.join(QUESTION_FIELDS)}")
        text = q["question"]
        if not isinstance(text, str) or not text.strip():
            it.fail(f"{field}.question", f"expected a non-empty string, got {text!r}")
        it.capped(f"{field}.question", text)
        if not isinstance(q["class"], str):
            it.fail(f"{field}.class", f"expected a category name, got {q['class']!r}")
        try:
            category = normalise_category(q["class"])
        except DatasetError as exc:
            it.fail(f"{field}.class", str(exc))
        answer = q["correct_answer"]
        if not isinstance(answer, str) or answer.strip().lower() not in ("yes", "no"):
            it.fail(f"{field}.correct_answer", f"expected 'yes' or 'no', got {answer!r}")
        if answer.strip().lower() != expected:
            it.fail(
                f"{field}.correct_answer",
                f"{kind} questions are phrased so the correct answer is '{expected}', got {answer!r} "
                f"for question {text.strip()!r}; fix the answer or move the question to the other list",
            )
        out.append(
            ChecklistItem(
                key=f"{prefix}{k}", kind=kind, category=category, question=text.strip(), correct_answer=expected
            )
        )
    return out


def _video(it: _Item, field: str, path: str, paths: VideoPaths) -> VideoRef:
    try:
        return VideoRef(path=paths.resolve(path))
    except DatasetError as exc:
        it.fail(field, str(exc))


def source_of(item: dict[str, Any], paths: Sequence[str]) -> str:
    """Where a pair comes from: an explicit source field, else VidDiffBench or the top folder its relative paths name.

    ``data/LongoXC/add_person/1_src.mp4`` -> ``LongoXC``; a pair whose
    relative path has a ``VidDiffBench`` directory -> ``viddiffbench``;
    no information -> ``vidic``.
    """
    for name in _SOURCE_FIELDS:
        value = item.get(name)
        if isinstance(value, str) and value.strip():
            return VIDDIFFBENCH_SOURCE if is_viddiffbench_name(value) else value.strip()
    folders = [
        list(PurePosixPath(path.replace("\\", "/")).parts[:-1])
        for path in paths
        if not Path(path).expanduser().is_absolute()
    ]
    if any(is_viddiffbench_name(part) for parts in folders for part in parts):
        return VIDDIFFBENCH_SOURCE
    for parts in folders:
        named = [part for part in parts if part.lower() not in _GENERIC_DIRS and part not in (".", "..")]
        if named:
            return named[0]
    return DEFAULT_SOURCE


def overlap_with_viddiffbench(dataset: Dataset) -> list[str]:
    """Sample keys of the pairs taken from VidDiffBench, so results can be reported with and without them."""
    return [s.sample_key for s in dataset if s.source_dataset == VIDDIFFBENCH_SOURCE]


# --------------------------------------------------------------------------- files


def find_checklist(root: Path, checklist_file: Optional[str] = None) -> Path:
    """The checklist file of a dataset directory or HF snapshot.

    ``checklist_file`` (relative to ``root``) wins; else the shallowest
    ``checklist.json``, else the only JSON/JSONL/parquet file, else the
    only one whose name starts with ``checklist``.
    """
    if checklist_file:
        path = root / checklist_file
        if path.is_file():
            return path
        raise DatasetError(
            f"{root}: no checklist file {checklist_file!r} (vidic.checklist_file); check the name or unset it"
        )
    candidates = sorted(
        (
            p
            for p in root.rglob("*")
            if p.suffix.lower() in _CHECKLIST_SUFFIXES
            and p.is_file()
            and not any(part.startswith(".") for part in p.relative_to(root).parts)
        ),
        key=lambda p: (len(p.relative_to(root).parts), str(p)),
    )
    named = [p for p in candidates if p.name == CHECKLIST_FILE]
    if named:
        return named[0]
    if len(candidates) == 1:
        return candidates[0]
    prefixed = [p for p in candidates if p.name.lower().startswith("checklist")]
    if len(prefixed) == 1:
        return prefixed[0]
    if not candidates:
        raise DatasetError(f"{root}: no checklist file; expected {CHECKLIST_FILE} or one .json/.jsonl/.parquet file")
    listing = ", ".join(str(p.relative_to(root)) for p in candidates[:10]) + (", ..." if len(candidates) > 10 else "")
    raise DatasetError(
        f"{root}: several candidate checklist files ({listing}); name one with --set vidic.checklist_file=PATH"
    )


def _download_checklist(data: DataConfig, vidic: VidicConfig) -> Path:
    patterns = [vidic.checklist_file] if vidic.checklist_file else ["*.json", "*.jsonl"]
    return hub.snapshot(
        vidic.hf_repo, vidic.hf_revision, data.hf_cache_dir, patterns,
        what="the ViDiC-1K checklist", hint=f"{_LOCAL_HINT} to use a local copy",
    )


def load_vidic(
    data: DataConfig,
    vidic: VidicConfig,
    splits: Optional[Sequence[str]] = None,
    *,
    fetch_videos: bool = True,
    default_n_differences: int = ProposerConfig().describe_n_differences,
) -> VidicDataset:
    """Load ViDiC-1K from the HF hub (``data.dataset == "hf"``) or a local directory / checklist file.

    Relative video paths resolve against ``data.video_root`` when set, else
    the HF snapshot, the ``--dataset`` directory, or the checklist file's
    directory. ``data.limit`` keeps the first N pairs; every pair has action
    ``vidic``, so ``data.subset_per_action`` N also keeps the first N. From
    the hub, the selected pairs' videos are downloaded unless
    ``fetch_videos`` is false (scoring text needs no videos) or
    ``data.video_root`` points elsewhere. Each pair asks describe mode for ``vidic.n_differences``
    candidate differences, else ``default_n_differences`` (``proposer.describe_n_differences``).
    """
    if splits:
        raise DatasetError(
            f"ViDiC-1K has no splits (got --split {', '.join(splits)}); drop --split, use --limit to run fewer pairs"
        )
    revision: Optional[str] = None
    if data.dataset == "hf":
        snapshot = _download_checklist(data, vidic)
        file = find_checklist(snapshot, vidic.checklist_file)
        revision = snapshot.name
        source = f"hf:{vidic.hf_repo}@{revision}"
        default_root = snapshot
    else:
        path = Path(data.dataset).expanduser().absolute()
        if path.is_dir():
            file, default_root = find_checklist(path, vidic.checklist_file), path
        elif path.is_file():
            file, default_root = path, path.parent
        else:
            raise DatasetError(f"ViDiC-1K dataset {data.dataset!r} not found; use --dataset hf or {_LOCAL_HINT}")
        source = str(file)
    root = Path(data.video_root).expanduser().absolute() if data.video_root else default_root
    own_folder = hf_storage_folder(default_root) if data.dataset == "hf" else default_root
    paths = VideoPaths.under(root, own_folder, allow_outside=data.allow_paths_outside_root)
    n_differences = vidic.n_differences or default_n_differences
    samples: list[Sample] = []
    checklists: dict[str, list[ChecklistItem]] = {}
    for index, item in enumerate(read_rows(file)):
        try:
            sample, checklist = parse_item(
                item, index, root, n_differences, paths=paths, max_text_chars=data.max_text_chars
            )
        except DatasetError as exc:
            raise DatasetError(f"{file}: {exc}") from None
        if sample.sample_key in checklists:
            raise DatasetError(
                f"{file}: item {index}: id {sample.sample_key!r} is used by an earlier item; "
                "ids must be unique (results are stored by id)"
            )
        samples.append(sample)
        checklists[sample.sample_key] = checklist
    selected = select_samples(samples, None, data.subset_per_action, data.limit)
    if data.dataset == "hf" and fetch_videos and not data.video_root:
        hub.fetch_missing(
            vidic.hf_repo, root, data.hf_cache_dir, (r.path for s in selected for r in s.videos),
            what="ViDiC-1K", benchmark="vidic",
        )
    n_questions = sum(len(checklists[s.sample_key]) for s in selected)
    logger.info("ViDiC-1K: %d pairs, %d checklist questions from %s", len(selected), n_questions, source)
    return VidicDataset(
        selected, source, revision, root, checklists={s.sample_key: checklists[s.sample_key] for s in selected}
    )


__all__ = [
    "CATEGORIES",
    "CATEGORY_NAMES",
    "find_checklist",
    "load_vidic",
    "normalise_category",
    "overlap_with_viddiffbench",
    "parse_item",
    "source_of",
]
