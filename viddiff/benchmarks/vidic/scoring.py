"""ViDiC-1K scoring: a text-only judge answers every checklist item from the generated description.

One judge call per checklist item (``cfg.vidic.judge``; temperature only
sent when configured, since GPT-5-mini accepts only its default), all items
of all pairs in flight at once (the chat client bounds concurrency), every
valid answer cached, so a re-run makes no calls (unless
``cache.cache_nonzero_temperature`` is false: an unset temperature samples).
An item is correct when the judge's yes/no equals the item's
``correct_answer``. Scores: Avg over all items, Diff over difference items,
Sim over similarity items, and the same per category; all of them also
without the pairs that ViDiC-1K took from VidDiffBench.

Conservative rules, so that failures are never credited:
- a judge answer still invalid after ``eval.max_reasks`` re-asks counts as
  wrong and is listed in ``judge_failures`` (``vidic.answer_reading=as_released``
  reads free text as the released script does instead, :mod:`.reading`);
- a pair without a response counts every item wrong, as released;
- a blank response is not sent to the judge either: every item of that pair
  counts as wrong. This is our rule, not the release's, which judges it
  (``vidic.empty_response=judge``): a method that produced nothing would
  otherwise collect the similarity items, whose correct answer ("no
  difference") is the judge's default.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field
from tqdm.auto import tqdm

from viddiff.backends.chat import ChatModel
from viddiff.backends.messages import system_message, user_message
from viddiff.backends.usage import UsageMeter
from viddiff.config import Config, ModelCallConfig
from viddiff.errors import InvalidAnswerError
from viddiff.eval.runner import run_judged
from viddiff.eval.stats import accuracy
from viddiff.benchmarks.vidic.prompts import PROMPT_VERSION, ChecklistJudgeAnswer, judge_prompt, vidic_templates
from viddiff.benchmarks.vidic.reading import ReleasedAnswer, read_as_released
from viddiff.benchmarks.vidic.responses import Responses, load_responses
from viddiff.benchmarks.vidic.data import (
    CATEGORIES,
    CATEGORY_NAMES,
    ChecklistItem,
    ChecklistKind,
    VidicDataset,
    overlap_with_viddiffbench,
)
from viddiff.schema import Sample, StageUsage
from viddiff.templates import BUILT_IN, TemplateSet


__all__ = [
    "JUDGE_STAGE",
    "CategoryScores",
    "JudgeFailure",
    "VidicMetrics",
    "VidicRecord",
    "VidicStats",
    "VidicSubset",
    "evaluate_vidic",
    "load_responses",
    "score_vidic",
]

JUDGE_STAGE = "vidic_judge"

ItemStatus = Literal["judged", "judge_failed", "no_response"]


class VidicRecord(BaseModel):
    """One checklist item of one pair and the judge's verdict (one row of ``checklist.csv``)."""

    model_config = ConfigDict(extra="forbid")

    index: int
    """Position of the pair in dataset order."""
    sample_key: str
    source_dataset: str
    overlap: bool
    """The pair is one of those ViDiC-1K took from VidDiffBench."""
    key: str
    kind: ChecklistKind
    category: str
    question: str
    correct_answer: Literal["yes", "no"]
    judge_answer: Optional[str]
    """``yes`` or ``no``; ``None`` when the judge was not asked (no response) or never answered validly; under
    ``vidic.answer_reading=as_released``, the answer as the release read it (``" yes "``, ``unsure``, ``error``)."""
    explanation: str
    correct: bool
    status: ItemStatus


class VidicStats(BaseModel):
    """Correct-out-of-total with its exact 95% (Clopper-Pearson) interval; ``None`` for an empty group."""

    model_config = ConfigDict(extra="forbid")

    n: int
    correct: int
    accuracy: Optional[float]
    ci_low: Optional[float]
    ci_high: Optional[float]


class CategoryScores(BaseModel):
    model_config = ConfigDict(extra="forbid")

    category: str
    name: str
    """Display name, e.g. "playback technique"."""
    avg: VidicStats
    diff: VidicStats
    sim: VidicStats


class VidicSubset(BaseModel):
    """Scores over one selection of pairs (all of them, or without the VidDiffBench overlap)."""

    model_config = ConfigDict(extra="forbid")

    n_samples: int
    avg: VidicStats
    """All items."""
    diff: VidicStats
    """Difference items (correct answer "yes")."""
    sim: VidicStats
    """Similarity items (correct answer "no")."""
    by_category: list[CategoryScores]


class JudgeFailure(BaseModel):
    """A checklist item whose judge answer stayed invalid after the re-asks (counted wrong)."""

    model_config = ConfigDict(extra="forbid")

    index: int
    sample_key: str
    key: str
    problem: str


class VidicMetrics(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: Literal["describe"] = "describe"
    benchmark: Literal["vidic"] = "vidic"
    overall: VidicSubset
    without_overlap: VidicSubset
    """The same scores without the pairs taken from VidDiffBench."""
    overlap_samples: list[str]
    n_samples: int
    n_items: int
    empty_responses: list[str]
    """Pairs with a blank or missing response: every item wrong, except blank ones under ``empty_response=judge``."""
    judge_model: str
    prompt_version: str = PROMPT_VERSION
    """The built-in prompts' version, or ``custom`` when any template came from ``vidic.prompt_files``."""
    prompt_sha256: str = ""
    """Hash of the judge template texts used (system, judge)."""
    prompt_sources: dict[str, str] = Field(default_factory=dict)
    judge_failures: list[JudgeFailure] = Field(default_factory=list)
    usage: dict[str, StageUsage] = Field(default_factory=dict)
    records: list[VidicRecord]


def evaluate_vidic(
    dataset: VidicDataset,
    predictions: Union[str, Path, list[Any], dict[str, Any]],
    cfg: Config,
    client: Optional[ChatModel] = None,
) -> VidicMetrics:
    """Validate a response file (or parsed object) and score it; builds a cached client from ``cfg`` if none."""
    responses = load_responses(predictions, dataset, cfg.vidic.empty_response)
    return run_judged(cfg, client, lambda judge: score_vidic(dataset, responses, judge, cfg))


async def score_vidic(dataset: VidicDataset, responses: Responses, client: ChatModel, cfg: Config) -> VidicMetrics:
    """Judge every checklist item of ``dataset`` against its pair's response and aggregate the scores.

    Judge calls go through a client derived from ``client`` (same endpoints and
    cache, ``eval.max_reasks`` re-asks); their usage is also recorded on
    ``client.usage``.
    """
    judge = client.with_max_reasks(cfg.eval.max_reasks)
    overlap = set(overlap_with_viddiffbench(dataset))
    judge_blank = cfg.vidic.empty_response == "judge"
    jobs = [
        (index, sample, item, _to_judge(responses.get(sample.sample_key), judge_blank))
        for index, sample in enumerate(dataset)
        for item in dataset.checklists.get(sample.sample_key, [])
    ]
    bar = tqdm(total=sum(1 for *_, text in jobs if text is not None), desc="judging checklist", unit="item", disable=None)
    templates = vidic_templates(cfg.vidic.prompt_files.model_dump())
    item_judge = _ItemJudge(judge, cfg.vidic.judge, templates, meter=client.usage, bar=bar, reading=cfg.vidic.answer_reading)
    try:
        outcomes = await asyncio.gather(*(item_judge.judge(item, text) for _, _, item, text in jobs))
    finally:
        bar.close()
        await judge.aclose()
    records = [
        _record(index, sample, item, sample.sample_key in overlap, outcome)
        for (index, sample, item, _), outcome in zip(jobs, outcomes)
    ]
    failures = [
        JudgeFailure(index=index, sample_key=sample.sample_key, key=item.key, problem=outcome)
        for (index, sample, item, _), outcome in zip(jobs, outcomes)
        if isinstance(outcome, str)
    ]
    kept = [s for s in dataset if s.sample_key not in overlap]
    categories = _Categories(order=CATEGORIES, names=CATEGORY_NAMES)
    return VidicMetrics(
        overall=categories.subset(len(dataset), records),
        without_overlap=categories.subset(len(kept), [r for r in records if not r.overlap]),
        overlap_samples=[s.sample_key for s in dataset if s.sample_key in overlap],
        n_samples=len(dataset),
        n_items=len(records),
        empty_responses=[s.sample_key for s in dataset if not (responses.get(s.sample_key) or "").strip()],
        judge_model=cfg.vidic.judge.model,
        prompt_version=PROMPT_VERSION if set(templates.sources.values()) == {BUILT_IN} else "custom",
        prompt_sha256=templates.sha256,
        prompt_sources=templates.sources,
        judge_failures=failures,
        usage=judge.usage.by_stage(),
        records=records,
    )


def _to_judge(response: Optional[str], judge_blank: bool) -> Optional[str]:
    """The text the judge is shown, or ``None`` when the pair is not judged (no response; a blank one unless
    ``judge_blank``)."""
    if response is None or not (response.strip() or judge_blank):
        return None
    return response.strip()


Outcome = Union[ChecklistJudgeAnswer, ReleasedAnswer, str, None]
"""The judge's answer (read structured or as released), the problem text of a failed judgement, or ``None``
(not judged)."""


class _ItemJudge:
    """Asks the judge about one checklist item; holds only the shared client, model, templates and progress bar."""

    def __init__(
        self, client: ChatModel, call: ModelCallConfig, templates: TemplateSet, meter: UsageMeter, bar: tqdm,
        reading: str = "structured",
    ) -> None:
        self.client = client
        self.reading = reading
        self.call = call
        self.templates = templates
        self.system = templates["system"].render()
        self.meter = meter
        self.bar = bar

    async def judge(self, item: ChecklistItem, text: Optional[str]) -> Outcome:
        if text is None:
            return None
        prompt = judge_prompt(text, item.question, item.kind, self.templates)
        messages = [system_message(self.system), user_message(prompt)]
        try:
            if self.reading == "as_released":
                reply = await self.client.complete_text(self.call, messages, stage=JUDGE_STAGE, meter=self.meter)
                return read_as_released(reply)
            return await self.client.complete_json(self.call, messages, ChecklistJudgeAnswer, stage=JUDGE_STAGE, meter=self.meter)
        except InvalidAnswerError as exc:
            return f"{exc}; counted wrong"
        finally:
            self.bar.update(1)


def _record(index: int, sample: Sample, item: ChecklistItem, overlap: bool, outcome: Outcome) -> VidicRecord:
    base = dict(
        index=index,
        sample_key=sample.sample_key,
        source_dataset=sample.source_dataset,
        overlap=overlap,
        key=item.key,
        kind=item.kind,
        category=item.category,
        question=item.question,
        correct_answer=item.correct_answer,
    )
    if outcome is None:
        return VidicRecord(**base, judge_answer=None, explanation="", correct=False, status="no_response")
    if isinstance(outcome, str):
        return VidicRecord(**base, judge_answer=None, explanation=outcome, correct=False, status="judge_failed")
    if isinstance(outcome, ReleasedAnswer):
        return VidicRecord(
            **base, judge_answer=outcome.text, explanation=outcome.explanation,
            correct=outcome.matches(item.correct_answer), status="judged",
        )
    return VidicRecord(
        **base,
        judge_answer=outcome.answer,
        explanation=outcome.explanation,
        correct=outcome.answer == item.correct_answer,
        status="judged",
    )


def _stats(records: list[VidicRecord]) -> VidicStats:
    a = accuracy(sum(r.correct for r in records), len(records))
    return VidicStats(n=a.n, correct=a.correct, accuracy=a.accuracy, ci_low=a.ci_low, ci_high=a.ci_high)


def _scores(records: list[VidicRecord]) -> dict[str, VidicStats]:
    return {
        "avg": _stats(records),
        "diff": _stats([r for r in records if r.kind == "difference"]),
        "sim": _stats([r for r in records if r.kind == "similarity"]),
    }


class _Categories:
    """Category order and display names of the benchmark, for the per-category rows."""

    def __init__(self, order: tuple[str, ...], names: dict[str, str]) -> None:
        self.order = order
        self.names = names

    def _rank(self, category: str) -> tuple[int, str]:
        return (self.order.index(category), category) if category in self.order else (len(self.order), category)

    def subset(self, n_samples: int, records: list[VidicRecord]) -> VidicSubset:
        by_category = [
            CategoryScores(category=c, name=self.names.get(c, c), **_scores([r for r in records if r.category == c]))
            for c in sorted({r.category for r in records}, key=self._rank)
        ]
        return VidicSubset(n_samples=n_samples, by_category=by_category, **_scores(records))
