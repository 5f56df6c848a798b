"""Global-scope differences: keyframes spread over the whole video, no stage lookup, no CLIP when all are global."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viddiff.config import LocalizerConfig
from viddiff.localizer.localize import Localizer, needs_clip, spread_keyframes
from viddiff.schema import Difference, Proposal, Stage
from viddiff.video import VideoFrames


def frames(n: int, *, stride: int = 2, start: int = 10, fps_original: float = 30.0) -> VideoFrames:
    indices = start + stride * np.arange(n, dtype=np.int64)
    return VideoFrames(
        frames=np.zeros((n, 4, 4, 3), dtype=np.uint8),
        frame_indices=indices,
        fps=fps_original / stride,
        fps_original=fps_original,
        stride=stride,
        start=start,
        end=int(indices[-1]) + 1,
        n_frames_source=int(indices[-1]) + 1,
        backend="test",
    )


def stage(name: str) -> Stage:
    return Stage(name=name, retrieval_strings=[f"A photo of {name}"])


def proposal(*scopes: str) -> Proposal:
    diffs = [
        Difference(key=str(i), name=f"d{i}", description=f"statement {i}", scope=scope, num_frames="1")
        for i, scope in enumerate(scopes)
    ]
    stages = [stage("one"), stage("two"), stage("three")]
    return Proposal(differences=diffs, stages=stages, links={d.key: [0] for d in diffs})


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 400), st.integers(1, 9))
def test_spread_keyframes_are_distinct_sorted_and_cover_the_video(n_total, n_frames):
    positions = spread_keyframes(n_total, n_frames)
    assert positions == sorted(set(positions))
    assert all(0 <= p < n_total for p in positions)
    assert len(positions) == min(n_total, n_frames)
    if n_total > n_frames:
        # the frame at (or just before) the centre of each of n_frames equal parts of the video
        centres = [(2 * i + 1) * n_total / (2 * n_frames) for i in range(n_frames)]
        assert all(0 <= c - p < 1 for p, c in zip(positions, centres))


def test_spread_keyframes_examples():
    assert spread_keyframes(30, 3) == [5, 15, 25]
    assert spread_keyframes(10, 1) == [5]
    assert spread_keyframes(2, 3) == [0, 1]
    with pytest.raises(ValueError, match="n_total >= 1"):
        spread_keyframes(0, 3)


def test_global_differences_ignore_their_links_and_local_ones_keep_them():
    cfg = LocalizerConfig(method="uniform", n_frames_multi=3)
    video_a, video_b = frames(30), frames(12, stride=3, start=0)
    loc = Localizer(cfg).localize(proposal("local", "global"), video_a, video_b)
    local, glob = loc.keyframes
    # local, num_frames "1": middle of stage 0 of the uniform split (positions 0-9 of A, 0-3 of B)
    assert local.a.frame_indices == [int(video_a.frame_indices[4])]
    assert local.b.frame_indices == [int(video_b.frame_indices[1])]
    # global: 3 frames over the whole video although linked to stage 0 and num_frames is "1"
    assert glob.a.frame_indices == [int(video_a.frame_indices[p]) for p in (5, 15, 25)]
    assert glob.b.frame_indices == [int(video_b.frame_indices[p]) for p in (2, 6, 10)]
    assert glob.a.times_s == [round(float(video_a.times_s[p]), 4) for p in (5, 15, 25)]


class CountingEmbedder:
    def __init__(self):
        self.calls = 0

    def embed_images(self, frames: np.ndarray) -> np.ndarray:
        self.calls += 1
        return np.ones((len(frames), 4))

    def embed_texts(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        return np.ones((len(texts), 4))


def test_only_global_differences_never_touch_clip():
    everything_global = proposal("global", "global")
    assert not needs_clip("viterbi", everything_global.differences)
    assert needs_clip("viterbi", proposal("global", "local").differences)
    assert not needs_clip("uniform", proposal("local").differences)
    embedder = CountingEmbedder()
    loc = Localizer(LocalizerConfig(method="viterbi"), embedder).localize(everything_global, frames(9), frames(9))
    assert embedder.calls == 0
    assert [len(k.a.frame_indices) for k in loc.keyframes] == [3, 3]
    # and without an embedder at all (what VidDiff passes in that case)
    Localizer(LocalizerConfig(method="viterbi")).localize(everything_global, frames(9), frames(9))


def test_clip_method_without_embedder_fails_for_local_differences():
    with pytest.raises(ValueError, match="needs a CLIP embedder"):
        Localizer(LocalizerConfig(method="viterbi")).localize(proposal("local"), frames(9), frames(9))
