"""Frame budget: ``budget_stride`` properties, ``fit_budget`` on decoded videos, per-model default limits."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viddiff.methods.lmm.budget import DEFAULT_MAX_IMAGES, budget_stride, default_max_images
from viddiff.methods.lmm.baseline import fit_budget, frame_notes, resolve_config
from viddiff.config import Config
from viddiff.video import VideoFrames


def _sent(n_a: int, n_b: int, stride: int) -> int:
    return math.ceil(n_a / stride) + math.ceil(n_b / stride)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 5000), st.integers(1, 5000), st.integers(2, 400))
def test_budget_stride_fits_and_is_minimal(n_a: int, n_b: int, max_images: int) -> None:
    stride = budget_stride(n_a, n_b, max_images)
    assert stride >= 1
    assert _sent(n_a, n_b, stride) <= max_images
    if stride > 1:
        assert _sent(n_a, n_b, stride - 1) > max_images
    else:
        assert n_a + n_b <= max_images


@pytest.mark.parametrize(("n_a", "n_b", "budget"), [(0, 3, 10), (3, 0, 10), (3, 3, 1)])
def test_budget_stride_rejects_impossible_input(n_a: int, n_b: int, budget: int) -> None:
    with pytest.raises(ValueError):
        budget_stride(n_a, n_b, budget)


def _video(n: int, fps: float, start_value: int) -> VideoFrames:
    frames = np.stack([np.full((4, 6, 3), start_value + i, dtype=np.uint8) for i in range(n)])
    return VideoFrames(
        frames=frames,
        frame_indices=np.arange(n, dtype=np.int64) * 3,
        fps=fps,
        fps_original=fps * 3,
        stride=3,
        start=0,
        end=3 * n,
        n_frames_source=3 * n,
        backend="test",
    )


def test_fit_budget_uses_one_stride_for_both_videos_and_notes_the_effective_fps() -> None:
    a, b = _video(23, 4.0, 0), _video(9, 5.0, 100)
    sent = fit_budget(a, b, max_images=10)
    assert sent.stride == 4 and len(sent.a) + len(sent.b) == 9
    assert sent.a[:, 0, 0, 0].tolist() == [0, 4, 8, 12, 16, 20]  # uniform, starting at the first frame
    assert sent.b[:, 0, 0, 0].tolist() == [100, 104, 108]
    assert (sent.fps_a, sent.fps_b) == (1.0, 1.25)
    notes = " | ".join(frame_notes(a, b, sent, 10))
    assert "effective fps A 1, B 1.25" in notes
    assert "thinned by stride 4 (1 frame in 4 kept)" in notes and "max_images=10" in notes
    assert "different fps: A 4, B 5" in notes


def test_fit_budget_within_budget_sends_everything() -> None:
    a, b = _video(5, 4.0, 0), _video(6, 4.0, 50)
    sent = fit_budget(a, b, max_images=11)
    assert sent.stride == 1 and len(sent.a) == 5 and len(sent.b) == 6
    assert not any("frame budget" in n for n in frame_notes(a, b, sent, 11))


@pytest.mark.parametrize(
    ("model", "limit"),
    [
        ("gpt-4o-2024-08-06", DEFAULT_MAX_IMAGES),
        ("claude-3-5-sonnet-20241022", 100),
        ("anthropic/claude-3.5-sonnet", 100),
        ("Qwen/Qwen2.5-VL-7B-Instruct", DEFAULT_MAX_IMAGES),
    ],
)
def test_default_budget_follows_the_model(model: str, limit: int) -> None:
    assert default_max_images(model) == limit
    cfg = resolve_config(Config(), model)
    assert (cfg.baseline.model, cfg.baseline.max_images) == (model, limit)


def test_explicit_budget_wins_over_the_model_default() -> None:
    cfg = resolve_config(Config().with_overrides(["baseline.max_images=12"]), "claude-3-opus")
    assert cfg.baseline.max_images == 12
