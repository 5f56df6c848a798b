"""VidCapBench scoring: questions answered from the caption alone, answers graded, four rates per dimension.

For each judge run ``r`` (``vidcapbench.judge_runs``; run ``r`` sends seed ``seed + r`` to both models),
every QA pair of every captioned video is answered from the caption by ``vidcapbench.answerer`` and the
answer graded against the reference by ``vidcapbench.grader``: A correct, B partly correct without
contradiction, C not mentioned, D contradiction (read as ``vidcapbench.grade_reading`` says). Per run, over
the graded QAs (overall, and per dimension of :data:`~.data.DIMENSIONS`), as the released scorer computes:

- Accuracy = A / (A+B+C+D); Precision = (A+B) / (A+B+D); Coverage = (A+B+D) / (A+B+C+D); all ×100;
- Conciseness = 100 × Accuracy / mean caption length in tokens (:mod:`.tokens`), the length taken over every
  caption, the same for every dimension.

The reported values are the means over runs, with the standard deviation of the overall Accuracy. A rate
with an empty denominator is ``None`` (the released code divides by zero). A blank caption is not sent to
the models: each of its questions is graded C (not mentioned); ``vidcapbench.empty_caption=judge`` has it
answered and graded like any caption, as released. A video the caption file lacks counts as a blank caption;
``vidcapbench.missing_caption=leave_out`` leaves its questions out of every count and its caption out of the
mean length, as released. A reply that gives no grade (no
digit under ``substring``, or no valid JSON after the re-asks under ``structured``) is left out of the
counts, as released, and listed.
"""

from __future__ import annotations

import asyncio
import statistics
from pathlib import Path
from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field
from tqdm.auto import tqdm

from viddiff.backends.chat import ChatModel
from viddiff.backends.messages import user_message
from viddiff.backends.usage import UsageMeter
from viddiff.benchmarks.vidcapbench.captions import Captions, load_captions
from viddiff.benchmarks.vidcapbench.data import DIMENSIONS, QAPair, VidcapbenchDataset
from viddiff.benchmarks.vidcapbench.prompts import (
    GRADE_OF_SCORE,
    PROMPT_VERSION,
    CaptionGrade,
    Grade,
    read_grade_substring,
    vidcapbench_templates,
)
from viddiff.benchmarks.vidcapbench.tokens import TokenCounter, token_counter
from viddiff.config import Config, ModelCallConfig, VidcapbenchConfig
from viddiff.errors import InvalidAnswerError
from viddiff.eval.runner import run_judged
from viddiff.schema import StageUsage
from viddiff.templates import BUILT_IN, TemplateSet

ANSWER_STAGE = "vidcapbench_answer"
GRADE_STAGE = "vidcapbench_grade"
Status = Literal["graded", "empty_caption", "ungraded"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class QARecord(_Model):
    """One QA pair of one video in one judge run."""

    run: int
    sample_key: str
    index: int
    question: str
    answer: str
    sub_category: str
    dimension: str
    prediction: str = ""
    """The answerer's answer from the caption."""
    grade: Optional[Grade] = None
    reply: str = ""
    """The grader's reply (its analysis under ``structured``, the whole text under ``substring``)."""
    status: Status = "graded"


class Counts(_Model):
    A: int = 0
    B: int = 0
    C: int = 0
    D: int = 0

    @property
    def n(self) -> int:
        return self.A + self.B + self.C + self.D

    def rates(self, mean_tokens: float) -> dict[str, Optional[float]]:
        n, mentioned = self.n, self.A + self.B + self.D
        accuracy = 100 * self.A / n if n else None
        return {
            "accuracy": accuracy,
            "precision": 100 * (self.A + self.B) / mentioned if mentioned else None,
            "coverage": 100 * mentioned / n if n else None,
            "conciseness": 100 * accuracy / mean_tokens if accuracy is not None and mean_tokens > 0 else None,
        }


class Rates(_Model):
    accuracy: Optional[float]
    precision: Optional[float]
    coverage: Optional[float]
    conciseness: Optional[float]


class RunScores(_Model):
    run: int
    overall: Counts
    by_dimension: dict[str, Counts]
    ungraded: int = 0


class DimensionScores(_Model):
    name: str
    """``Overall`` or a dimension of the paper."""
    n_qa: int
    rates: Rates
    """Means over the judge runs."""
    accuracy_std: Optional[float] = None
    """Sample standard deviation of Accuracy over the runs (``None`` with one run)."""


class VidcapbenchMetrics(_Model):
    mode: str = "caption"
    benchmark: str = "vidcapbench"
    overall: DimensionScores
    dimensions: list[DimensionScores]
    runs: list[RunScores]
    n_samples: int
    n_qa: int
    """QA pairs of the scored videos (all of the selection's unless some were left out)."""
    judge_runs: int
    grade_reading: str
    empty_caption: str = "not_mentioned"
    missing_caption: str = "not_mentioned"
    tokenizer: str
    mean_tokens: float
    empty_captions: list[str] = Field(default_factory=list)
    """Scored videos whose caption is blank or missing (answered and graded only under ``empty_caption=judge``)."""
    left_out: list[str] = Field(default_factory=list)
    """Videos without a caption, left out under ``missing_caption=leave_out``."""
    ungraded: list[str] = Field(default_factory=list)
    """``run <r> <video> QA <i>: <why>`` for replies that gave no grade (left out of the counts)."""
    answerer_model: str
    grader_model: str
    prompt_version: str = PROMPT_VERSION
    prompt_sha256: str = ""
    prompt_sources: dict[str, str] = Field(default_factory=dict)
    usage: dict[str, StageUsage] = Field(default_factory=dict)
    records: list[QARecord] = Field(default_factory=list)


def evaluate_vidcapbench(
    dataset: VidcapbenchDataset, predictions: Union[str, Path, list[Any]], cfg: Config, client: Optional[ChatModel] = None
) -> VidcapbenchMetrics:
    captions = load_captions(predictions, dataset, cfg.vidcapbench.missing_caption)
    counter = token_counter(cfg.vidcapbench.tokenizer, cfg.data, cfg.vidcapbench.tokenizer_fallback)
    return run_judged(cfg, client, lambda judge: score_vidcapbench(dataset, captions, judge, cfg, counter))


async def score_vidcapbench(
    dataset: VidcapbenchDataset, captions: Captions, client: ChatModel, cfg: Config, counter: TokenCounter
) -> VidcapbenchMetrics:
    settings = cfg.vidcapbench
    judge = client.with_max_reasks(settings.judge_reasks)
    templates = vidcapbench_templates(settings.prompt_files.model_dump())
    left_out = [s.sample_key for s in dataset if s.sample_key not in captions] if settings.missing_caption == "leave_out" else []
    scored = {s.sample_key: captions.get(s.sample_key, "") for s in dataset if s.sample_key not in left_out}
    jobs = [(run, key, qa) for run in range(settings.judge_runs) for key in scored for qa in dataset.qa.get(key, [])]
    bar = tqdm(total=len(jobs), desc="grading QA pairs", unit="QA", disable=None)
    grader = QAGrader(judge, settings, templates, meter=client.usage, bar=bar)
    try:
        records = await asyncio.gather(*(grader.grade(run, key, qa, scored[key]) for run, key, qa in jobs))
    finally:
        bar.close()
        await judge.aclose()
    mean_tokens = statistics.fmean(counter.count(text) for text in scored.values()) if scored else 0.0
    return summarise(
        list(records), dataset, settings, templates, counter.name, mean_tokens, judge.usage.by_stage(),
        captions=scored, left_out=left_out,
    )


def run_counts(records: list[QARecord], run: int) -> RunScores:
    mine = [r for r in records if r.run == run]
    overall, by_dimension = Counts(), {name: Counts() for name in DIMENSIONS}
    for r in mine:
        if r.grade is None:
            continue
        for counts in (overall, by_dimension[r.dimension]):
            setattr(counts, r.grade, getattr(counts, r.grade) + 1)
    return RunScores(run=run, overall=overall, by_dimension=by_dimension, ungraded=sum(r.grade is None for r in mine))


def _mean(values: list[Optional[float]]) -> Optional[float]:
    present = [v for v in values if v is not None]
    return statistics.fmean(present) if present else None


def aggregate(name: str, counts: list[Counts], mean_tokens: float) -> DimensionScores:
    """Means over runs of each rate, and the spread of Accuracy."""
    per_run = [c.rates(mean_tokens) for c in counts]
    accuracies = [r["accuracy"] for r in per_run if r["accuracy"] is not None]
    return DimensionScores(
        name=name,
        n_qa=max((c.n for c in counts), default=0),
        rates=Rates(**{key: _mean([r[key] for r in per_run]) for key in ("accuracy", "precision", "coverage", "conciseness")}),
        accuracy_std=statistics.stdev(accuracies) if len(accuracies) > 1 else None,
    )


def summarise(
    records: list[QARecord],
    dataset: VidcapbenchDataset,
    settings: VidcapbenchConfig,
    templates: TemplateSet,
    tokenizer: str,
    mean_tokens: float,
    usage: dict[str, StageUsage],
    *,
    captions: Captions,
    left_out: list[str],
) -> VidcapbenchMetrics:
    """The metrics over ``records``, the graded QA pairs of the videos in ``captions`` (the scored ones)."""
    runs = [run_counts(records, run) for run in range(settings.judge_runs)]
    return VidcapbenchMetrics(
        overall=aggregate("Overall", [r.overall for r in runs], mean_tokens),
        dimensions=[aggregate(name, [r.by_dimension[name] for r in runs], mean_tokens) for name in DIMENSIONS],
        runs=runs,
        n_samples=len(dataset),
        n_qa=sum(len(dataset.qa.get(key, [])) for key in captions),
        judge_runs=settings.judge_runs,
        grade_reading=settings.grade_reading,
        empty_caption=settings.empty_caption,
        missing_caption=settings.missing_caption,
        tokenizer=tokenizer,
        mean_tokens=mean_tokens,
        empty_captions=sorted(key for key, text in captions.items() if not text.strip()),
        left_out=left_out,
        ungraded=[f"run {r.run} {r.sample_key} QA {r.index}: {r.reply[:200]}" for r in records if r.status == "ungraded"],
        answerer_model=settings.answerer.model,
        grader_model=settings.grader.model,
        prompt_version=PROMPT_VERSION if set(templates.sources.values()) == {BUILT_IN} else "custom",
        prompt_sha256=templates.sha256,
        prompt_sources=templates.sources,
        usage=usage,
        records=records,
    )


def _seeded(call: ModelCallConfig, run: int) -> ModelCallConfig:
    """Run ``run``'s call: seed ``seed + run`` (no seed sent in run 0 when none is configured, as released)."""
    if call.seed is None and run == 0:
        return call
    return call.model_copy(update={"seed": (call.seed or 0) + run})


class QAGrader:
    """Answers one QA pair from a caption and grades the answer; holds only the shared client and settings."""

    def __init__(
        self, client: ChatModel, settings: VidcapbenchConfig, templates: TemplateSet, *, meter: UsageMeter, bar: Optional[tqdm] = None
    ) -> None:
        self.client = client
        self.settings = settings
        self.templates = templates
        self.meter = meter
        self.bar = bar

    async def grade(self, run: int, key: str, qa: QAPair, caption: str) -> QARecord:
        record = QARecord(
            run=run, sample_key=key, index=qa.index, question=qa.question, answer=qa.answer,
            sub_category=qa.sub_category, dimension=qa.dimension,
        )
        try:
            if not caption.strip() and self.settings.empty_caption == "not_mentioned":
                record.grade, record.status = "C", "empty_caption"
                return record
            answer_prompt = self.templates["answer"].render(caption=caption, question=qa.question)
            record.prediction = await self.client.complete_text(
                _seeded(self.settings.answerer, run), [user_message(answer_prompt)], stage=ANSWER_STAGE, meter=self.meter
            )
            grade_prompt = self.templates["grade"].render(question=qa.question, answer=qa.answer, prediction=record.prediction)
            record.grade, record.reply = await self._read_grade(run, grade_prompt)
            if record.grade is None:
                record.status = "ungraded"
        except InvalidAnswerError as exc:
            record.grade, record.status, record.reply = None, "ungraded", f"no answer: {exc}"
        finally:
            if self.bar is not None:
                self.bar.update(1)
        return record

    async def _read_grade(self, run: int, prompt: str) -> tuple[Optional[Grade], str]:
        call = _seeded(self.settings.grader, run)
        if self.settings.grade_reading == "substring":
            reply = await self.client.complete_text(call, [user_message(prompt)], stage=GRADE_STAGE, meter=self.meter)
            return read_grade_substring(reply), reply
        answer = await self.client.complete_json(call, [user_message(prompt)], CaptionGrade, stage=GRADE_STAGE, meter=self.meter)
        return GRADE_OF_SCORE[answer.score], answer.analysis
