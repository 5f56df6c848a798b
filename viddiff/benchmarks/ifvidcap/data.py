"""IF-VidCap loader: instructions, their checklists and their videos, from the published files or the Hub.

The published layout (GitHub ``NJU-LINK/IF-VidCap``, with the videos beside it):

- ``annotation/prompt.json``: ``{video_id: [{field, prompt_id, generated_prompt, constraints_used}, ...]}``,
  four instructions per video;
- the checklists, either ``annotation/checklist.json`` (``{video_id: [{"checklist": {...}}, ...]}``, aligned
  **by position** with the video's prompts, as the released scorer zips them) or a table with a
  ``checklist`` column (the Hub's parquet: one row per instruction, in ``prompt.json`` order; its
  ``instruction`` column, when present, must equal the prompt it is zipped with);
- ``annotation/video_meta_info.json``: ``{video_id: {processed_path, ...}}``, the 5-fps re-encodes the
  released inference scripts read.

A checklist is ``{"ruled_based_check": [rule items], "open_ended_check": [groups]}`` (the key's spelling
is the benchmark's). One :class:`~viddiff.schema.Sample` per instruction, keyed ``<video_id>/<prompt_id>``,
with a ``caption`` task: the instruction, the benchmark's captioning system prompt, and its frame rate.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from viddiff.benchmarks.ifvidcap.rules import RULE_TYPES
from viddiff.config import DataConfig, IfvidcapConfig
from viddiff.data.dataset import Dataset
from viddiff.data import hub
from viddiff.data.safety import VideoPaths, check_field_sizes, hf_storage_folder
from viddiff.data.viddiffbench import read_rows, select_samples
from viddiff.errors import DatasetError
from viddiff.schema import Sample, VideoRef, VideoTask

logger = logging.getLogger(__name__)

PROMPT_FILE = "annotation/prompt.json"
CHECKLIST_FILE = "annotation/checklist.json"
META_FILE = "annotation/video_meta_info.json"
TABLE_SUFFIXES = (".parquet", ".jsonl")
DOMAIN = "ifvidcap"
"""Every sample's domain: ``baseline.fps_by_domain.ifvidcap`` overrides the benchmark's frame rate."""
_LOCAL_HINT = "pass --dataset PATH (a folder holding annotation/prompt.json, as the IF-VidCap repository lays it out)"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RuleItem(BaseModel):
    """One rule-based constraint: a check (``constraint_id``) applied to spans a judge extracts."""

    model_config = ConfigDict(extra="allow")

    check_id: str
    constraint_id: str
    check_description: str = ""
    parameters: dict[str, Any] = Field(default_factory=dict)

    def as_published(self) -> dict[str, Any]:
        """The item as the checklist holds it (``content`` still null): what the extractor is shown."""
        return self.model_dump(mode="json")


class OpenItem(BaseModel):
    """One question about the caption, answered by the judge from the caption alone."""

    model_config = ConfigDict(extra="allow")

    check_id: str
    check_type: str = ""
    """``attempt`` (yes/no: did the caption try?) or ``correctness`` (A-D: is it right?)."""
    question: str
    options: list[str]
    correct_answer: str


class OpenGroup(BaseModel):
    """One open-ended constraint: satisfied only when every one of its questions is answered correctly."""

    model_config = ConfigDict(extra="allow")

    check_content: str = ""
    check_items: list[OpenItem] = Field(default_factory=list)


class Checklist(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    rules: list[RuleItem] = Field(default_factory=list, alias="ruled_based_check")
    groups: list[OpenGroup] = Field(default_factory=list, alias="open_ended_check")


class Instruction(_Strict):
    """One instruction of the benchmark with everything scoring needs."""

    video_id: str
    prompt_id: str
    field: str
    prompt: str
    """``generated_prompt``: what the captioner is asked (and what the open-question judge is shown)."""
    constraints_used: list[str] = Field(default_factory=list)
    """The constraint types the prompt was generated from (informational; the checklist is what is scored)."""
    checklist: Checklist


@dataclass(frozen=True)
class IfvidcapDataset(Dataset):
    """The selected instructions (one sample each) plus their checklists."""

    instructions: dict[str, Instruction] = field(default_factory=dict)
    benchmark: str = "ifvidcap"


def sample_key(video_id: str, prompt_id: str) -> str:
    return f"{video_id}/{prompt_id}"


# ------------------------------------------------------------------------------------------- reading


def _read_json_file(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DatasetError(f"{path}: not found; {_LOCAL_HINT}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read it ({exc})") from None
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None


def _capped(value: Any, cap: Optional[int], where: str, field: str = "") -> None:
    """``data.max_text_chars`` on every text in ``value``; the error starts with ``where`` (file and row)."""
    try:
        check_field_sizes(value, cap, field)
    except DatasetError as exc:
        raise DatasetError(f"{where}: {exc}") from None


def _prompts(path: Path, cap: Optional[int]) -> dict[str, list[dict[str, Any]]]:
    raw = _read_json_file(path)
    if not isinstance(raw, dict):
        raise DatasetError(f"{path}: expected {{video_id: [prompt, ...]}}, got a {type(raw).__name__}")
    for index, (video_id, prompts) in enumerate(raw.items()):
        _capped(video_id, cap, f"{path}: video {index}", "video_id")
        if not isinstance(prompts, list):
            raise DatasetError(f"{path}: video {video_id!r}: expected a list of prompts, got {type(prompts).__name__}")
        for k, prompt in enumerate(prompts):
            where = f"{path}: video {video_id!r} prompt {k}"
            if not isinstance(prompt, dict):
                raise DatasetError(f"{where}: expected an object, got {type(prompt).__name__}")
            _capped(prompt, cap, where)
            missing = [f for f in ("prompt_id", "generated_prompt") if f not in prompt]
            if missing:
                raise DatasetError(f"{where}: missing {', '.join(missing)}")
            if not isinstance(prompt["generated_prompt"], str) or not prompt["generated_prompt"].strip():
                raise DatasetError(f"{where}: generated_prompt must be a non-empty string")
            used = prompt.get("constraints_used")
            if used is not None and not isinstance(used, list):
                raise DatasetError(f"{where}: constraints_used must be a list, got {type(used).__name__}")
    return raw


def _checklists_from_json(path: Path) -> dict[str, list[Any]]:
    raw = _read_json_file(path)
    if not isinstance(raw, dict):
        raise DatasetError(f"{path}: expected {{video_id: [{{\"checklist\": ...}}, ...]}}, got a {type(raw).__name__}")
    out: dict[str, list[Any]] = {}
    for video_id, entries in raw.items():
        if not isinstance(entries, list):
            raise DatasetError(f"{path}: video {video_id!r}: expected a list, got {type(entries).__name__}")
        out[video_id] = [e.get("checklist") if isinstance(e, dict) and "checklist" in e else e for e in entries]
    return out


def _checklists_from_table(path: Path, prompts: dict[str, list[dict[str, Any]]]) -> dict[str, list[Any]]:
    """The ``checklist`` column zipped by position with the prompts in ``prompt.json`` order."""
    rows = read_rows(path)
    flat = [(video_id, prompt) for video_id, ps in prompts.items() for prompt in ps]
    if len(rows) != len(flat):
        raise DatasetError(
            f"{path}: {len(rows)} rows but {len(flat)} prompts in prompt.json; the checklist column is zipped with "
            "the prompts by position, so both must list every instruction in the same order"
        )
    out: dict[str, list[Any]] = {}
    for index, (row, (video_id, prompt)) in enumerate(zip(rows, flat)):
        if not isinstance(row, dict) or "checklist" not in row:
            raise DatasetError(f"{path}: row {index}: expected an object with a 'checklist' column")
        given = row.get("instruction")
        if isinstance(given, str) and given.strip() != prompt["generated_prompt"].strip():
            raise DatasetError(
                f"{path}: row {index}: its instruction {given[:60]!r} is not prompt {prompt.get('prompt_id')!r} of "
                f"video {video_id!r} ({prompt['generated_prompt'][:60]!r}); the rows are out of prompt.json order"
            )
        out.setdefault(video_id, []).append(row["checklist"])
    return out


def parse_checklist(raw: Any, where: str, cap: Optional[int]) -> Checklist:
    """A checklist (an object or its JSON text); unknown rule types, malformed items and texts longer than
    ``cap`` (``data.max_text_chars``) name the item."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{where}: checklist is not valid JSON ({exc.msg})") from None
    if not isinstance(raw, dict):
        raise DatasetError(f"{where}: checklist must be an object, got {type(raw).__name__}")
    _capped(raw, cap, where)
    try:
        checklist = Checklist.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise DatasetError(f"{where}: checklist field {loc}: {err['msg']}") from None
    for item in checklist.rules:
        if item.constraint_id not in RULE_TYPES:
            raise DatasetError(
                f"{where}: rule {item.check_id}: unknown constraint_id {item.constraint_id!r}; one of {', '.join(RULE_TYPES)}"
            )
    return checklist


def _video_path(video_id: str, meta: dict[str, Any], root: Path, cap: Optional[int]) -> str:
    """The video's file: ``processed_path`` from the meta file, else the README's ``videos/<group>/<n>.mp4``."""
    entry = meta.get(video_id)
    if isinstance(entry, dict) and isinstance(entry.get("processed_path"), str):
        check_field_sizes(entry["processed_path"], cap, "processed_path")
        return entry["processed_path"]
    group, _, number = video_id.rpartition("_")
    candidates = [f"video/preprocessed/{group}/{number}.mp4", f"videos/{group}/{number}.mp4"]
    return next((c for c in candidates if (root / c).is_file()), candidates[0])


# ------------------------------------------------------------------------------------------- files


def find_table(root: Path) -> Optional[Path]:
    """The Hub's instruction table (a parquet or JSONL file with a checklist column), if the folder has one."""
    tables = sorted(
        (p for p in root.rglob("*") if p.suffix in TABLE_SUFFIXES and p.is_file() and not p.name.startswith(".")),
        key=lambda p: (len(p.relative_to(root).parts), str(p)),
    )
    return tables[0] if tables else None


def _root_of(dataset: str) -> Path:
    path = Path(dataset).expanduser().absolute()
    if path.is_file() and path.name == "prompt.json":
        return path.parent.parent if path.parent.name == "annotation" else path.parent
    if path.is_dir():
        return path
    raise DatasetError(f"IF-VidCap dataset {dataset!r} not found; use --dataset hf or {_LOCAL_HINT}")


def _download_annotations(data: DataConfig, cfg: IfvidcapConfig) -> Path:
    return hub.snapshot(
        cfg.hf_repo, cfg.hf_revision, data.hf_cache_dir, ["annotation/*.json", "*.parquet", "*.jsonl"],
        what="IF-VidCap", hint=_LOCAL_HINT,
    )


# ------------------------------------------------------------------------------------------- loading


def read_instructions(root: Path, cap: Optional[int]) -> list[Instruction]:
    """Every instruction of the folder, in ``prompt.json`` order, with its checklist; every text at most ``cap``
    characters (``data.max_text_chars``)."""
    prompts = _prompts(root / PROMPT_FILE, cap)
    if (root / CHECKLIST_FILE).is_file():
        source, checklists = root / CHECKLIST_FILE, _checklists_from_json(root / CHECKLIST_FILE)
    else:
        table = find_table(root)
        if table is None:
            raise DatasetError(
                f"{root}: no checklists: expected {CHECKLIST_FILE} or a parquet/JSONL table with a checklist column"
            )
        source, checklists = table, _checklists_from_table(table, prompts)
    out: list[Instruction] = []
    for video_id, video_prompts in prompts.items():
        lists = checklists.get(video_id)
        if lists is None:
            raise DatasetError(f"{source}: no checklists for video {video_id!r} of prompt.json")
        if len(lists) != len(video_prompts):
            raise DatasetError(
                f"{source}: video {video_id!r} has {len(lists)} checklists for {len(video_prompts)} prompts; "
                "they are matched by position, so the counts must agree"
            )
        seen: set[str] = set()
        for k, (prompt, raw) in enumerate(zip(video_prompts, lists)):
            prompt_id = str(prompt["prompt_id"])
            if prompt_id in seen:
                raise DatasetError(f"{root / PROMPT_FILE}: video {video_id!r}: prompt_id {prompt_id!r} used twice")
            seen.add(prompt_id)
            out.append(
                Instruction(
                    video_id=video_id,
                    prompt_id=prompt_id,
                    field=str(prompt.get("field", "")),
                    prompt=prompt["generated_prompt"],
                    constraints_used=[str(c) for c in prompt.get("constraints_used") or []],
                    checklist=parse_checklist(raw, f"{source}: video {video_id!r} checklist {k}", cap),
                )
            )
    return out


def load_ifvidcap(
    data: DataConfig,
    cfg: IfvidcapConfig,
    caption_system: str,
    splits: Optional[Sequence[str]] = None,
    *,
    fetch_videos: bool = True,
) -> IfvidcapDataset:
    """Load IF-VidCap from the Hub (``data.dataset == "hf"``) or a local copy of the repository.

    ``caption_system`` is the captioner's system prompt every sample carries. ``data.limit`` keeps the first
    N instructions (``data.subset_per_action`` N keeps the first N of each field). From the Hub, the selected
    instructions' videos are downloaded unless ``fetch_videos`` is false or ``data.video_root`` is set.
    """
    if splits:
        raise DatasetError(f"IF-VidCap has no splits (got --split {', '.join(splits)}); use --limit to run fewer")
    revision: Optional[str] = None
    if data.dataset == "hf":
        root = _download_annotations(data, cfg)
        revision, source = root.name, f"hf:{cfg.hf_repo}@{root.name}"
    else:
        root = _root_of(data.dataset)
        source = str(root / PROMPT_FILE)
    meta = _read_json_file(root / META_FILE) if (root / META_FILE).is_file() else {}
    if not isinstance(meta, dict):
        raise DatasetError(f"{root / META_FILE}: expected {{video_id: {{processed_path, ...}}}}")
    video_root = Path(data.video_root).expanduser().absolute() if data.video_root else root
    own = hf_storage_folder(root) if data.dataset == "hf" else root
    paths = VideoPaths.under(video_root, own, allow_outside=data.allow_paths_outside_root)
    instructions = read_instructions(root, data.max_text_chars)
    samples = []
    for ins in instructions:
        try:
            ref = VideoRef(path=paths.resolve(_video_path(ins.video_id, meta, video_root, data.max_text_chars)))
        except DatasetError as exc:
            raise DatasetError(f"{root / META_FILE}: video {ins.video_id!r}: {exc}") from None
        samples.append(
            Sample(
                sample_key=sample_key(ins.video_id, ins.prompt_id),
                action=ins.field or "ifvidcap",
                action_name=ins.field,
                action_description="",
                split="test",
                domain=DOMAIN,
                source_dataset="ifvidcap",
                videos=(ref,),
                task=VideoTask(prompt=ins.prompt, system_prompt=caption_system, fps=cfg.fps),
            )
        )
    selected = select_samples(samples, None, data.subset_per_action, data.limit)
    if data.dataset == "hf" and fetch_videos and not data.video_root:
        hub.fetch_missing(
            cfg.hf_repo, root, data.hf_cache_dir, (r.path for s in selected for r in s.videos),
            what="IF-VidCap", benchmark="ifvidcap",
        )
    by_key = {sample_key(i.video_id, i.prompt_id): i for i in instructions}
    logger.info("IF-VidCap: %d instructions from %s", len(selected), source)
    return IfvidcapDataset(
        selected, source, revision, video_root, data_dir=root,
        instructions={s.sample_key: by_key[s.sample_key] for s in selected},
    )

