"""The shared time axis: stage spans in seconds on each clip's clock, round axis ticks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from viddiff.report.timeline import ClipClock, axis_ticks, stage_spans, tick_step


def test_spans_tile_a_trimmed_clip_in_seconds():
    clock = ClipClock.constant_rate(6, 80, 30.0)
    frames = list(range(6, 80, 6))  # sampled every 6th frame from the trim start
    spans = stage_spans(frames, [(0, 4), (4, 9), (9, len(frames))], ["set", "dip", "release"], clock)
    assert [s.name for s in spans] == ["set", "dip", "release"]
    assert spans[0].start_s == 0.0
    assert spans[1].start_s == pytest.approx((frames[4] - 6) / 30)
    assert spans[0].end_s == spans[1].start_s and spans[1].end_s == spans[2].start_s
    assert spans[2].end_s == pytest.approx(74 / 30) == clock.duration_s
    assert clock.offset_s == pytest.approx(0.2)


def test_more_stages_than_frames_never_crash():
    clock = ClipClock.constant_rate(0, 2, 1.0)
    spans = stage_spans([0, 1], [(0, 1), (1, 2), (2, 2)], ["a", "b", "c"], clock)
    assert [s.name for s in spans] == ["a", "b"]  # the empty last stage has no extent to draw


@given(
    n=st.integers(1, 200),
    cuts=st.lists(st.integers(1, 199), max_size=6),
    stride=st.integers(1, 8),
    start=st.integers(0, 50),
    fps=st.floats(0.5, 120),
)
def test_viterbi_like_spans_are_contiguous_and_inside_the_clip(n, cuts, stride, start, fps):
    frames = [start + i * stride for i in range(n)]
    bounds = sorted({0, n, *(c for c in cuts if c < n)})
    spans = list(zip(bounds, bounds[1:]))
    clock = ClipClock.constant_rate(start, start + n * stride, fps)
    out = stage_spans(frames, spans, [str(k) for k in range(len(spans))], clock)
    assert out[0].start_s == 0 and out[-1].end_s == pytest.approx(clock.duration_s)
    for left, right in zip(out, out[1:]):
        assert left.end_s == pytest.approx(right.start_s) and left.start_s <= left.end_s


@pytest.mark.parametrize("extent, step", [(2.47, 0.25), (9.0, 1.0), (65.0, 10.0), (0.9, 0.1), (3600.0, 300.0)])
def test_ticks_use_round_steps(extent, step):
    assert tick_step(extent) == step
    ticks = axis_ticks(extent)
    assert ticks[0] == 0 and ticks[-1] <= extent and len(ticks) <= 13
