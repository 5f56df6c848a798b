"""The report's clock on a variable-frame-rate file: presentation times, never a nominal rate (issue 32, item 3).

A phone-like clip: a 30 fps burst for 1.33 s, then one frame every 0.35 s until 10.08 s. Counting frames at the
container's average rate drew it 9.48 s long and put a frame shown at 1.0 s at 4.38 s.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from matplotlib.colors import to_rgba

from viddiff.config import Config
from viddiff.report.build import PageContext, build_page
from viddiff.report.figures import segmentation_figure
from viddiff.report.timeline import ClipClock
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
from viddiff.video import VideoFrames, read_video
from viddiff.video.write import write_video

BURST = [i / 30 for i in range(40)]
TIMES = BURST + [BURST[-1] + 0.35 * k for k in range(1, 26)]
LAST_INTERVAL = 0.35


@pytest.fixture(scope="module")
def vfr_clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    frames = [np.full((64, 96, 3), (7 * i) % 256, np.uint8) for i in range(len(TIMES))]
    return write_video(tmp_path_factory.mktemp("vfr") / "phone.mp4", frames, 30, times_s=TIMES)


@pytest.fixture(scope="module")
def video(vfr_clip: Path) -> VideoFrames:
    video = read_video(vfr_clip, target_fps=4)
    assert video.variable_frame_rate
    return video


def test_the_clock_is_the_files_presentation_times(video: VideoFrames) -> None:
    clock = ClipClock.of(video)
    assert clock.duration_s == pytest.approx(TIMES[-1] + LAST_INTERVAL, abs=1e-3)  # was 9.48 s (65 frames at 6.85 fps)
    for index, t in zip(video.frame_indices, video.times_s):
        assert clock.seconds(int(index)) == pytest.approx(TIMES[int(index)], abs=1e-3)
    assert clock.offset_s == 0


def test_a_trimmed_vfr_clip_starts_its_clock_at_the_trim(vfr_clip: Path) -> None:
    video = read_video(vfr_clip, target_fps=4, frames_trim=(20, 50))
    clock = ClipClock.of(video)
    assert clock.offset_s == pytest.approx(TIMES[20], abs=1e-3)  # where the player must seek
    assert clock.duration_s == pytest.approx(TIMES[50] - TIMES[20], abs=1e-3)
    assert clock.seconds(45) == pytest.approx(TIMES[45] - TIMES[20], abs=1e-3)


def _sample(path: Path) -> Sample:
    return Sample(
        sample_key="vfr", action="fitness_1", action_name="squat", action_description="a squat", split="easy",
        domain="fitness", videos=(VideoRef(path=str(path)), VideoRef(path=str(path))),
    )


def _result(video: VideoFrames) -> SampleResult:
    """Stage 2 starts at the sampled frame shown at 1.0 s; the difference's keyframes sit in stage 2."""
    indices = [int(f) for f in video.frame_indices]
    cut = next(i for i, t in enumerate(video.times_s) if t >= 1.0)
    picked = indices[cut + 1 : cut + 4]
    keyframes = VideoKeyframes(frame_indices=picked, times_s=[float(video.times_s[cut + 1 + k]) for k in range(3)])
    segmentation = Segmentation(frame_indices=indices, spans=[(0, cut), (cut, len(indices))])
    return SampleResult(
        sample_key="vfr", index=0, mode="closed",
        proposal=Proposal(
            differences=[Difference(key="0", name="depth", description="deeper squat")],
            stages=[Stage(name="set up", retrieval_strings=["x"]), Stage(name="descend", retrieval_strings=["y"])],
            links={"0": [1]},
        ),
        segmentations=(segmentation, segmentation),
        keyframes=[Keyframes(key="0", a=keyframes, b=keyframes)],
        predictions=[Prediction(key="0", description="deeper squat", prediction="a")],
    )


def test_the_page_draws_stages_and_keyframes_at_presentation_times(vfr_clip: Path, video: VideoFrames, tmp_path: Path) -> None:
    ctx = PageContext(cfg=Config(), page_dir=tmp_path, models=[], endpoint_stand_ins=[], clip_stand_in=None)
    page = build_page(_sample(vfr_clip), _result(video), (video, video), ctx, records=[], benchmark=True)
    assert page.videos[0].duration_s == pytest.approx(TIMES[-1] + LAST_INTERVAL, abs=1e-3)
    timeline = page.timeline
    track = timeline.tracks[0]
    assert track.duration_label == f"{TIMES[-1] + LAST_INTERVAL:.2f} s"
    _, descend = track.segments
    assert descend.start_s == pytest.approx(1.0, abs=1e-3)  # was drawn at 4.38 s
    for marker in track.markers:  # every keyframe inside the bar of the stage it was picked from
        assert descend.x <= marker.x <= descend.x + descend.width


def test_the_figure_uses_the_same_clock(vfr_clip: Path, video: VideoFrames) -> None:
    figure = segmentation_figure(_sample(vfr_clip), _result(video), (video, video))
    bars = [p for p in figure.axes[0].patches if p.get_facecolor() != to_rgba("#eaeef2")]  # not the clip's background
    starts = sorted({round(p.get_x(), 3) for p in bars})
    assert starts == [0.0, pytest.approx(1.0, abs=1e-3)]
    assert figure.axes[0].get_xlim()[1] == pytest.approx((TIMES[-1] + LAST_INTERVAL) * 1.01, abs=1e-2)
