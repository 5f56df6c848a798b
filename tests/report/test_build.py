"""The page view-model, built directly from stage-boundary models (no CLI, no server)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from viddiff.config import Config
from viddiff.eval.closed import ClosedRecord
from viddiff.eval.open import OpenRecord
from viddiff.report.build import PageContext, build_page, number_ranges
from viddiff.schema import (
    Difference,
    Keyframes,
    Prediction,
    Proposal,
    Sample,
    SampleResult,
    Segmentation,
    Stage,
    VideoKeyframes,
    VideoRef,
)
from viddiff.video import VideoFrames


def _frames(n: int, fps: float) -> VideoFrames:
    return VideoFrames(
        frames=np.zeros((n, 90, 160, 3), np.uint8), frame_indices=np.arange(n), fps=fps, fps_original=fps, stride=1,
        start=0, end=n, n_frames_source=n, backend="test",
    )


def _kf(key: str, a: float, b: float) -> Keyframes:
    return Keyframes(
        key=key,
        a=VideoKeyframes(frame_indices=[round(a * 10)], times_s=[a]),
        b=VideoKeyframes(frame_indices=[round(b * 10)], times_s=[b]),
    )


def _page(predictions, keyframes, records=(), differences=None, tmp_path: Path = Path(".")):
    keys = [p.key for p in predictions]
    differences = differences or [Difference(key=k, name=f"name {k}", description=f"statement {k}") for k in keys]
    sample = Sample(
        sample_key="s1", action="fitness_1", action_name="squat", action_description="a squat", split="easy",
        domain="fitness", videos=(VideoRef(path=str(tmp_path / "a.mp4")), VideoRef(path=str(tmp_path / "b.mp4"))),
    )
    result = SampleResult(
        sample_key="s1", index=0, mode="closed",
        proposal=Proposal(
            differences=differences,
            stages=[Stage(name="down", retrieval_strings=["x"]), Stage(name="up", retrieval_strings=["y"])],
            links={k: [1] for k in keys},
        ),
        segmentations=(
            Segmentation(frame_indices=list(range(30)), spans=[(0, 15), (15, 30)]),
            Segmentation(frame_indices=list(range(60)), spans=[(0, 30), (30, 60)]),
        ),
        keyframes=keyframes,
        predictions=predictions,
    )
    ctx = PageContext(cfg=Config(), page_dir=tmp_path, models=[], endpoint_stand_ins=[], clip_stand_in=None)
    return build_page(sample, result, (_frames(30, 10.0), _frames(60, 10.0)), ctx, records=list(records), benchmark=True)


def _record(key: str, **fields) -> dict:
    base = dict(index=0, sample_key="s1", split="easy", action="fitness_1", action_name="squat", key=key, name=key)
    return {**base, **fields}


def test_verdicts_ground_truth_and_score_in_words(tmp_path):
    preds = [Prediction(key=k, description=f"statement {k}", prediction=p) for k, p in zip("0123", ["a", "b", "c", None])]
    records = [
        ClosedRecord(**_record("0", description="s0", gt="a", prediction="a", missing=False, counted=True, correct=True)),
        ClosedRecord(**_record("1", description="s1", gt="a", prediction="b", missing=False, counted=True, correct=False)),
        ClosedRecord(**_record("2", description="s2", gt="c", prediction="c", missing=False, counted=False, correct=False)),
    ]
    page = _page(preds, [_kf(k, 1.0, 2.0) for k in "0123"], records, tmp_path=tmp_path)
    assert [d.verdict_text for d in page.differences] == [
        "More true of video A",
        "More true of video B",
        "Similar in both videos (or cannot tell)",
        "No valid answer: the model never answered in the required form",
    ]
    truths = [[(g.answer, g.correct) for g in d.ground_truth] for d in page.differences]
    assert truths == [[("video A", True)], [("video A", False)], [("similar", None)], []]
    assert page.sample.score == "1 of 2 right"
    assert [s.name for s in page.differences[0].stages] == ["up"]


def test_open_records_attach_to_their_prediction_and_unmatched_ones_are_listed(tmp_path):
    preds = [Prediction(key="p0", description="the squat is deeper", prediction="a")]
    common = dict(counted=True, flipped=None, pred_description=None)
    records = [
        OpenRecord(**_record("0", description="deeper squat"), gt="b", pred_key="p0", pred_letter="a", final_letter="b",
                   outcome="found", correct=True, **{**common, "flipped": True}),
        OpenRecord(**_record("1", description="wider stance"), gt="a", outcome="not_matched", correct=False, **common),
    ]
    page = _page(preds, [_kf("p0", 1.0, 2.0)], records, tmp_path=tmp_path)
    (truth,) = page.differences[0].ground_truth
    assert truth.correct is True and "deeper squat" in truth.detail and "opposite" in truth.detail
    assert [(m.statement, m.answer) for m in page.missed] == [("wider stance", "video A")]


def test_timeline_is_to_scale_and_keyframe_labels_never_overlap(tmp_path):
    preds = [Prediction(key=str(k), description=f"s{k}", prediction="a") for k in range(12)]
    # Eleven differences at one moment and one just beside it: the labels would collide on one row.
    keyframes = [_kf(str(k), 2.0, 4.0) for k in range(11)] + [_kf("11", 2.05, 4.05)]
    t = _page(preds, keyframes, tmp_path=tmp_path).timeline
    bar_a, bar_b = (track.end_x - t.x0 for track in t.tracks)
    assert bar_b / bar_a == pytest.approx(2.0)  # 6 s against 3 s
    labelled = [m for m in t.tracks[0].markers if m.label]
    assert [m.label for m in labelled] == ["1–11", "12"]
    assert labelled[0].row != labelled[1].row
    assert t.tracks[0].segments[1].start_s == pytest.approx(1.5) and t.tracks[1].segments[1].start_s == pytest.approx(3.0)


@pytest.mark.parametrize(
    "numbers, text", [([], ""), ([3], "3"), ([1, 2, 3, 5, 7, 8], "1–3,5,7–8"), ([2, 4, 6], "2,4,6")]
)
def test_number_ranges(numbers, text):
    assert number_ranges(numbers) == text
