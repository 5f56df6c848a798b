"""Write report pages: one comparison (``viddiff compare --report``) or a whole run (``viddiff run --report``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Optional, Protocol, Sequence

from viddiff.config import Config, ModelCallConfig
from viddiff.report.build import PageContext, build_page
from viddiff.report.render import write_page
from viddiff.report.standins import clip_stand_in, endpoint_stand_ins, localised_with_clip, model_entries, model_roles
from viddiff.schema import Sample, SampleResult
from viddiff.video import VideoFrames


class ProcessedPair(Protocol):
    """One processed pair: the sample, its frames as the method read them, the result
    (``viddiff.methods.viddiff.PairRun``, what ``VidDiffMethod.arun_pair`` returns)."""

    sample: Sample
    videos: tuple[VideoFrames, VideoFrames]
    result: SampleResult


def page_context(
    cfg: Config,
    page_dir: Path,
    *,
    judges: Sequence[tuple[str, ModelCallConfig]] = (),
    method_calls: Optional[Sequence[tuple[str, ModelCallConfig]]] = None,
    clip_used: bool = True,
    embed_videos: bool = False,
) -> PageContext:
    """Models (the method's ``method_calls``, VidDiff's by default, then the scoring ``judges``), stand-in
    checks (one probe per local endpoint) and settings shared by a report's pages. ``clip_used``: CLIP
    localised something in the results shown (else it is neither listed nor flagged)."""
    from viddiff import __version__

    roles = model_roles(cfg, judges, method_calls)
    environ = dict(os.environ)
    return PageContext(
        cfg=cfg,
        page_dir=Path(page_dir),
        models=model_entries(cfg, roles, environ, clip_used=clip_used),
        endpoint_stand_ins=endpoint_stand_ins(cfg, roles, environ),
        clip_stand_in=clip_stand_in(cfg) if clip_used else None,
        embed_videos=embed_videos,
        version=__version__,
    )


def write_comparison_report(
    path: Path, run: ProcessedPair, cfg: Config, *, embed_videos: bool = False,
    video_names: Optional[tuple[str, str]] = None, file_names: Optional[Mapping[str, str]] = None,
) -> Path:
    """The HTML page of one comparison, at ``path`` (videos linked relative to it, or embedded).
    ``video_names``: how to name videos A and B (a service names the user's uploads, not its stored files);
    ``file_names``: the same for other views and calibrations, by path."""
    path = Path(path)
    clip_used = localised_with_clip(cfg, [run.result])
    ctx = page_context(cfg, path.parent, clip_used=clip_used, embed_videos=embed_videos)
    return write_page(path, build_page(run.sample, run.result, run.videos, ctx, video_names=video_names,
                                       file_names=file_names))
