"""VidPair-Halluc loader: the published Hub layout (or a local copy) into one ``qa`` sample per question.

Every question row becomes a :class:`~viddiff.schema.Sample` whose task is the question about its video. Its
``action`` is the entry it is scored in (the pair, see below), ``split`` its question type, and its
:class:`VidPairQuestion` (kept beside the samples) holds what the scorer needs: the expected answer as written,
the aspect, the pair, the video's role in it and the question group.

How rows are linked, since the release's rows do not say (see :mod:`.layout` for field names):

- **pair**: a ``pair_id`` field if the rows have one, else the pair whose ``positive_video`` or
  ``adversarial_video`` is the row's video (``pairs/pairs.json``); a video in no pair is its own entry;
- **entry** (what the release's scorers call an item with an ``id``): one pair and one aspect;
- **question group** (the release's ``binary_qa_pos`` / ``binary_qa_neg`` keys: one question asked of every video
  of the entry): a group field if the rows have one, else the question's text;
- **aspect**: an aspect field, else the story id in the video's folder name (``VidPair-Halluc/action_0002/...``);
- **spatial/temporal**: a ``spatial_temporal`` field, else ``vidpair.temporal_aspects`` / ``spatial_aspects``
  (an assumption: the split is not published).

``--limit N`` keeps the questions of the first N pairs, ``--subset N`` the first N pairs of each aspect.
With ``vidpair.pair_aware`` each sample also holds the other video of its pair.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict

from viddiff.benchmarks.vidpair.layout import (
    ALL_QA_FILE,
    CANDIDATES,
    ID_LIKE_FIELDS,
    LAYOUT_FILE,
    METADATA_FILE,
    PAIRS_FILE,
    QA_FILES,
    QuestionType,
    Role,
    RowRef,
    aspect_from_path,
    canonical_aspect,
    category_of_id,
    choose_field,
    decoded,
    fields_listing,
    read_jsonl,
    repo_relative,
    video_field,
)
from viddiff.benchmarks.vidpair.prompts import task_prompt, with_options
from viddiff.benchmarks.vidpair.answers import read_yes_no
from viddiff.config import VIDPAIR_ASPECTS, Config, VidPairConfig
from viddiff.data.dataset import Dataset
from viddiff.data import hub
from viddiff.data.safety import VideoPaths, check_text_size, hf_storage_folder
from viddiff.errors import DatasetError
from viddiff.schema import Sample, VideoRef, VideoTask

logger = logging.getLogger(__name__)

BENCHMARK = "vidpair-halluc"
DOMAIN = "vidpair-halluc"
"""Every sample's domain (so ``baseline.fps_by_domain`` can hold an entry for it)."""
Dimension = Literal["spatial", "temporal", "unassigned"]
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LETTERED = re.compile(r"^\s*\(?([A-Z])[.):]\s*(.+)$", re.S)
"""An option text that carries its letter: ``A. red``, ``(B) blue``, ``C) green``."""
_CHOICE_LABELS = ("label", "letter", "key", "option", "id")
_CHOICE_TEXTS = ("text", "content", "value", "option_text", "description")
SYNTHETIC_MARKER = "SYNTHETIC.md"
"""Written by ``viddiff data synth`` beside the layout's files: samples of such a copy say ``synthetic``."""
_ROW_PATTERNS = ["qa/hf/*.jsonl", PAIRS_FILE, METADATA_FILE, LAYOUT_FILE]


class VidPairQuestion(BaseModel):
    """One question about one video, as the scorer needs it."""

    model_config = ConfigDict(extra="forbid")

    key: str
    question_type: QuestionType
    question: str
    """The row's question, as written."""
    choices: list[tuple[str, str]] = []
    """Multiple choice: ``(letter, text)`` in order."""
    answer: Optional[str]
    """The expected answer as written (binary ``yes``/``no`` as the row spells it, letters, or a reference text);
    ``None`` only for an open question without a reference."""
    aspect: str
    dimension: Dimension
    dimension_assumed: bool
    """Whether ``dimension`` comes from ``vidpair.temporal_aspects``/``spatial_aspects`` rather than the row."""
    pair_id: Optional[str]
    role: Optional[Role]
    entry: str
    """What the release scores as one item: ``<pair>/<aspect>`` (``video:<path>/<aspect>`` for a video in no pair)."""
    group: str
    """The question group within the entry (one question asked of each video)."""
    video: str
    """The video, relative to the dataset root."""
    where: str
    """``file:line`` of the row."""
    option_map: Any = None
    mask_flags: Any = None
    """Carried from the row, not used: the release does not say what they mean."""


@dataclass(frozen=True)
class PairInfo:
    pair_id: str
    positive: str
    adversarial: str
    """Videos relative to the dataset root."""

    def role_of(self, video: str) -> Optional[Role]:
        return "positive" if video == self.positive else "adversarial" if video == self.adversarial else None

    def partner(self, video: str) -> Optional[str]:
        return self.adversarial if video == self.positive else self.positive if video == self.adversarial else None


@dataclass(frozen=True)
class VidPairDataset(Dataset):
    """The selected questions plus what scoring needs about each, the pairs, and how fields were read."""

    questions: dict[str, VidPairQuestion] = field(default_factory=dict)
    pairs: dict[str, PairInfo] = field(default_factory=dict)
    fields_used: dict[str, dict[str, str]] = field(default_factory=dict)
    """Per question file: role -> the field read for it, or how it was derived."""
    assumptions: list[str] = field(default_factory=list)
    benchmark: str = BENCHMARK


# --------------------------------------------------------------------------- files


def _snapshot(cfg: Config, revision: Optional[str], patterns: list[str]) -> Path:
    return hub.snapshot(
        cfg.vidpair.hf_repo, revision, cfg.data.hf_cache_dir, patterns,
        what="VidPair-Halluc", hint="pass --dataset PATH (a local copy of the repo) instead",
    )


def _rows_by_type(root: Path, types: list[str], type_field: Optional[str]) -> dict[str, list[RowRef]]:
    """The rows of each wanted question type: its own file, else ``all_qa.jsonl`` split by a type field."""
    out: dict[str, list[RowRef]] = {}
    missing = [t for t in types if not (root / QA_FILES[t]).is_file()]
    for t in types:
        if t not in missing:
            out[t] = read_jsonl(root / QA_FILES[t], QA_FILES[t])
    if not missing:
        return out
    if not (root / ALL_QA_FILE).is_file():
        names = ", ".join(QA_FILES[t] for t in missing)
        raise DatasetError(
            f"{root}: no {names} and no {ALL_QA_FILE}; this is not a VidPair-Halluc copy (expected the Hub layout "
            f"of Jethro37/VidPair-Halluc), or drop those types with --set vidpair.question_types=[...]"
        )
    refs = read_jsonl(root / ALL_QA_FILE, ALL_QA_FILE)
    type_field = choose_field("question_type", refs, type_field)
    if type_field is None:
        raise DatasetError(
            f"{ALL_QA_FILE}: needed for {', '.join(missing)} (no per-type file), but its rows say no question type "
            f"(looked for fields {', '.join(CANDIDATES['question_type'])}; fields there: {fields_listing(refs)}); "
            "set vidpair.fields.question_type=NAME"
        )
    for ref in refs:
        kind = _question_type(ref.row[type_field])
        if kind is None:
            raise DatasetError(f"{ref.where}: field {type_field!r}: unknown question type {ref.row[type_field]!r}")
        if kind in missing:
            out.setdefault(kind, []).append(ref)
    return out


def _question_type(value: Any) -> Optional[QuestionType]:
    text = str(value).lower()
    if "binary" in text or "yes" in text or "judge" in text:
        return "binary"
    if "multi" in text or "choice" in text or "mcq" in text:
        return "multiple_choice"
    if "open" in text:
        return "open_ended"
    return None


def read_pairs(root: Path) -> dict[str, PairInfo]:
    """``pairs/pairs.json``: the pair linkage every pair metric needs (a clear error when it is absent or malformed)."""
    path = root / PAIRS_FILE
    if not path.is_file():
        raise DatasetError(
            f"{root}: no {PAIRS_FILE}; VidPair-Halluc's pair metrics need it (a list of "
            "{pair_id, positive_video, adversarial_video})"
        )
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{PAIRS_FILE}: not readable JSON ({exc})") from None
    if not isinstance(raw, list):
        raise DatasetError(f"{PAIRS_FILE}: expected a list of pairs, got {type(raw).__name__}")
    pairs: dict[str, PairInfo] = {}
    seen: dict[str, str] = {}
    for index, item in enumerate(raw):
        where = f"{PAIRS_FILE}[{index}]"
        if not isinstance(item, dict):
            raise DatasetError(f"{where}: expected an object, got {type(item).__name__}")
        missing = [k for k in ("positive_video", "adversarial_video") if not isinstance(item.get(k), str) or not item[k]]
        if missing:
            raise DatasetError(f"{where}: missing {', '.join(missing)} (every pair needs positive_video and adversarial_video)")
        pair_id = str(item.get("pair_id") if item.get("pair_id") not in (None, "") else index)
        if pair_id in pairs:
            raise DatasetError(f"{where}: pair_id {pair_id!r} is used twice")
        info = PairInfo(pair_id, repo_relative(item["positive_video"]), repo_relative(item["adversarial_video"]))
        for video in (info.positive, info.adversarial):
            if video in seen:
                raise DatasetError(f"{where}: video {video} is already in pair {seen[video]!r}; a video belongs to one pair")
            seen[video] = pair_id
        pairs[pair_id] = info
    return pairs


# --------------------------------------------------------------------------- rows -> questions


class _FileFields:
    """The fields one question file is read with, chosen once for all its rows."""

    def __init__(self, kind: str, refs: list[RowRef], vp: VidPairConfig):
        f = vp.fields
        self.kind = kind
        self.answer = choose_field("answer", refs, f.answer)
        self.question_id = choose_field("question_id", refs, f.question_id)
        self.aspect = choose_field("aspect", refs, f.aspect)
        self.pair_id = choose_field("pair_id", refs, f.pair_id)
        self.group = choose_field("question_group", refs, f.question_group)
        self.spatial_temporal = choose_field("spatial_temporal", refs, f.spatial_temporal)
        if self.answer is None and kind != "open_ended" and refs:
            raise DatasetError(
                f"{refs[0].file}: no answer field: looked for {', '.join(CANDIDATES['answer'])} (fields there: "
                f"{fields_listing(refs)}); name it with --set vidpair.fields.answer=NAME (the dataset's {LAYOUT_FILE} "
                "may say which it is)"
            )

    def described(self) -> dict[str, str]:
        def say(name: Optional[str], otherwise: str) -> str:
            return f"field {name!r}" if name else otherwise

        return {
            "answer": say(self.answer, "none (open answers unscored)"),
            "question_id": say(self.question_id, "file and line (no unique id field)"),
            "aspect": say(self.aspect, "the video folder's story id"),
            "pair": say(self.pair_id, f"the video's pair in {PAIRS_FILE}"),
            "question_group": say(self.group, "the question text"),
            "spatial_temporal": say(self.spatial_temporal, "ASSUMED from the aspect (vidpair.temporal_aspects)"),
        }


def _text(ref: RowRef, name: str, cap: Optional[int]) -> str:
    value = ref.row.get(name)
    if not isinstance(value, str) or not value.strip():
        raise DatasetError(f"{ref.where}: field '{name}': expected a non-empty string, got {value!r}")
    try:
        check_text_size(value, cap)
    except DatasetError as exc:
        raise DatasetError(f"{ref.where}: field '{name}': {exc}") from None
    return value.strip()


def _choices(ref: RowRef) -> list[tuple[str, str]]:
    """``choices_json`` decoded into ``(letter, text)``: a list of texts (lettered A, B, ... unless they start
    with ``A.``), a ``{letter: text}`` object, or a list of ``{label, text}`` objects."""
    raw = decoded(ref, "choices_json")
    if raw is None:
        raw = ref.row.get("choices")
    if raw is None:
        return []
    if isinstance(raw, dict):
        return [(str(k).strip().upper(), str(v)) for k, v in raw.items()]
    if isinstance(raw, list):
        out = []
        for i, item in enumerate(raw):
            if isinstance(item, str):
                lettered = _LETTERED.match(item)
                out.append((lettered.group(1), lettered.group(2)) if lettered else (_LETTERS[i], item))
            elif isinstance(item, dict):
                label = next((item[k] for k in _CHOICE_LABELS if item.get(k) not in (None, "")), _LETTERS[i])
                text = next((item[k] for k in _CHOICE_TEXTS if item.get(k) not in (None, "")), None)
                if text is None:
                    raise DatasetError(f"{ref.where}: choices_json[{i}] has no option text ({', '.join(_CHOICE_TEXTS)})")
                out.append((str(label).strip().upper(), str(text)))
            else:
                raise DatasetError(f"{ref.where}: choices_json[{i}]: expected a string or an object, got {item!r}")
        return out
    raise DatasetError(f"{ref.where}: choices_json: expected a list or an object of options, got {raw!r}")


def _answer(ref: RowRef, kind: str, name: Optional[str], cap: Optional[int]) -> Optional[str]:
    if name is None:
        return None
    value = ref.row.get(name)
    if kind == "binary":
        if isinstance(value, bool):  # not seen in the release; read as the words it stands for
            return "yes" if value else "no"
        if not isinstance(value, str) or read_yes_no(value) == "unknown":
            raise DatasetError(f"{ref.where}: field {name!r}: a binary answer must read as yes or no, got {value!r}")
        return value
    if kind == "multiple_choice":
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return "".join(value)
        if not isinstance(value, str) or not value.strip():
            raise DatasetError(f"{ref.where}: field {name!r}: expected option letters such as 'A' or 'AC', got {value!r}")
        return value
    return _text(ref, name, cap)


def _aspect(ref: RowRef, fields: _FileFields, video: str) -> str:
    if fields.aspect:
        aspect = canonical_aspect(ref.row[fields.aspect])
        if aspect is None:
            raise DatasetError(
                f"{ref.where}: field {fields.aspect!r}: unknown aspect {ref.row[fields.aspect]!r}; expected one of "
                f"{', '.join(VIDPAIR_ASPECTS)}"
            )
        return aspect
    aspect = aspect_from_path(video)
    if aspect is None:
        ident = next((ref.row[k] for k in ID_LIKE_FIELDS if isinstance(ref.row.get(k), str)), None)
        aspect = canonical_aspect(category_of_id(ident)) if ident else None
    if aspect is None:
        raise DatasetError(
            f"{ref.where}: cannot tell the question's aspect: no aspect field (looked for "
            f"{', '.join(CANDIDATES['aspect'])}), and neither the video folder ({video}) nor an id field names one of "
            f"{', '.join(VIDPAIR_ASPECTS)}; name the field with --set vidpair.fields.aspect=NAME"
        )
    return aspect


def _dimension(ref: RowRef, fields: _FileFields, aspect: str, vp: VidPairConfig) -> tuple[Dimension, bool]:
    if fields.spatial_temporal:
        value = str(ref.row[fields.spatial_temporal]).lower()
        if "temporal" in value:
            return "temporal", False
        if "spatial" in value:
            return "spatial", False
        raise DatasetError(f"{ref.where}: field {fields.spatial_temporal!r}: expected spatial or temporal, got {value!r}")
    if aspect in vp.temporal_aspects:
        return "temporal", True
    if aspect in vp.spatial_aspects:
        return "spatial", True
    return "unassigned", True


class _Linker:
    """Which pair a row's video belongs to, and its role there."""

    def __init__(self, pairs: dict[str, PairInfo]):
        self.pairs = pairs
        self.by_video = {v: p for p in pairs.values() for v in (p.positive, p.adversarial)}

    def link(self, ref: RowRef, fields: _FileFields, video: str) -> tuple[Optional[str], Optional[Role]]:
        pair = self.by_video.get(video)
        if fields.pair_id:
            named = str(ref.row[fields.pair_id])
            if named not in self.pairs:
                raise DatasetError(f"{ref.where}: field {fields.pair_id!r}: pair {named!r} is not in {PAIRS_FILE}")
            if pair is not None and pair.pair_id != named:
                raise DatasetError(
                    f"{ref.where}: field {fields.pair_id!r} says pair {named!r}, but {video} belongs to pair "
                    f"{pair.pair_id!r} in {PAIRS_FILE}"
                )
            pair = self.pairs[named]
        if pair is None:
            return None, None
        role = pair.role_of(video)
        if role is None:
            raise DatasetError(f"{ref.where}: video {video} is neither video of pair {pair.pair_id!r} in {PAIRS_FILE}")
        return pair.pair_id, role


def parse_questions(
    rows: dict[str, list[RowRef]], pairs: dict[str, PairInfo], vp: VidPairConfig, cap: Optional[int]
) -> tuple[list[VidPairQuestion], dict[str, dict[str, str]]]:
    """Every row as a :class:`VidPairQuestion` (rows of a file share one choice of fields), and those choices."""
    linker = _Linker(pairs)
    questions: list[VidPairQuestion] = []
    used: dict[str, dict[str, str]] = {}
    ids_unique = _unique_ids(rows, vp)
    for kind, refs in rows.items():
        fields = _FileFields(kind, refs, vp)
        if fields.question_id and not ids_unique:
            fields.question_id = None
        if refs:
            used[refs[0].file] = fields.described()
        for ref in refs:
            _, raw_video = video_field(ref)
            video = repo_relative(raw_video)
            aspect = _aspect(ref, fields, video)
            dimension, assumed = _dimension(ref, fields, aspect, vp)
            pair_id, role = linker.link(ref, fields, video)
            question = _text(ref, "question", cap)
            group_value = ref.row[fields.group] if fields.group else " ".join(question.lower().split())
            key = str(ref.row[fields.question_id]).strip() if fields.question_id else f"{kind}:{ref.line}"
            entry = f"{pair_id if pair_id is not None else 'video:' + video}/{aspect}" + ("" if assumed else f"/{dimension}")
            questions.append(
                VidPairQuestion(
                    key=key, question_type=kind, question=question,  # type: ignore[arg-type]
                    choices=_choices(ref) if kind == "multiple_choice" else [],
                    answer=_answer(ref, kind, fields.answer, cap), aspect=aspect, dimension=dimension,
                    dimension_assumed=assumed, pair_id=pair_id, role=role, entry=entry, group=f"{kind}:{group_value}",
                    video=video, where=ref.where, option_map=decoded(ref, "option_map_json"),
                    mask_flags=decoded(ref, "mask_flags_json"),
                )
            )
    return questions, used


def _unique_ids(rows: dict[str, list[RowRef]], vp: VidPairConfig) -> bool:
    """Whether the question-id field (configured or detected) identifies every row: an ``id`` that names the
    story, shared by its questions, is not a question id."""
    seen: set[str] = set()
    for kind, refs in rows.items():
        name = choose_field("question_id", refs, vp.fields.question_id)
        if name is None:
            return False
        for ref in refs:
            value = str(ref.row[name]).strip()
            if value in seen:
                if vp.fields.question_id:
                    raise DatasetError(f"{ref.where}: vidpair.fields.question_id={name!r}: id {value!r} is used by another row")
                logger.info("VidPair-Halluc: field %r repeats (%r), so questions are keyed by file and line", name, value)
                return False
            seen.add(value)
    return True


# --------------------------------------------------------------------------- selection and samples


def select(questions: list[VidPairQuestion], pairs: dict[str, PairInfo], limit: Optional[int], per_aspect: Optional[int]) -> list[VidPairQuestion]:
    """The questions of the first ``limit`` pairs (``pairs.json`` order, then unpaired videos), or of the first
    ``per_aspect`` pairs of each aspect."""
    order = list(dict.fromkeys(_unit(q) for q in questions))
    rank = {p: i for i, p in enumerate(pairs)}
    first = {u: i for i, u in enumerate(order)}
    order.sort(key=lambda u: (rank.get(u, len(rank)), first[u]))
    kept: set[str] = set()
    if per_aspect is not None:
        aspect_of = {}
        for q in questions:
            aspect_of.setdefault(_unit(q), q.aspect)
        counts: dict[str, int] = {}
        for unit in order:
            a = aspect_of[unit]
            if counts.get(a, 0) < per_aspect:
                kept.add(unit)
                counts[a] = counts.get(a, 0) + 1
        order = [u for u in order if u in kept]
    if limit is not None:
        order = order[:limit]
    chosen = set(order)
    return [q for q in questions if _unit(q) in chosen]


def _unit(q: VidPairQuestion) -> str:
    """What selection counts: the question's pair, or its video when it has no pair."""
    return q.pair_id if q.pair_id is not None else f"video:{q.video}"


def to_sample(q: VidPairQuestion, pairs: dict[str, PairInfo], paths: VideoPaths, cfg: Config, source: str) -> Sample:
    """The ``qa`` sample of a question: the question about its video (and, pair-aware, its partner as well)."""
    grid = cfg.baseline.task_frames.layout == "grid"
    partner = pairs[q.pair_id].partner(q.video) if q.pair_id is not None else None
    pair_aware = cfg.vidpair.pair_aware and partner is not None
    videos = [q.video] + ([partner] if pair_aware and partner else [])
    try:
        refs = tuple(VideoRef(path=paths.resolve(v)) for v in videos)
    except DatasetError as exc:
        raise DatasetError(f"{q.where}: {exc}") from None
    prompt = task_prompt(q.question_type, with_options(q.question, q.choices), grid=grid, pair_aware=pair_aware)
    return Sample(
        sample_key=q.key, action=q.entry,
        action_name=f"pair {q.pair_id} ({q.aspect})" if q.pair_id else f"video {q.video} ({q.aspect})",
        action_description="", split=q.question_type, domain=DOMAIN, source_dataset=source,
        videos=refs, task=VideoTask(prompt=prompt, pair_aware=pair_aware),
    )


def load_vidpair(cfg: Config, *, fetch_videos: bool = True) -> VidPairDataset:
    """Load VidPair-Halluc from the Hub (``data.dataset == "hf"``) or a local copy of the repo (a directory).

    Relative video paths resolve against ``data.video_root`` when set, else the dataset's own folder. From the
    Hub, the videos of the selected questions are downloaded unless ``fetch_videos`` is false or
    ``data.video_root`` points elsewhere.
    """
    data, vp = cfg.data, cfg.vidpair
    revision: Optional[str] = None
    if data.dataset == "hf":
        root = _snapshot(cfg, vp.hf_revision, _ROW_PATTERNS)
        revision = root.name
        source_name = f"hf:{vp.hf_repo}@{revision}"
    else:
        root = Path(data.dataset).expanduser().absolute()
        if not root.is_dir():
            raise DatasetError(
                f"VidPair-Halluc dataset {data.dataset!r} is not a directory; pass --dataset hf, or a local copy of the "
                f"repo (holding qa/hf/ and {PAIRS_FILE})"
            )
        source_name = str(root)
    pairs = read_pairs(root)
    rows = _rows_by_type(root, list(dict.fromkeys(vp.question_types)), vp.fields.question_type)
    questions, used = parse_questions(rows, pairs, vp, data.max_text_chars)
    keys = [q.key for q in questions]
    if len(set(keys)) != len(keys):
        raise DatasetError("two question rows have the same id; question ids must be unique (results are stored by id)")
    selected = select(questions, pairs, data.limit, data.subset_per_action)
    video_root = Path(data.video_root).expanduser().absolute() if data.video_root else root
    own = hf_storage_folder(root) if data.dataset == "hf" else root
    paths = VideoPaths.under(video_root, own, allow_outside=data.allow_paths_outside_root)
    synthetic = (root / SYNTHETIC_MARKER).is_file()
    samples = [to_sample(q, pairs, paths, cfg, "synthetic" if synthetic else BENCHMARK) for q in selected]
    if data.dataset == "hf" and fetch_videos and not data.video_root:
        hub.fetch_missing(
            vp.hf_repo, root, data.hf_cache_dir, (r.path for s in samples for r in s.videos),
            what="VidPair-Halluc", benchmark=BENCHMARK,
        )
    assumptions = _assumptions(selected, used, cfg)
    logger.info("VidPair-Halluc: %d questions on %d pairs from %s", len(samples), len({q.entry for q in selected}), source_name)
    return VidPairDataset(
        samples, source_name, revision, video_root, data_dir=root, questions={q.key: q for q in selected},
        pairs=pairs, fields_used=used, assumptions=assumptions,
    )


def _assumptions(questions: list[VidPairQuestion], used: dict[str, dict[str, str]], cfg: Config) -> list[str]:
    notes = []
    if any(q.dimension_assumed for q in questions):
        vp = cfg.vidpair
        notes.append(
            "spatial/temporal split ASSUMED (not published): temporal = " + ", ".join(vp.temporal_aspects)
            + "; spatial = " + ", ".join(vp.spatial_aspects)
        )
    unassigned = sorted({q.aspect for q in questions if q.dimension == "unassigned"})
    if unassigned:
        notes.append(f"aspects in neither list (reported as 'unassigned'): {', '.join(unassigned)}")
    derived = {
        (role, how) for roles in used.values() for role, how in roles.items()
        if not how.startswith("field") and role != "spatial_temporal"
    }
    notes += [f"{role.replace('_', ' ')}: no field in the rows, taken from {how}" for role, how in sorted(derived)]
    unpaired = sorted({q.video for q in questions if q.pair_id is None})
    if unpaired:
        notes.append(f"{len(unpaired)} video(s) in no pair of {PAIRS_FILE}: they form no pair units")
    if cfg.vidpair.pair_aware:
        notes.append("pair-aware answering (beyond the paper): each question's video shown with its pair's other video")
    return notes
