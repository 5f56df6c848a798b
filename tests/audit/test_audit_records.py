"""Pairing the three runs' answers per statement, and the statements an open-mode audit asks about again."""

from __future__ import annotations

from viddiff.audit.records import closed_records, open_records, statement_samples, statements_of
from viddiff.schema import (
    Difference,
    Prediction,
    Proposal,
    RetrievalFrames,
    Sample,
    SampleResult,
    Stage,
    StageBoundaries,
    VideoRef,
)


def sample(key: str, labels: dict) -> Sample:
    return Sample(
        sample_key=key,
        action="fitness_1",
        action_name="squat",
        action_description="a squat",
        split="easy",
        domain="fitness",
        videos=(VideoRef(path="a.mp4"), VideoRef(path="b.mp4")),
        differences={k: Difference(key=k, name=f"d{k}", description=f"statement {k}") for k in labels},
        labels=labels,
        n_differences_open=3,
        retrieval_frames=RetrievalFrames(
            stages=(StageBoundaries(starts=[0, 5], end=10), StageBoundaries(starts=[0, 4], end=9)),
            keyframes={"0": ([1], [2])},
        ),
    )


def result(key: str, answers: dict, proposal: Proposal | None = None, mode="closed") -> SampleResult:
    return SampleResult(
        sample_key=key,
        index=0,
        mode=mode,
        proposal=proposal,
        predictions=[Prediction(key=k, description=f"said {k}", prediction=v) for k, v in answers.items()],
    )


def test_closed_records_are_the_labelled_a_b_differences_with_each_variants_answer():
    samples = [sample("s0", {"0": "a", "1": "c", "2": None, "3": "b"}), sample("s1", {"0": "b"})]
    original = {"s0": result("s0", {"0": "a", "3": None}), "s1": result("s1", {"0": "b"})}
    swapped = {"s0": result("s0", {"0": "b", "3": "a"})}  # s1 failed in the swapped run
    same = {"s0": result("s0", {"0": "c", "3": "c"}), "s1": result("s1", {"0": "a"})}
    records = closed_records(samples, original, swapped, same)
    assert [(r.sample_key, r.key, r.gt, r.original, r.swapped, r.same) for r in records] == [
        ("s0", "0", "a", "a", "b", "c"),
        ("s0", "3", "b", None, "a", "c"),
        ("s1", "0", "b", "b", None, "a"),
    ]
    assert records[0].description == "statement 0" and records[0].action_name == "squat"


def test_open_mode_asks_again_about_the_original_statements_without_labels_or_keyframe_annotations():
    proposed = [
        Difference(
            key="0", name="depth", description="the squat is deeper", query_string="deep squat", num_frames="gt_1"
        ),
        Difference(key="1", name="stance", description="the stance is wider"),
    ]
    stages = [Stage(name="down", retrieval_strings=["x"])]
    proposal = Proposal(differences=proposed, stages=stages, links={"0": [0], "1": [0]})
    samples = [sample("s0", {"0": "a"}), sample("s1", {"0": "b"}), sample("s2", {"0": "a"}), sample("s3", {"0": "b"})]
    original = {
        "s0": result("s0", {"0": "a", "1": "c"}, proposal, mode="open"),  # VidDiff: statements from its proposal
        "s1": result("s1", {"0": "b", "1": "a"}, mode="open"),  # an LMM baseline: statements are its descriptions
        "s3": result("s3", {}, mode="open"),  # said nothing: nothing to ask
    }  # s2 failed
    asked = statement_samples(samples, original)
    assert [s.sample_key for s in asked] == ["s0", "s1"]
    assert list(asked[0].differences.values()) == proposed and asked[0].labels == {}
    assert [(d.key, d.name, d.description) for d in asked[1].differences.values()] == [
        ("0", "said 0", "said 0"), ("1", "said 1", "said 1")
    ]
    # keyframe annotations belong to the benchmark's keys, not the proposer's; stage boundaries do not
    assert asked[0].retrieval_frames.keyframes == {}
    assert asked[0].retrieval_frames.stages == samples[0].retrieval_frames.stages
    assert statements_of(original["s0"]) == proposed

    swapped = {"s0": result("s0", {"0": "b", "1": "c"}), "s1": result("s1", {"0": "a", "1": "a"})}
    same = {"s0": result("s0", {"0": "c", "1": "c"})}
    records = open_records(asked, original, swapped, same)
    assert [(r.sample_key, r.key, r.description, r.gt, r.original, r.swapped, r.same) for r in records] == [
        ("s0", "0", "the squat is deeper", None, "a", "b", "c"),
        ("s0", "1", "the stance is wider", None, "c", "c", "c"),
        ("s1", "0", "said 0", None, "b", "a", None),
        ("s1", "1", "said 1", None, "a", "a", None),
    ]
