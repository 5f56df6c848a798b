"""The localisation ablations through ``Localizer``: oracle, random and no-Viterbi as the paper defines them."""

from __future__ import annotations

import numpy as np
import pytest

from viddiff.config import LocalizerConfig
from viddiff.localizer.localize import Localizer, needs_clip
from viddiff.schema import Difference, Proposal, RetrievalFrames, Stage, StageBoundaries
from viddiff.video import VideoFrames

N = 40


def video(n: int = N, *, stride: int = 1, start: int = 0) -> VideoFrames:
    """Frame ``t`` is filled with the value ``t``, so the fake embedder can tell frames apart."""
    indices = start + stride * np.arange(n, dtype=np.int64)
    return VideoFrames(
        frames=np.broadcast_to(np.arange(n, dtype=np.uint8)[:, None, None, None], (n, 2, 2, 3)).copy(),
        frame_indices=indices,
        fps=8.0 / stride,
        fps_original=8.0,
        stride=stride,
        start=start,
        end=int(indices[-1]) + 1,
        n_frames_source=int(indices[-1]) + 1,
        backend="test",
    )


class PositionEmbedder:
    """Frame ``t`` embeds as the unit vector ``e_t``; the text ``"at k"`` as ``e_k``: it matches frame k only."""

    def embed_images(self, frames: np.ndarray) -> np.ndarray:
        return np.eye(N)[frames[:, 0, 0, 0].astype(int)]

    def embed_texts(self, texts: list[str]) -> np.ndarray:
        return np.eye(N)[[int(t.split()[-1]) for t in texts]]


STAGES = [
    Stage(name="start", retrieval_strings=["at 6", "at 30"]),  # first string: early; second: late
    Stage(name="middle", retrieval_strings=["at 20", "at 2"]),
    Stage(name="end", retrieval_strings=["at 33", "at 12"]),
]
DIFFS = [
    Difference(key="0", name="pose", description="the pose is lower", num_frames="1"),
    Difference(key="1", name="speed", description="the descent is faster", num_frames="gt_1"),
]
PROPOSAL = Proposal(differences=DIFFS, stages=STAGES, links={"0": [1], "1": [2]})


def localize(method: str, retrieval=None, sample_key: str = "s", embedder=PositionEmbedder(), settings=None, **videos):
    cfg = LocalizerConfig(**{"method": method, "n_frames_multi": 3, "frame_sep_s": 0.25, **(settings or {})})
    a, b = videos.get("a", video()), videos.get("b", video(stride=2, start=3))
    return Localizer(cfg, embedder).localize(PROPOSAL, a, b, retrieval=retrieval, sample_key=sample_key)


def test_oracle_takes_the_annotated_frames_and_falls_back_for_the_rest() -> None:
    annotated = RetrievalFrames(keyframes={"0": ([11], [24, 26, 27])})  # source frames; "1" is not annotated
    oracle = localize("oracle", annotated)
    viterbi = localize("viterbi")
    pose, speed = oracle.keyframes
    assert pose.a.frame_indices == [11]
    assert pose.b.frame_indices == [23, 25, 27]  # B samples every 2nd frame from 3: nearest to 24, 26, 27
    assert speed == viterbi.keyframes[1]  # no annotation: the Viterbi keyframes, as without the oracle
    assert oracle.segmentations == viterbi.segmentations
    assert any("1 of 2 differences localised by their annotated keyframes" in n for n in oracle.notes)
    assert any("no usable stage annotation" in n and "viterbi" in n for n in oracle.notes)


def test_oracle_without_annotations_or_clip_uses_the_uniform_split() -> None:
    loc = localize("oracle", None, embedder=None)
    assert loc.keyframes == localize("uniform", None, embedder=None).keyframes
    assert any("0 of 2 differences" in n for n in loc.notes)
    assert any("stages segmented by uniform" in n for n in loc.notes)


def test_oracle_uses_annotated_stage_boundaries_when_they_fit() -> None:
    stages = StageBoundaries(starts=[0, 10, 20], end=40)
    b_stages = StageBoundaries(starts=[3, 23, 53], end=82)  # B: source frames 3, 5, ..., 81
    loc = localize("oracle", RetrievalFrames(stages=(stages, b_stages)))
    assert loc.segmentations[0].spans == [(0, 10), (10, 20), (20, 40)]
    assert loc.segmentations[1].spans == [(0, 10), (10, 25), (25, 40)]
    assert loc.keyframes[0].a.frame_indices == [14]  # middle of the annotated stage "middle"
    assert not any("no usable stage annotation" in n for n in loc.notes)


def test_random_draws_keyframes_with_the_localised_count_and_spacing() -> None:
    viterbi = localize("viterbi")
    draws = [localize("random", sample_key=f"s{i}", embedder=None) for i in range(12)]
    for loc in draws:
        for got, ref in zip(loc.keyframes, viterbi.keyframes):
            for side in ("a", "b"):
                frames, ref_frames = getattr(got, side).frame_indices, getattr(ref, side).frame_indices
                assert len(frames) == len(ref_frames) and np.diff(frames).tolist() == np.diff(ref_frames).tolist()
    places = {tuple(loc.keyframes[1].a.frame_indices) for loc in draws}
    assert len(places) > 3  # the place is random: it varies across samples ...
    again = localize("random", sample_key="s3", embedder=None)
    assert again.keyframes == draws[3].keyframes  # ... and is reproducible for one sample
    assert not needs_clip("random", PROPOSAL.differences) and needs_clip("no_viterbi", PROPOSAL.differences)


def test_no_viterbi_windows_follow_each_stage_first_string_only() -> None:
    loc = localize("no_viterbi")
    spans = loc.segmentations[0].spans
    targets = [6, 20, 33]  # where each stage's first string matches in A
    half = int(1.3 * N / 3) // 2  # window 17 frames (made odd), half 8
    for (start, end), target in zip(spans, targets):
        assert end - start == 2 * half + 1 and start <= target < end
    # the second strings (late, early, middle) would have put stage 0 after stage 1: they are not used
    assert not any(start <= 30 < end for start, end in spans[:1])


def test_no_viterbi_as_released_takes_three_frames_for_three_stages_whatever_the_length() -> None:
    loc = localize("no_viterbi", settings={"no_viterbi_window": "as_released"})
    for spans in (seg.spans for seg in loc.segmentations):
        assert all(end - start == 3 for start, end in spans)  # int(1.3 * 5 / 3) = 2, made odd
    # each first string matches one frame (6, 20, 33); three windows hold it, the earliest wins (as released)
    assert loc.segmentations[0].spans == [(4, 7), (18, 21), (31, 34)]


def test_as_released_burst_at_one_fps_sends_one_frame_three_times() -> None:
    slow = dict(a=video(12, stride=8), b=video(12, stride=8, start=1))  # 1 fps
    released = localize("viterbi", settings={"burst_step": "as_released", "frame_sep_s": 0.35}, **slow)
    ours = localize("viterbi", settings={"frame_sep_s": 0.35}, **slow)
    speed = released.keyframes[1]  # the gt_1 difference
    assert len(speed.a.frame_indices) == 3 and len(set(speed.a.frame_indices)) == 1
    assert len(set(ours.keyframes[1].a.frame_indices)) == 3
    assert speed.a.frame_indices[0] == ours.keyframes[1].a.frame_indices[1]  # the same middle frame


@pytest.mark.parametrize("method", ["random_segments", "argmax", "uniform"])
def test_this_projects_variants_still_run(method) -> None:
    loc = localize(method, embedder=PositionEmbedder() if method == "argmax" else None)
    assert len(loc.keyframes) == 2 and all(k.a.frame_indices and k.b.frame_indices for k in loc.keyframes)
