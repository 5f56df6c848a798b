"""Pairing up the three runs of an audit: per statement, the answer in each variant.

Pure: samples and the runs' finished results (``samples.jsonl``, by sample key) in, audit records or the
samples to ask about out. A sample with no result in a variant (it failed) has no answer there (``None``).
"""

from __future__ import annotations

from typing import Optional

from viddiff.audit.metrics import AuditRecord
from viddiff.localizer.oracle import annotations_for_mode
from viddiff.schema import Difference, Sample, SampleResult

Results = dict[str, SampleResult]
"""One run's finished samples by sample key."""


def closed_records(samples: list[Sample], original: Results, swapped: Results, same: Results) -> list[AuditRecord]:
    """Closed mode: every ``a``/``b``-labelled difference of every sample (the closed task's input)."""
    return [
        _record(sample, diff, sample.labels.get(diff.key), original, swapped, same)
        for sample in samples
        for diff in sample.closed_differences()
    ]


def open_records(asked: list[Sample], original: Results, swapped: Results, same: Results) -> list[AuditRecord]:
    """Open mode: every statement the method proposed in the original order (``asked``, from
    :func:`statement_samples`); no ground truth belongs to a proposed statement."""
    return [
        _record(sample, diff, None, original, swapped, same) for sample in asked for diff in sample.differences.values()
    ]


def statement_samples(samples: list[Sample], original: Results) -> list[Sample]:
    """Open mode: the samples whose original-order run finished, each with the statements that run made as
    its (unlabelled) closed-mode differences, so the swapped and identical-video runs ask about exactly those.

    Keyframe annotations are keyed by the benchmark's differences, not these, so they are withheld (as in
    open mode); a sample whose run made no statement has nothing to ask and is left out.
    """
    asked = []
    for sample in samples:
        result = original.get(sample.sample_key)
        statements = statements_of(result) if result is not None else []
        if statements:
            asked.append(
                sample.model_copy(
                    update={
                        "differences": {d.key: d for d in statements},
                        "labels": {},
                        "retrieval_frames": annotations_for_mode(sample.retrieval_frames, "open"),
                    }
                )
            )
    return asked


def statements_of(result: SampleResult) -> list[Difference]:
    """The statements of an open-mode result, in its order: the proposer's differences where the method has a
    proposer (so a closed-mode run of the same method proposes the same stage plan and links, from the cache),
    else each prediction's description (LMM baselines)."""
    proposed = {d.key: d for d in result.proposal.differences} if result.proposal is not None else {}
    return [
        proposed.get(p.key) or Difference(key=p.key, name=p.description, description=p.description)
        for p in result.predictions
    ]


def _record(
    sample: Sample, diff: Difference, gt: Optional[str], original: Results, swapped: Results, same: Results
) -> AuditRecord:
    return AuditRecord(
        sample_key=sample.sample_key,
        split=sample.split,
        action=sample.action,
        action_name=sample.action_name,
        key=diff.key,
        description=diff.description,
        gt=gt,
        original=_answer(original, sample.sample_key, diff.key),
        swapped=_answer(swapped, sample.sample_key, diff.key),
        same=_answer(same, sample.sample_key, diff.key),
    )


def _answer(results: Results, sample_key: str, key: str) -> Optional[str]:
    result = results.get(sample_key)
    if result is None:
        return None
    return next((p.prediction for p in result.predictions if p.key == key), None)
