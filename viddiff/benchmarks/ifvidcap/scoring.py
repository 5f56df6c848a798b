"""IF-VidCap scoring: a judge extracts spans and answers questions; deterministic checks decide the rules.

Per instruction, with the response truncated to ``ifvidcap.judge_chars`` characters for the judges (the
released ``response[:2048]``):

- **rule items**: the judge copies out the span(s) the constraint is about; every span must occur verbatim
  in the *full* response, else the judge is shown its last answer and asked again (not for ``count``
  items, whose "spans" are the judge's own ``"(a),(b)"`` listing); re-ask ``k`` carries seed ``seed + k`` so that
  it is a fresh sample, also with the cache on. After ``ifvidcap.span_tries`` attempts
  the item is checked on the last extraction anyway, as released. ``ifvidcap.span_budget`` says whether
  the attempts are counted per item (default) or shared by the instruction's items as the released code
  counts them (then, once spent, later items are not asked and reuse the previous item's spans). The
  check itself is :mod:`.rules`.
- **open-ended groups**: the judge answers each question from the response alone (never the video); an
  answer is right when, read as released, it equals ``correct_answer`` exactly.

A blank response is not judged: all its constraints count as unsatisfied (``ifvidcap.empty_response=judge``
judges it like any text, as released). An instruction the response file does not answer counts as blank
(``ifvidcap.missing_response=leave_out`` leaves its whole video out, as released). A judge that never
answers validly (after ``ifvidcap.judge_reasks`` re-asks) or a check that raises fails its constraint and is
listed; ``ifvidcap.on_judge_failure=drop_video`` leaves such a video out of the metrics instead, as the
released script does. Every judge answer is cached, so re-scoring makes no calls.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Optional, Union

from pydantic import BaseModel, ConfigDict, Field
from tqdm.auto import tqdm

from viddiff.backends.chat import ChatModel
from viddiff.backends.messages import assistant_message, system_message, user_message
from viddiff.backends.usage import UsageMeter
from viddiff.benchmarks.ifvidcap import metrics as ifv_metrics
from viddiff.benchmarks.ifvidcap.data import IfvidcapDataset, Instruction, OpenItem, RuleItem
from viddiff.benchmarks.ifvidcap.metrics import GroupOutcome, IfvidcapScores, InstructionOutcome, OpenOutcome, RuleOutcome
from viddiff.benchmarks.ifvidcap.prompts import (
    PROMPT_VERSION,
    OpenJudgeAnswer,
    SpanAnswer,
    ifvidcap_templates,
    read_choice,
)
from viddiff.benchmarks.ifvidcap.responses import Responses, load_responses
from viddiff.benchmarks.ifvidcap.rules import check_spans
from viddiff.config import Config, IfvidcapConfig
from viddiff.errors import InvalidAnswerError
from viddiff.eval.runner import run_judged
from viddiff.schema import StageUsage
from viddiff.templates import BUILT_IN, TemplateSet

EXTRACT_STAGE = "ifvidcap_extract"
OPEN_STAGE = "ifvidcap_open"


class IfvidcapMetrics(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: str = "caption"
    benchmark: str = "ifvidcap"
    scores: IfvidcapScores
    n_samples: int
    """Instructions in the selection."""
    n_scored: int
    """Instructions in the metrics (all of them unless videos were dropped)."""
    n_videos: int
    dropped_videos: list[str] = Field(default_factory=list)
    """Videos left out under ``on_judge_failure=drop_video``."""
    left_out_videos: list[str] = Field(default_factory=list)
    """Videos left out under ``missing_response=leave_out``: the file does not answer all their instructions."""
    empty_responses: list[str] = Field(default_factory=list)
    """Scored instructions whose response is blank or missing (judged only under ``empty_response=judge``)."""
    item_errors: list[str] = Field(default_factory=list)
    """``<sample key> <check id>: <problem>`` for every constraint that could not be checked."""
    unverified_spans: int = 0
    """Rule items checked on an extraction that was still not verbatim after the attempts."""
    stale_spans: int = 0
    """Rule items scored on a previous item's extraction (``span_budget=per_instruction`` only)."""
    judge_model: str
    settings: dict[str, Any] = Field(default_factory=dict)
    prompt_version: str = PROMPT_VERSION
    prompt_sha256: str = ""
    prompt_sources: dict[str, str] = Field(default_factory=dict)
    usage: dict[str, StageUsage] = Field(default_factory=dict)
    outcomes: list[InstructionOutcome] = Field(default_factory=list)


def evaluate_ifvidcap(
    dataset: IfvidcapDataset,
    predictions: Union[str, Path, dict[str, Any]],
    cfg: Config,
    client: Optional[ChatModel] = None,
) -> IfvidcapMetrics:
    """Validate a response file (or the parsed object) and score it; builds a cached client from ``cfg`` if none."""
    responses = load_responses(predictions, dataset, cfg.ifvidcap.missing_response)
    return run_judged(cfg, client, lambda judge: score_ifvidcap(dataset, responses, judge, cfg))


async def score_ifvidcap(dataset: IfvidcapDataset, responses: Responses, client: ChatModel, cfg: Config) -> IfvidcapMetrics:
    settings = cfg.ifvidcap
    judge = client.with_max_reasks(settings.judge_reasks)
    templates = ifvidcap_templates(settings.prompt_files.model_dump())
    left_out = unanswered_videos(dataset, responses) if settings.missing_response == "leave_out" else []
    texts = {
        s.sample_key: responses.get(s.sample_key, "")
        for s in dataset
        if dataset.instructions[s.sample_key].video_id not in left_out
    }
    n_calls = sum(
        len(i.checklist.rules) + sum(len(g.check_items) for g in i.checklist.groups)
        for i, text in ((dataset.instructions[key], text) for key, text in texts.items())
        if judged(text, settings)
    )
    bar = tqdm(total=n_calls, desc="checking constraints", unit="item", disable=None)
    checker = InstructionChecker(judge, settings, templates, meter=client.usage, bar=bar)
    try:
        outcomes = await asyncio.gather(*(checker.check(key, dataset.instructions[key], text) for key, text in texts.items()))
    finally:
        bar.close()
        await judge.aclose()
    return summarise(list(outcomes), dataset, settings, templates, judge.usage.by_stage(), texts=texts, left_out=left_out)


def judged(response: str, settings: IfvidcapConfig) -> bool:
    """Whether a response goes to the judges: any non-blank one, and a blank one under ``empty_response=judge``."""
    return bool(response.strip()) or settings.empty_response == "judge"


def unanswered_videos(dataset: IfvidcapDataset, responses: Responses) -> list[str]:
    """Videos with an instruction the file does not answer (the released script would not score them)."""
    return sorted({dataset.instructions[s.sample_key].video_id for s in dataset if s.sample_key not in responses})


def summarise(
    outcomes: list[InstructionOutcome],
    dataset: IfvidcapDataset,
    settings: IfvidcapConfig,
    templates: TemplateSet,
    usage: dict[str, StageUsage],
    *,
    texts: dict[str, str],
    left_out: list[str],
) -> IfvidcapMetrics:
    """The metrics over ``outcomes`` (the checked instructions; ``texts`` their responses)."""
    errors = [f"{o.sample_key} {e}" for o in outcomes for e in o.errors]
    dropped: list[str] = []
    if settings.on_judge_failure == "drop_video":
        dropped = sorted({o.video_id for o in outcomes if o.errors})
    scored = [o for o in outcomes if o.video_id not in dropped]
    rules = [r for o in outcomes for r in o.rules]
    return IfvidcapMetrics(
        scores=ifv_metrics.score(scored),
        n_samples=len(dataset),
        n_scored=len(scored),
        n_videos=len({i.video_id for i in dataset.instructions.values()}),
        dropped_videos=dropped,
        left_out_videos=left_out,
        empty_responses=[key for key, text in texts.items() if not text.strip()],
        item_errors=errors,
        unverified_spans=sum(1 for r in rules if r.verbatim is False and not r.error),
        stale_spans=sum(1 for r in rules if r.stale),
        judge_model=settings.judge.model,
        settings={
            "judge_chars": settings.judge_chars,
            "span_tries": settings.span_tries,
            "span_budget": settings.span_budget,
            "judge_reasks": settings.judge_reasks,
            "on_judge_failure": settings.on_judge_failure,
            "empty_response": settings.empty_response,
            "missing_response": settings.missing_response,
        },
        prompt_version=PROMPT_VERSION if set(templates.sources.values()) == {BUILT_IN} else "custom",
        prompt_sha256=templates.sha256,
        prompt_sources=templates.sources,
        usage=usage,
        outcomes=outcomes,
    )


class InstructionChecker:
    """Checks one instruction's constraints against its response; holds only the shared client and settings."""

    def __init__(
        self, client: ChatModel, settings: IfvidcapConfig, templates: TemplateSet, *, meter: UsageMeter, bar: Optional[tqdm] = None
    ) -> None:
        self.client = client
        self.settings = settings
        self.extract_system = templates["extract_system"].render()
        self.extract_retry = templates["extract_retry"].render()
        self.open_system = templates["open_system"].render()
        self.meter = meter
        self.bar = bar

    async def check(self, key: str, ins: Instruction, response: str) -> InstructionOutcome:
        base = dict(sample_key=key, video_id=ins.video_id, prompt_id=ins.prompt_id, field=ins.field)
        if not judged(response, self.settings):
            return InstructionOutcome(
                **base,
                status="no_response",
                rules=[RuleOutcome(check_id=r.check_id, constraint_id=r.constraint_id, description=r.check_description) for r in ins.checklist.rules],
                groups=[
                    GroupOutcome(index=k, check_content=g.check_content, items=[_open_outcome(i) for i in g.check_items])
                    for k, g in enumerate(ins.checklist.groups)
                ],
            )
        shown = response[: self.settings.judge_chars]
        items = ins.checklist.rules
        if self.settings.span_budget == "per_instruction":
            rule_task = self._rules(items, response, shown)
        else:
            rule_task = _concat(asyncio.gather(*(self._rules([item], response, shown) for item in items)))
        group_tasks = [self._group(k, g.check_content, g.check_items, ins.prompt, shown) for k, g in enumerate(ins.checklist.groups)]
        rules, *groups = await asyncio.gather(rule_task, *group_tasks)
        return InstructionOutcome(**base, rules=rules, groups=groups)

    # ------------------------------------------------------------------ rule items

    async def _rules(self, items: list[RuleItem], response: str, shown: str) -> list[RuleOutcome]:
        """Extract and check ``items`` in order, with one attempt budget for all of them (see the module doc)."""
        tries, failures = self.settings.span_tries, 0
        last: list[str] = []
        out = []
        for item in items:
            calls, retry, error = 0, None, None
            spans = last
            try:
                while failures < tries:
                    spans = await self._extract(item, shown, retry, attempt=calls)
                    calls += 1
                    if item.constraint_id == "count" or all(s in response for s in spans):
                        break
                    retry, failures = spans, failures + 1
            except InvalidAnswerError as exc:
                error = f"the extractor gave no valid answer: {exc}"
            finally:
                self._tick()
            last = spans if error is None else last
            out.append(self._checked(item, spans, response, calls, error))
        return out

    def _checked(self, item: RuleItem, spans: list[str], response: str, calls: int, error: Optional[str]) -> RuleOutcome:
        outcome = RuleOutcome(
            check_id=item.check_id, constraint_id=item.constraint_id, description=item.check_description, calls=calls
        )
        if error is not None:
            outcome.error = error
            return outcome
        outcome.spans = spans
        outcome.stale = calls == 0
        outcome.verbatim = None if item.constraint_id == "count" else all(s in response for s in spans)
        try:
            outcome.passed = check_spans(item.constraint_id, spans, item.parameters)
        except Exception as exc:  # the released checker fails the video on any exception; here the item fails
            outcome.error = f"the {item.constraint_id} check raised {type(exc).__name__}: {exc}"
        return outcome

    async def _extract(self, item: RuleItem, shown: str, retry: Optional[list[str]], attempt: int) -> list[str]:
        """One extraction; a re-ask shows only the last failed answer (as released). Attempt ``k`` > 0 is sent
        with seed ``seed + k``: a fresh sample, and a request of its own in the cache (two re-asks with the
        same failed answer would otherwise be one cached request, answered the same way forever)."""
        request = json.dumps({"response": shown, "checkitem": item.as_published()}, ensure_ascii=False)
        messages = [system_message(self.extract_system), user_message(request)]
        if retry is not None:
            messages += [assistant_message(json.dumps(retry, ensure_ascii=False)), user_message(self.extract_retry)]
        call = self.settings.judge
        if attempt:
            call = call.model_copy(update={"seed": (call.seed or 0) + attempt})
        answer = await self.client.complete_json(call, messages, SpanAnswer, stage=EXTRACT_STAGE, meter=self.meter)
        return answer.content

    # ------------------------------------------------------------------ open-ended groups

    async def _group(self, index: int, content: str, items: list[OpenItem], prompt: str, shown: str) -> GroupOutcome:
        answered = await asyncio.gather(*(self._open(item, prompt, shown) for item in items))
        return GroupOutcome(index=index, check_content=content, items=list(answered))

    async def _open(self, item: OpenItem, prompt: str, shown: str) -> OpenOutcome:
        request = json.dumps(
            {"prompt": prompt, "response": shown, "question": item.question, "options": item.options}, ensure_ascii=False
        )
        messages = [system_message(self.open_system), user_message(request)]
        outcome = _open_outcome(item)
        try:
            answer = await self.client.complete_json(
                self.settings.judge, messages, OpenJudgeAnswer, stage=OPEN_STAGE, meter=self.meter
            )
        except InvalidAnswerError as exc:
            outcome.error = f"the judge gave no valid answer: {exc}"
            return outcome
        finally:
            self._tick()
        outcome.answer = read_choice(answer.answer)
        outcome.explanation = answer.result_explanation
        outcome.passed = outcome.answer == item.correct_answer
        return outcome

    def _tick(self) -> None:
        if self.bar is not None:
            self.bar.update(1)


def _open_outcome(item: OpenItem) -> OpenOutcome:
    return OpenOutcome(
        check_id=item.check_id, check_type=item.check_type, question=item.question, options=item.options,
        correct_answer=item.correct_answer,
    )


async def _concat(lists: "asyncio.Future[list[list[RuleOutcome]]]") -> list[RuleOutcome]:
    return [outcome for chunk in await lists for outcome in chunk]
