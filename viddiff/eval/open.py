"""Open-mode scoring: LLM-judged matching, opposite check, recall@N_diff.

Per sample: enforce ``N_diff``; one judge call matches every labelled
ground-truth difference (``a``/``b``/``c``) to at most one predicted
difference; every matched pair then goes through the opposite check in
batches of ``flip_batch_size`` (``1`` flips the predicted letter). A
ground-truth ``a``/``b`` difference is *found* when it is matched and its
final letter equals the ground truth.

Conservative rules where the judge cannot be trusted:
- a matching entry still invalid after the re-asks leaves that ground-truth
  key unmatched (recorded in ``judge_issues``);
- a flip batch still invalid after the re-asks leaves its pairs
  ``flip_unverified``: they count as NOT found (an unverified letter is never
  credited), and are reported separately from wrong letters.

Flip batches are formed per sample, not across samples as in the reference
code, so a sample's result (and its cache entries) does not depend on which
other samples are evaluated with it.

Re-asks are bounded by ``eval.max_reasks``: the judge calls go through a
client derived from the caller's one (same endpoints and cache, that re-ask
bound), whose usage is also recorded on the caller's meter.
"""

from __future__ import annotations

import asyncio
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from viddiff.backends.chat import ChatModel
from viddiff.backends.messages import system_message, user_message
from viddiff.backends.usage import UsageMeter
from viddiff.config import EvalConfig
from viddiff.errors import InvalidAnswerError, PredictionFormatError, bulleted
from viddiff.eval.groups import ActionRow, DifferenceRow, RecordBase, by_action, by_difference, by_split, key_order
from viddiff.eval.matching import MatchCheck, check_matching, flip_problem, parse_match_answer
from viddiff.eval.prompts import (
    PROMPT_VERSION,
    FlipAnswer,
    MatchAnswer,
    flip_answer,
    flip_prompt,
    judge_templates,
    match_answer,
    match_prompt,
)
from viddiff.eval.stats import mean_of, rate
from viddiff.schema import Sample, StageUsage
from viddiff.templates import BUILT_IN, TemplateSet
from viddiff.console import count_of

MATCH_STAGE = "eval_match"
FLIP_STAGE = "eval_flip"
_SWAP = {"a": "b", "b": "a"}

Outcome = Literal["found", "wrong_letter", "not_matched", "flip_unverified", "not_counted"]


class OpenRecord(RecordBase):
    """One labelled ground-truth difference of one sample and how the judge resolved it."""

    gt: str
    counted: bool
    """Ground truth is ``a`` or ``b``."""
    pred_key: Optional[str] = None
    pred_description: Optional[str] = None
    pred_letter: Optional[str] = None
    flipped: Optional[bool] = None
    """``None`` when unmatched or when the opposite check failed."""
    final_letter: Optional[str] = None
    outcome: Outcome
    correct: bool
    note: str = ""


class OpenStats(BaseModel):
    """Outcome counts over ground-truth ``a``/``b`` differences; the four outcomes sum to ``n``."""

    model_config = ConfigDict(extra="forbid")

    n: int
    found: int
    wrong_letter: int
    not_matched: int
    flip_unverified: int
    recall: Optional[float]
    matched_rate: Optional[float]
    wrong_letter_rate: Optional[float]
    not_matched_rate: Optional[float]
    flip_unverified_rate: Optional[float]


class JudgeIssue(BaseModel):
    """Judge output that stayed invalid after the re-asks, and what was done about it."""

    model_config = ConfigDict(extra="forbid")

    index: int
    sample_key: str
    stage: Literal["match", "flip"]
    gt_keys: list[str]
    """Ground-truth keys affected (left unmatched, or flip unverified)."""
    problem: str


class Truncation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    index: int
    sample_key: str
    allowed: int
    given: int
    dropped_keys: list[str]


class OpenMetrics(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: Literal["open"] = "open"
    splits: dict[str, OpenStats]
    avg: Optional[float]
    """Unweighted mean of the per-split recalls."""
    overall: OpenStats
    by_action: list[ActionRow[OpenStats]]
    by_difference: list[DifferenceRow[OpenStats]]
    n_samples: int
    n_differences: int
    """Labelled ground-truth differences (``a``/``b``/``c``)."""
    n_predictions: int
    unmatched_predictions: int
    """Predicted differences that no ground truth was matched to."""
    judge_model: str
    flip_model: str
    prompt_version: str = PROMPT_VERSION
    """The built-in prompts' version, or ``custom`` when any template came from ``eval.prompt_files``."""
    prompt_sha256: str = ""
    """Hash of the judge template texts used (system, match, flip)."""
    prompt_sources: dict[str, str] = Field(default_factory=dict)
    """Per template: ``built-in`` or the file it was read from."""
    judge_issues: list[JudgeIssue] = Field(default_factory=list)
    truncations: list[Truncation] = Field(default_factory=list)
    usage: dict[str, StageUsage] = Field(default_factory=dict)
    records: list[OpenRecord]


def enforce_n_diff(
    samples: list[Sample], predictions: list[dict], policy: Literal["error", "truncate"]
) -> tuple[list[dict], list[Truncation]]:
    """Apply ``N_diff``: error listing every offending sample, or keep the first N keys in key order."""
    kept: list[dict] = []
    truncations: list[Truncation] = []
    for index, (sample, pred) in enumerate(zip(samples, predictions)):
        allowed = sample.n_differences_open
        keys = sorted(pred, key=key_order)
        if len(keys) <= allowed:
            kept.append(pred)
            continue
        truncations.append(
            Truncation(index=index, sample_key=sample.sample_key, allowed=allowed, given=len(keys), dropped_keys=keys[allowed:])
        )
        kept.append({k: pred[k] for k in keys[:allowed]})
    if truncations and policy == "error":
        listed = bulleted(
            [
                f"item {t.index} (sample {t.sample_key!r}): {count_of(t.given, 'difference')}, N_diff is {t.allowed}"
                for t in truncations
            ]
        )
        raise PredictionFormatError(
            f"{len(truncations)} sample(s) have more predicted differences than N_diff allows:\n{listed}\n"
            "Predict at most N_diff differences per sample, or pass --set eval.n_diff_policy=truncate "
            "to keep the first N_diff keys in key order."
        )
    return kept, truncations


async def score_open(samples: list[Sample], predictions: list[dict], client: ChatModel, cfg: EvalConfig) -> OpenMetrics:
    """Score validated open predictions (``load_predictions(..., "open", samples)``) with the LLM judge."""
    if len(predictions) != len(samples):
        raise PredictionFormatError(
            f"{count_of(len(predictions), 'prediction item')} for {count_of(len(samples), 'sample')}"
        )
    kept, truncations = enforce_n_diff(samples, predictions, cfg.n_diff_policy)
    templates = judge_templates(cfg.prompt_files.model_dump())
    judge = client.with_max_reasks(cfg.max_reasks)
    scorer = _SampleScorer(judge, cfg, templates, meter=client.usage)
    try:
        results = await asyncio.gather(*(scorer.score(i, s, p) for i, (s, p) in enumerate(zip(samples, kept))))
    finally:
        await judge.aclose()
    records = [r for recs, _ in results for r in recs]
    issues = [issue for _, sample_issues in results for issue in sample_issues]
    counted = [r for r in records if r.counted]
    splits = {split: _stats(group) for split, group in by_split(counted)}
    matched_pred = sum(1 for r in records if r.pred_key is not None)
    n_predictions = sum(len(p) for p in kept)
    return OpenMetrics(
        splits=splits,
        avg=mean_of([s.recall for s in splits.values()]),
        overall=_stats(counted),
        by_action=[
            ActionRow[OpenStats](split=k[0], action=k[1], action_name=k[2], stats=_stats(g)) for k, g in by_action(counted)
        ],
        by_difference=[
            DifferenceRow[OpenStats](
                split=k[0], action=k[1], action_name=k[2], key=k[3], name=k[4], description=k[5], stats=_stats(g)
            )
            for k, g in by_difference(counted)
        ],
        n_samples=len(samples),
        n_differences=len(records),
        n_predictions=n_predictions,
        unmatched_predictions=n_predictions - matched_pred,
        judge_model=cfg.judge.model,
        flip_model=cfg.flip.model,
        prompt_version=PROMPT_VERSION if set(templates.sources.values()) == {BUILT_IN} else "custom",
        prompt_sha256=templates.sha256,
        prompt_sources=templates.sources,
        judge_issues=issues,
        truncations=truncations,
        usage=judge.usage.by_stage(),
        records=records,
    )


class _SampleScorer:
    """Judge calls for one sample at a time; holds only the shared client and config."""

    def __init__(self, client: ChatModel, cfg: EvalConfig, templates: TemplateSet, meter: UsageMeter) -> None:
        self.client = client
        self.cfg = cfg
        self.templates = templates
        self.system = templates["system"].render()
        self.meter = meter

    async def score(self, index: int, sample: Sample, pred: dict) -> tuple[list[OpenRecord], list[JudgeIssue]]:
        gt_keys = [k for k in sorted(sample.labels, key=key_order) if sample.labels[k] is not None]
        issues: list[JudgeIssue] = []
        check = await self._match(index, sample, gt_keys, pred, issues)
        matched = [k for k in gt_keys if check.matches[k] is not None]
        flips = await self._flips(index, sample, matched, check, pred, issues)
        records = [self._record(index, sample, k, check, pred, flips) for k in gt_keys]
        return records, issues

    async def _match(
        self, index: int, sample: Sample, gt_keys: list[str], pred: dict, issues: list[JudgeIssue]
    ) -> MatchCheck:
        pred_keys = sorted(pred, key=key_order)
        if not gt_keys or not pred_keys:
            return MatchCheck(matches={k: None for k in gt_keys})
        prompt = match_prompt(
            sample.action_description or sample.action_name,
            {k: sample.differences[k].description for k in gt_keys},
            {k: pred[k]["description"] for k in pred_keys},
            self.templates,
        )

        def validate(answer: MatchAnswer) -> None:
            problems = check_matching(answer, gt_keys, pred_keys).problems
            if problems:
                raise ValueError("; ".join(problems))

        try:
            answer = await self.client.complete_json(
                self.cfg.judge,
                [system_message(self.system), user_message(prompt)],
                match_answer(gt_keys, pred_keys),
                stage=MATCH_STAGE,
                validate=validate,
                meter=self.meter,
            )
        except InvalidAnswerError as exc:
            parsed = parse_match_answer(exc.raw)
            check = check_matching(parsed, gt_keys, pred_keys) if parsed else MatchCheck(
                matches={k: None for k in gt_keys}, offending=list(gt_keys), problems=["answer was not a matching"]
            )
            issues.append(
                JudgeIssue(
                    index=index,
                    sample_key=sample.sample_key,
                    stage="match",
                    gt_keys=check.offending,
                    problem=f"{exc}; kept valid entries, left the listed keys unmatched",
                )
            )
            return check
        return check_matching(answer, gt_keys, pred_keys)

    async def _flips(
        self, index: int, sample: Sample, matched: list[str], check: MatchCheck, pred: dict, issues: list[JudgeIssue]
    ) -> dict[str, Optional[bool]]:
        """Matched gt key -> flipped?, or ``None`` when its batch stayed invalid."""
        size = self.cfg.flip_batch_size
        batches = [matched[i : i + size] for i in range(0, len(matched), size)]
        answers = await asyncio.gather(*(self._flip_batch(index, sample, b, check, pred, issues) for b in batches))
        return {k: flag for batch, flags in zip(batches, answers) for k, flag in zip(batch, flags)}

    async def _flip_batch(
        self, index: int, sample: Sample, keys: list[str], check: MatchCheck, pred: dict, issues: list[JudgeIssue]
    ) -> list[Optional[bool]]:
        pairs = [(sample.differences[k].description, pred[check.matches[k]]["description"]) for k in keys]

        def validate(answer: FlipAnswer) -> None:
            problem = flip_problem(answer, len(pairs))
            if problem:
                raise ValueError(problem)

        try:
            answer = await self.client.complete_json(
                self.cfg.flip,
                [system_message(self.system), user_message(flip_prompt(pairs, self.templates))],
                flip_answer(len(pairs)),
                stage=FLIP_STAGE,
                validate=validate,
                meter=self.meter,
            )
        except InvalidAnswerError as exc:
            issues.append(
                JudgeIssue(
                    index=index,
                    sample_key=sample.sample_key,
                    stage="flip",
                    gt_keys=list(keys),
                    problem=f"{exc}; these pairs count as not found",
                )
            )
            return [None] * len(keys)
        return [bool(v) for v in answer.results]

    @staticmethod
    def _record(
        index: int, sample: Sample, key: str, check: MatchCheck, pred: dict, flips: dict[str, Optional[bool]]
    ) -> OpenRecord:
        gt = sample.labels[key]
        diff = sample.differences[key]
        counted = gt in ("a", "b")
        base = dict(
            index=index,
            sample_key=sample.sample_key,
            split=sample.split,
            action=sample.action,
            action_name=sample.action_name,
            key=key,
            name=diff.name,
            description=diff.description,
            gt=gt,
            counted=counted,
        )
        pred_key = check.matches[key]
        if pred_key is None:
            note = "judge answer invalid for this key; left unmatched" if key in check.offending else ""
            return OpenRecord(**base, outcome="not_matched" if counted else "not_counted", correct=False, note=note)
        letter = pred[pred_key]["prediction"]
        flipped = flips[key]
        matched = dict(pred_key=pred_key, pred_description=pred[pred_key]["description"], pred_letter=letter, flipped=flipped)
        if flipped is None:
            outcome: Outcome = "flip_unverified" if counted else "not_counted"
            return OpenRecord(**base, **matched, outcome=outcome, correct=False, note="opposite check failed; not credited")
        final = _SWAP.get(letter, letter) if flipped and letter is not None else letter
        correct = counted and final == gt
        outcome = "not_counted" if not counted else "found" if correct else "wrong_letter"
        return OpenRecord(**base, **matched, final_letter=final, outcome=outcome, correct=correct)


def _stats(records: list[OpenRecord]) -> OpenStats:
    n = len(records)
    found = sum(r.outcome == "found" for r in records)
    wrong = sum(r.outcome == "wrong_letter" for r in records)
    unmatched = sum(r.outcome == "not_matched" for r in records)
    unverified = sum(r.outcome == "flip_unverified" for r in records)
    return OpenStats(
        n=n,
        found=found,
        wrong_letter=wrong,
        not_matched=unmatched,
        flip_unverified=unverified,
        recall=rate(found, n),
        matched_rate=rate(n - unmatched, n),
        wrong_letter_rate=rate(wrong, n),
        not_matched_rate=rate(unmatched, n),
        flip_unverified_rate=rate(unverified, n),
    )
