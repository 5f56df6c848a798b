"""PNG figures: seconds on one shared axis, labelled keyframes, large thumbnails, sample and action in the title."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

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
from viddiff.report.figures import DPI, keyframe_figure, save_sample_visuals, segmentation_figure


def _frames(n: int, fps: float, start: int = 0, size=(120, 160)) -> VideoFrames:
    pixels = np.stack([np.full((*size, 3), (i * 9) % 255, np.uint8) for i in range(n)])
    return VideoFrames(
        frames=pixels, frame_indices=np.arange(start, start + n), fps=fps, fps_original=fps, stride=1,
        start=start, end=start + n, n_frames_source=start + n, backend="test",
    )


def _case(statement: str = "the squat is deeper"):
    """A is 2 s long; B is the same action at half speed (4 s)."""
    videos = (_frames(20, 10.0), _frames(40, 10.0))
    sample = Sample(
        sample_key="pair_7", action="fitness_1", action_name="barbell back squat", action_description="a squat",
        split="easy", domain="fitness", videos=(VideoRef(path="a.mp4"), VideoRef(path="b.mp4")),
    )
    proposal = Proposal(
        differences=[Difference(key="0", name="depth", description=statement, num_frames="gt_1")],
        stages=[Stage(name="descent", retrieval_strings=["x"]), Stage(name="ascent", retrieval_strings=["y"])],
        links={"0": [1]},
    )
    kf = Keyframes(
        key="0",
        a=VideoKeyframes(frame_indices=[12, 15, 18], times_s=[1.2, 1.5, 1.8]),
        b=VideoKeyframes(frame_indices=[24, 30, 36], times_s=[2.4, 3.0, 3.6]),
    )
    result = SampleResult(
        sample_key="pair_7", index=0, mode="closed", proposal=proposal,
        segmentations=(
            Segmentation(frame_indices=list(range(20)), spans=[(0, 10), (10, 20)]),
            Segmentation(frame_indices=list(range(40)), spans=[(0, 20), (20, 40)]),
        ),
        keyframes=[kf],
        predictions=[Prediction(key="0", description=statement, prediction="b", rationale="deeper in B")],
    )
    return sample, result, videos, kf


def test_segmentation_shares_one_axis_of_seconds():
    sample, result, videos, _ = _case()
    fig = segmentation_figure(sample, result, videos)
    ax = fig.axes[0]
    assert ax.get_xlim()[1] == pytest.approx(4.0, rel=0.02)
    assert "seconds" in ax.get_xlabel()
    assert ax.get_title(loc="left") == "pair_7 · barbell back squat"
    backgrounds = [p for p in ax.patches if p.get_x() == 0 and p.get_facecolor()[:3] == pytest.approx((0.918, 0.933, 0.949), abs=0.01)]
    assert sorted(p.get_width() for p in backgrounds) == pytest.approx([2.0, 4.0])  # B is visibly twice as long
    assert "1" in [t.get_text() for t in ax.texts]  # keyframe ticks numbered by difference


def test_keyframe_figure_is_large_and_labelled():
    sample, result, videos, kf = _case(statement="costs $5 and $6")  # '$' must not start mathtext
    fig = keyframe_figure(sample, 1, result.predictions[0], kf, videos, ["ascent"])
    width_px, height_px = fig.get_size_inches() * DPI
    assert width_px >= 3 * 360 and height_px >= 2 * 0.75 * 360
    titles = [ax.get_title() for ax in fig.axes]
    assert "A · 1.50 s (frame 15)" in titles and "B · 3.00 s (frame 30)" in titles
    suptitle = fig.get_suptitle()
    assert "pair_7 · barbell back squat" in suptitle and "costs $5 and $6" in suptitle and "more true of B" in suptitle


def test_save_sample_visuals_writes_decodable_pngs_in_a_safe_folder(tmp_path):
    sample, result, videos, _ = _case()
    sample = sample.model_copy(update={"sample_key": "../escape/me"})
    folder = save_sample_visuals(tmp_path, sample, result, videos)
    assert folder.parent == tmp_path
    with Image.open(folder / "keyframes_0.png") as image:
        assert image.width >= 3 * 360
    with Image.open(folder / "segmentation.png") as image:
        assert image.width >= 1000
