"""``viddiff data check``: find missing or unreadable videos before a run, and say how to get them.

VidDiffBench videos come from several owners (design.md §5), so a missing
file is the most likely first failure; this reports every one with its
expected path and the way to obtain it, instead of failing mid-run.
ViDiC-1K videos come from its HF dataset repo (downloaded at run time,
never shipped); for it the command also says how many pairs overlap
VidDiffBench.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Literal, Optional

from pydantic import BaseModel

from viddiff.config import DataConfig, VidicConfig
from viddiff.data.sources import check_advice
from viddiff.data.viddiffbench import Dataset
from viddiff.errors import VideoError
from viddiff.schema import Sample, VideoRef

_PROGRESS_MIN_VIDEOS = 50


class VideoProblem(BaseModel):
    """One video of one sample that cannot be used, and what to do about it."""

    sample_key: str
    video: Literal["A", "B"]
    path: str
    problem: str
    advice: str


def advice_for(sample: Sample, hf_repo: str, root: Path) -> str:
    """Where a sample's videos come from: the HF zips, their licensed owners, or the synthetic generator."""
    if sample.domain == "vidic":
        return _vidic_advice(sample, hf_repo, root)
    if sample.source_dataset == "synthetic":
        return f"re-generate the synthetic benchmark with `viddiff data synth --out {root}`"
    advice = check_advice(sample.domain, hf_repo, root)
    if advice is not None:
        return advice
    return "place the video at the path shown, or set data.video_root to the directory that holds the videos"


def _vidic_advice(sample: Sample, hf_repo: str, root: Path) -> str:
    if sample.source_dataset == "synthetic":
        return f"re-generate the synthetic ViDiC benchmark with `viddiff data synth --benchmark vidic --out {root}`"
    return (
        f"ViDiC-1K videos are in the Hugging Face dataset repo {hf_repo} (licence CC-BY-NC-SA-4.0: downloaded at "
        "run time, never shipped with viddiff): run with --dataset hf to download the checklist and the videos it "
        f"needs, or download the repo with `hf download {hf_repo} --repo-type dataset --local-dir DIR` and pass "
        "--set data.video_root=DIR (checklist video paths are relative to the repo root)"
    )


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
        return f"frames_trim [{start}, {end}) does not fit the video's {info.n_frames} frames"
    return None


def check_dataset(
    dataset: Dataset, backend: str = "auto", hf_repo: Optional[str] = None
) -> list[VideoProblem]:
    """Probe every video of ``dataset`` once; report each (sample, video) that cannot be used.

    ``hf_repo`` names the repo in the advice for HF-hosted videos (default:
    the config default of the dataset's benchmark).
    """
    from tqdm import tqdm

    repo = hf_repo or (VidicConfig().hf_repo if dataset.benchmark == "vidic" else DataConfig().hf_repo)
    refs = {(ref.path, ref.fps_original, ref.frames_trim): ref for sample in dataset for ref in sample.videos}
    # disable=None: no bar when stderr is not a terminal (no cursor codes in logs)
    bar = tqdm(refs.items(), desc="checking videos", unit="video", disable=True if len(refs) < _PROGRESS_MIN_VIDEOS else None)
    verdicts = {key: _problem(ref, backend) for key, ref in bar}
    problems = []
    for sample in dataset:
        for name, ref in zip(("A", "B"), sample.videos):
            problem = verdicts[(ref.path, ref.fps_original, ref.frames_trim)]
            if problem is not None:
                advice = advice_for(sample, repo, dataset.root)
                problems.append(VideoProblem(sample_key=sample.sample_key, video=name, path=ref.path, problem=problem, advice=advice))
    return problems


def cli_check(args: argparse.Namespace) -> int:
    """``viddiff data check``: exit 1 and list every problem, or confirm all videos are readable."""
    from viddiff.config import config_from_args
    from viddiff.data import load_benchmark

    cfg = config_from_args(args)
    dataset = load_benchmark(cfg, args.split)
    vidic = cfg.data.benchmark == "vidic"
    problems = check_dataset(
        dataset, backend=cfg.data.video_backend, hf_repo=cfg.vidic.hf_repo if vidic else cfg.data.hf_repo
    )
    for p in problems:
        print(f"{p.sample_key} video {p.video}: {p.problem}: {p.path} -> {p.advice}")
    if vidic:
        from viddiff.data.vidic import overlap_with_viddiffbench

        overlap = overlap_with_viddiffbench(dataset)
        listing = f": {', '.join(overlap)}" if overlap else ""
        print(f"{len(overlap)} of {len(dataset)} pairs overlap VidDiffBench{listing}")
    n_videos = len({ref.path for sample in dataset for ref in sample.videos})
    if problems:
        print(f"{len({p.path for p in problems})} of {n_videos} videos cannot be used")
        return 1
    print(f"all {n_videos} videos readable")
    return 0
