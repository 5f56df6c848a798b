"""Find missing or unreadable videos before a run (``viddiff data check``), each with how to get it.

Benchmark videos come from several owners (design.md §5), so a missing file is the most likely first
failure; this reports every one with its expected path and the way to obtain it (which the benchmark
plug-in knows), instead of failing mid-run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Literal, Optional

from pydantic import BaseModel

from viddiff.data.dataset import Dataset
from viddiff.errors import CameraSetupError, VideoError
from viddiff.pose.performance_input import calibrated_cameras
from viddiff.schema import Sample, VideoRef
from viddiff.console import count_of

_PROGRESS_MIN_VIDEOS = 50


class VideoProblem(BaseModel):
    """One video of one sample that cannot be used, and what to do about it."""

    sample_key: str
    video: Literal["A", "B"]
    path: str
    problem: str
    advice: str


def _problem(ref: VideoRef, backend: str) -> Optional[str]:
    """Why a video cannot be read as referenced, or None when it can."""
    from viddiff.video import probe_video

    if not Path(ref.path).exists():
        return "missing"
    try:
        info = probe_video(ref.path, fps_original=ref.fps_original, backend=backend)
    except VideoError as exc:
        return f"unreadable ({exc})"
    start, end = ref.frames_trim or (None, None)
    if (start is not None and start >= info.n_frames) or (end is not None and end > info.n_frames):
        return f"frames_trim [{start}, {end}) does not fit the video's {count_of(info.n_frames, 'frame')}"
    return None


def check_dataset(dataset: Dataset, advice: Callable[[Sample], str], backend: str = "auto") -> list[VideoProblem]:
    """Probe every video of ``dataset`` once; report each (sample, video) that cannot be used, with
    ``advice(sample)`` saying how to obtain it."""
    from tqdm import tqdm

    refs = {_key(ref): ref for sample in dataset for side in sample.videos for ref in (side, *side.views)}
    # disable=None: no bar when stderr is not a terminal (no cursor codes in logs)
    bar = tqdm(refs.items(), desc="checking videos", unit="video", disable=True if len(refs) < _PROGRESS_MIN_VIDEOS else None)
    verdicts = {key: _problem(ref, backend) for key, ref in bar}
    setups = {
        _setup_key(side): _setup_problem(side) for sample in dataset for side in sample.videos if side.views
    }
    problems = []
    for sample in dataset:
        for name, side in zip(("A", "B"), sample.videos):
            found = [(ref.path, verdicts[_key(ref)]) for ref in (side, *side.views)]
            if side.views:
                found.append((str(side.calibration), setups[_setup_key(side)]))
            problems += [
                VideoProblem(sample_key=sample.sample_key, video=name, path=path, problem=problem, advice=advice(sample))
                for path, problem in found
                if problem is not None
            ]
    return problems


def _key(ref: VideoRef) -> tuple:
    return ref.path, ref.fps_original, ref.frames_trim


def _setup_key(side: VideoRef) -> tuple:
    return side.calibration, len(side.views)


def _setup_problem(side: VideoRef) -> Optional[str]:
    """Why the calibration of a performance filmed by several cameras cannot be used, or None when it can."""
    try:
        calibrated_cameras(side, "the calibration")
    except CameraSetupError as exc:
        return str(exc)
    return None
