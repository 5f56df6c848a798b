"""Frames embedded before the proposal: exactly the segmenter's first request, served back unchanged."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viddiff.backends.clip import ClipEmbedder
from viddiff.config import ClipConfig, LocalizerConfig
from viddiff.localizer.localize import Localizer
from viddiff.localizer.segmenters import SegmentInput, get_segmenter
from viddiff.schema import Difference, Proposal, Stage
from viddiff.testing import TINY_CLIP_CONFIG, TINY_CLIP_MODEL
from viddiff.testing.recording import RecordingEmbedder
from viddiff.video import VideoFrames

CLIP_SEGMENTERS = ("viterbi", "no_viterbi", "argmax")


class FirstRequest:
    """A segmenter's CLIP inputs that remember the positions of the first embedding request."""

    def __init__(self, n_frames: int, n_stages: int):
        self.n_frames, self.n_stages = n_frames, n_stages
        self.first: np.ndarray | None = None
        self.rng = np.random.default_rng(0)

    def _asked(self, positions: np.ndarray) -> None:
        if self.first is None:
            self.first = np.asarray(positions)

    def scores(self) -> np.ndarray:
        self._asked(np.arange(self.n_frames))
        return self.rng.random((self.n_stages, self.n_frames))

    def similarities_at(self, positions: np.ndarray) -> np.ndarray:
        self._asked(positions)
        return self.rng.random((self.n_stages, len(positions)))

    def segment_input(self, coarse_stride: int | None) -> SegmentInput:
        return SegmentInput(
            n_frames=self.n_frames, n_stages=self.n_stages, frame_indices=np.arange(self.n_frames), rng=self.rng,
            stay_logp=np.log(0.5), advance_logp=np.log(0.5), eps=1e-5, coarse_stride=coarse_stride, refine_radius=1,
            scores=self.scores, first_string_scores=self.scores, similarities_at=self.similarities_at,
        )


@settings(max_examples=200, deadline=None)
@given(
    name=st.sampled_from(CLIP_SEGMENTERS),
    n_frames=st.integers(1, 60),
    max_stages=st.integers(1, 8),
    stride=st.one_of(st.none(), st.integers(1, 12)),
    data=st.data(),
)
def test_first_frames_are_the_first_request_for_every_stage_count(name, n_frames, max_stages, stride, data):
    segmenter = get_segmenter(name)
    predicted = segmenter.first_frames(n_frames, stride, max_stages)
    n_stages = data.draw(st.integers(1, max_stages))
    inputs = FirstRequest(n_frames, n_stages)
    segmenter.segment(inputs.segment_input(stride))
    if predicted is None:  # only where the first round depends on the stage count
        assert name == "viterbi" and stride is not None and stride > 1 and max_stages >= n_frames
        return
    assert inputs.first is not None and np.array_equal(predicted, inputs.first)


@pytest.mark.parametrize("name", ["uniform", "random", "random_segments", "oracle"])
def test_segmenters_without_clip_embed_nothing_first(name):
    assert get_segmenter(name).first_frames is None
    assert Localizer(LocalizerConfig(method=name)).first_frames(40, 5) is None


def clip_config() -> ClipConfig:
    return ClipConfig(model=TINY_CLIP_MODEL, arch_config=str(TINY_CLIP_CONFIG), pretrained=None, device="cpu")


def video(seed: int, n: int = 40) -> VideoFrames:
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 256, size=(2, 32, 32, 3)).astype(float)
    mix = np.linspace(0.0, 1.0, n)[:, None, None, None]
    frames = (1 - mix) * base[0] + mix * base[1] + rng.normal(0, 3, size=(n, 32, 32, 3))
    return VideoFrames(
        frames=np.clip(frames, 0, 255).astype(np.uint8), frame_indices=np.arange(n, dtype=np.int64), fps=4.0,
        fps_original=4.0, stride=1, start=0, end=n, n_frames_source=n, backend="test",
    )


def proposal() -> Proposal:
    stages = [Stage(name=n, retrieval_strings=[f"A photo of a person {n}", f"someone {n}"]) for n in ("up", "mid", "down")]
    diffs = [
        Difference(key="0", name="depth", description="deeper", num_frames="1"),
        Difference(key="1", name="speed", description="faster", num_frames="gt_1"),
    ]
    return Proposal(differences=diffs, stages=stages, links={"0": [1], "1": [0, 2]})


@pytest.mark.parametrize(
    "cfg",
    [
        {"method": "viterbi"},
        {"method": "viterbi", "coarse_to_fine": {"enabled": True, "coarse_stride": 4}},
        {"method": "no_viterbi"},
        {"method": "argmax"},
    ],
    ids=["viterbi", "coarse-to-fine", "no_viterbi", "argmax"],
)
def test_localisation_with_frames_embedded_first_is_identical(cfg):
    """Same segmentations and keyframes, and CLIP asked for exactly the same batches (so the same embeddings)."""
    config = LocalizerConfig(clip=clip_config(), **cfg)
    a, b = video(1), video(2)
    plain = RecordingEmbedder(ClipEmbedder(clip_config()))
    expected = Localizer(config, plain).localize(proposal(), a, b)

    early = RecordingEmbedder(ClipEmbedder(clip_config()))
    localizer = Localizer(config, early)
    first = (localizer.embed_first(a, max_stages=5), localizer.embed_first(b, max_stages=5))
    assert first[0] is not None and first[1] is not None
    assert not [r for r in early.requests if r.kind == "text"]  # nothing of the proposal is needed yet
    got = localizer.localize(proposal(), a, b, first=first)

    assert got == expected
    assert Counter((r.kind, r.items, r.output) for r in early.requests) == Counter(
        (r.kind, r.items, r.output) for r in plain.requests
    )
    assert early.stats == plain.stats
