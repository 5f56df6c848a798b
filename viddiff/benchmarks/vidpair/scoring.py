"""VidPair-Halluc scores: the release's binary and multiple-choice numbers, our own extras, one record per question.

Published numbers (fractions here; reports show x100), overall, per aspect and per spatial/temporal group:
binary question-pair, video-pair and weighted accuracy, FP rate and yes-percentage difference (:mod:`.binary`,
``vidpair.binary_scorer`` chooses the released scorer), multiple-choice "F1" = exact-match accuracy and pair
accuracy (:mod:`.mcq`). Counted beside them: invalid answers and questions without an answer (left out, as the
release leaves them out), skipped entries with the reason, and fragile readings (a yes/no decided by a word
such as "not" or "eyes"; a multiple-choice answer wrong by form alone).

Ours, reported apart and labelled so: the open-ended score (:mod:`.judge`), per-question accuracy with every
missing or invalid answer counted wrong, and the pair consistency numbers (:mod:`.consistency`).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field

from viddiff.backends.chat import ChatModel
from viddiff.benchmarks.vidpair.answers import fragile_trigger, lenient_letters, read_letters, read_yes_no
from viddiff.benchmarks.vidpair.binary import BinaryCounts, BinaryItem, BinaryScores, ItemOutcome, binary_scores, score_entries
from viddiff.benchmarks.vidpair.consistency import PairConsistency, PairedAnswer, pair_consistency
from viddiff.eval.stats import Rate, proportion
from viddiff.benchmarks.vidpair.data import VidPairDataset, VidPairQuestion
from viddiff.benchmarks.vidpair.judge import JUDGE_STAGE, DescriptionScoreAnswer, judge_open
from viddiff.benchmarks.vidpair.mcq import ChoiceItem, MCQCounts, MCQScores, mcq_scores, score_choice_entries
from viddiff.benchmarks.vidpair.prompts import PROMPT_VERSION
from viddiff.benchmarks.vidpair.responses import Responses, load_responses
from viddiff.config import Config
from viddiff.eval.runner import run_judged
from viddiff.schema import StageUsage

RecordStatus = Literal[
    "scored", "invalid", "no_response", "entry_skipped", "judged", "judge_failed", "no_reference", "not_judged"
]
FRAGILE_EXAMPLES = 10


class VidPairRecord(BaseModel):
    """One question on one video and what became of its answer (one row of ``questions.csv``)."""

    model_config = ConfigDict(extra="forbid")

    index: int
    sample_key: str
    question_type: str
    pair_id: Optional[str]
    role: Optional[str]
    video: str
    aspect: str
    dimension: str
    question: str
    expected: Optional[str]
    response: Optional[str]
    reading: Optional[str]
    """The release's reading (yes/no/unknown; letters), or our judge's score out of 10 for open questions."""
    status: RecordStatus
    correct: Optional[bool]
    fragile: Optional[str] = None
    """The word that decided a fragile yes/no reading, or ``form`` for a multiple-choice answer wrong by form only."""
    note: str = ""


class OpenScores(BaseModel):
    """Ours: mean judge score (0-1) over open questions with a reference; a missing answer scores 0."""

    model_config = ConfigDict(extra="forbid")

    n: int
    mean: Optional[float]
    no_answer: int
    judge_failed: int


class GroupScores(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    binary: Optional[BinaryScores] = None
    mcq: Optional[MCQScores] = None
    open: Optional[OpenScores] = None
    """Ours (never the paper's "Open Desc.")."""


class SkippedEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    entry: str
    question_type: str
    reason: str


class FragileReadings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    yes_no: int
    """Yes/no answers read as yes or no by a word that is not yes or no ("not", "know", "eyes", "none", ...)."""
    by_word: dict[str, int]
    examples: list[str]
    mcq_form_only: int
    """Multiple-choice answers wrong only by form ("A, C" for "AC", "Answer: B")."""


class VidPairMetrics(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: Literal["qa"] = "qa"
    benchmark: Literal["vidpair-halluc"] = "vidpair-halluc"
    binary_scorer: str
    unanswered_question: str = "skip_entry"
    """``videoqa``: whether an entry with a question answered on no video is skipped or scored (an assumption)."""
    pair_aware: bool
    n_samples: int
    n_questions: dict[str, int]
    overall: GroupScores
    by_aspect: list[GroupScores]
    by_dimension: list[GroupScores]
    dimension_assumed: bool
    """The spatial/temporal split came from ``vidpair.temporal_aspects`` (an assumption), not from the rows."""
    invalid_answers: dict[str, int]
    """Answers the chosen scorer cannot read (left out of its metrics), by question type."""
    no_response: dict[str, int]
    """Questions without an answer (failed samples, or absent from the file), by question type."""
    skipped_entries: list[SkippedEntry]
    fragile: FragileReadings
    strict_accuracy: dict[str, Rate]
    """Ours: share of questions answered right, every missing, invalid or skipped answer counted wrong."""
    consistency: PairConsistency
    """Ours: the audit's consistency and bias numbers on the pairs (binary questions)."""
    judge_model: Optional[str]
    prompt_version: str = PROMPT_VERSION
    judge_failures: list[str] = Field(default_factory=list)
    assumptions: list[str]
    fields_used: dict[str, dict[str, str]]
    usage: dict[str, StageUsage] = Field(default_factory=dict)
    records: list[VidPairRecord]


def evaluate_vidpair(
    dataset: VidPairDataset, predictions: Union[str, Path, list[Any], dict[str, Any]], cfg: Config, client: Optional[ChatModel] = None
) -> VidPairMetrics:
    """Validate ``predictions`` and score them; the open-ended judge runs only when there is something to judge."""
    responses = load_responses(predictions, dataset)
    open_items = _open_jobs(dataset, responses) if cfg.vidpair.judge_open else []
    if any(answer and answer.strip() for *_, answer in open_items):
        async def judged(judge: ChatModel) -> VidPairMetrics:
            outcomes = await judge_open(judge, cfg.vidpair.judge, [item[1:] for item in open_items], cfg.eval.max_reasks)
            return score_vidpair(dataset, responses, cfg, dict(zip((k for k, *_ in open_items), outcomes)), judge.usage.by_stage())

        return run_judged(cfg, client, judged)
    return score_vidpair(dataset, responses, cfg, {key: None for key, *_ in open_items}, {})


def _open_jobs(dataset: VidPairDataset, responses: Responses) -> list[tuple[str, str, str, Optional[str]]]:
    return [
        (s.sample_key, q.question, q.answer, responses.get(s.sample_key))
        for s in dataset
        if (q := dataset.questions[s.sample_key]).question_type == "open_ended" and q.answer is not None
    ]


def score_vidpair(
    dataset: VidPairDataset,
    responses: Responses,
    cfg: Config,
    judged: dict[str, Union[DescriptionScoreAnswer, str, None]],
    usage: dict[str, StageUsage],
) -> VidPairMetrics:
    """All numbers from the answers (and the open judge's grades, by question key). Pure apart from its inputs."""
    scorer = cfg.vidpair.binary_scorer
    questions = [dataset.questions[s.sample_key] for s in dataset]
    by_type: dict[str, list[VidPairQuestion]] = {t: [q for q in questions if q.question_type == t] for t in ("binary", "multiple_choice", "open_ended")}
    binary_results = score_entries(
        [_binary_item(q, responses) for q in by_type["binary"]], scorer, cfg.vidpair.unanswered_question  # type: ignore[arg-type]
    )
    choice_results = score_choice_entries([_choice_item(q, responses) for q in by_type["multiple_choice"]])
    outcomes: dict[str, ItemOutcome] = {}
    for result in binary_results.values():
        outcomes.update(result.outcomes)
    for _, item_outcomes in choice_results.values():
        outcomes.update(item_outcomes)
    records = [_record(i, dataset.questions[s.sample_key], responses.get(s.sample_key), outcomes, judged) for i, s in enumerate(dataset)]
    entry_of = {q.entry: q for q in questions}

    def group(name: str, keep) -> GroupScores:
        entries = {e for e, q in entry_of.items() if keep(q)}
        b = [r.counts for e, r in binary_results.items() if e in entries]
        m = [c for e, (c, _) in choice_results.items() if e in entries]
        opened = [r for r in records if r.question_type == "open_ended" and keep(dataset.questions[r.sample_key])]
        return GroupScores(
            name=name,
            binary=binary_scores(sum(b, BinaryCounts()), overall=name == "overall") if b else None,
            mcq=mcq_scores(sum(m, MCQCounts())) if m else None,
            open=_open_scores(opened) if any(r.status not in ("not_judged", "no_reference") for r in opened) else None,
        )

    aspects = list(dict.fromkeys(q.aspect for q in questions))
    dimensions = [d for d in ("spatial", "temporal", "unassigned") if any(q.dimension == d for q in questions)]
    failures = [f"{key}: {o}" for key, o in judged.items() if isinstance(o, str)]
    return VidPairMetrics(
        binary_scorer=scorer,
        unanswered_question=cfg.vidpair.unanswered_question,
        pair_aware=cfg.vidpair.pair_aware,
        n_samples=len(dataset),
        n_questions={t: len(qs) for t, qs in by_type.items() if qs},
        overall=group("overall", lambda q: True),
        by_aspect=[group(a, lambda q, a=a: q.aspect == a) for a in aspects],
        by_dimension=[group(d, lambda q, d=d: q.dimension == d) for d in dimensions],
        dimension_assumed=any(q.dimension_assumed for q in questions),
        invalid_answers={t: sum(r.status == "invalid" for r in records if r.question_type == t) for t in by_type if by_type[t]},
        no_response={t: sum(r.response is None for r in records if r.question_type == t) for t in by_type if by_type[t]},
        skipped_entries=[
            *(SkippedEntry(entry=e, question_type="binary", reason=r.skip_reason) for e, r in binary_results.items() if r.skip_reason),
            *(
                SkippedEntry(entry=e, question_type="multiple_choice", reason="no answer to any of its questions")
                for e, (c, _) in choice_results.items()
                if c.skipped_entries
            ),
        ],
        fragile=_fragile(records, sum((c for c, _ in choice_results.values()), MCQCounts())),
        strict_accuracy={
            t: proportion(sum(r.correct is True for r in records if r.question_type == t), len(by_type[t]))
            for t in ("binary", "multiple_choice")
            if by_type[t]
        },
        consistency=pair_consistency(_paired(by_type["binary"], responses)),
        judge_model=cfg.vidpair.judge.model if any(o is not None for o in judged.values()) else None,
        judge_failures=failures,
        assumptions=dataset.assumptions,
        fields_used=dataset.fields_used,
        usage={k: v for k, v in usage.items() if k == JUDGE_STAGE},
        records=records,
    )


def _binary_item(q: VidPairQuestion, responses: Responses) -> BinaryItem:
    return BinaryItem(key=q.key, entry=q.entry, group=q.group, video=q.video, expected=q.answer or "", response=responses.get(q.key))


def _choice_item(q: VidPairQuestion, responses: Responses) -> ChoiceItem:
    return ChoiceItem(
        key=q.key, entry=q.entry, group=q.group, role=q.role, expected=q.answer or "", response=responses.get(q.key),
        letters=tuple(letter for letter, _ in q.choices),
    )


def _record(
    index: int, q: VidPairQuestion, response: Optional[str], outcomes: dict[str, ItemOutcome], judged: dict[str, Any]
) -> VidPairRecord:
    base = dict(
        index=index, sample_key=q.key, question_type=q.question_type, pair_id=q.pair_id, role=q.role, video=q.video,
        aspect=q.aspect, dimension=q.dimension, question=q.question, expected=q.answer, response=response,
    )
    if q.question_type == "open_ended":
        if q.answer is None:
            return VidPairRecord(**base, reading=None, status="no_reference", correct=None, note="no reference answer: not scored")
        if q.key not in judged:
            return VidPairRecord(**base, reading=None, status="not_judged", correct=None, note="vidpair.judge_open=false")
        outcome = judged[q.key]
        if isinstance(outcome, DescriptionScoreAnswer):
            return VidPairRecord(**base, reading=f"{outcome.score}/10", status="judged", correct=None, note=outcome.explanation)
        if isinstance(outcome, str):
            return VidPairRecord(**base, reading=None, status="judge_failed", correct=None, note=outcome)
        return VidPairRecord(**base, reading="0/10", status="no_response", correct=None, note="no answer: scores 0")
    o = outcomes[q.key]
    fragile = None
    if q.question_type == "binary":
        fragile = fragile_trigger(response) if o.status in ("scored", "entry_skipped") else None
    elif o.status == "scored" and not o.correct:
        if response and lenient_letters(response, [c for c, _ in q.choices]) == read_letters(q.answer):
            fragile = "form"
    return VidPairRecord(
        **base, reading=o.reading, status=o.status, correct=o.correct, fragile=fragile,
        note=f"entry skipped: {o.skip_reason}" if o.skip_reason else "",
    )


def _open_scores(records: list[VidPairRecord]) -> OpenScores:
    referenced = [r for r in records if r.status != "no_reference"]
    graded = [int(r.reading.split("/")[0]) for r in referenced if r.reading]
    return OpenScores(
        n=len(graded),
        mean=sum(graded) / (10 * len(graded)) if graded else None,
        no_answer=sum(r.response is None or not r.response.strip() for r in referenced),
        judge_failed=sum(r.status == "judge_failed" for r in referenced),
    )


def _fragile(records: list[VidPairRecord], mcq: MCQCounts) -> FragileReadings:
    words = Counter(r.fragile for r in records if r.question_type == "binary" and r.fragile)
    examples = [r.response for r in records if r.question_type == "binary" and r.fragile and r.response]
    return FragileReadings(
        yes_no=sum(words.values()), by_word=dict(words.most_common()), examples=list(dict.fromkeys(examples))[:FRAGILE_EXAMPLES],
        mcq_form_only=mcq.form_only_misses,
    )


def _paired(binary: list[VidPairQuestion], responses: Responses) -> list[PairedAnswer]:
    """Each binary question asked of both videos of a pair, with both answers (the release's reading)."""
    by_group: dict[tuple[str, str], dict[str, VidPairQuestion]] = {}
    for q in binary:
        if q.pair_id is not None and q.role is not None:
            by_group.setdefault((q.entry, q.group), {})[q.role] = q
    out = []
    for roles in by_group.values():
        if len(roles) < 2:
            continue
        pos, adv = roles["positive"], roles["adversarial"]
        out.append(
            PairedAnswer(
                pair_id=pos.pair_id or "", aspect=pos.aspect, question=pos.question,
                truth_positive=read_yes_no(pos.answer), truth_adversarial=read_yes_no(adv.answer),  # type: ignore[arg-type]
                answer_positive=_yes_no(responses.get(pos.key)), answer_adversarial=_yes_no(responses.get(adv.key)),
            )
        )
    return out


def _yes_no(response: Optional[str]) -> Optional[Literal["yes", "no"]]:
    reading = read_yes_no(response) if response is not None else "unknown"
    return None if reading == "unknown" else reading  # type: ignore[return-value]
