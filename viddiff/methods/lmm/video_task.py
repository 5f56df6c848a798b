"""Single-video tasks for an LMM: the benchmark's instruction or question, then the video's frames (or clip).

Captioning benchmarks (``caption`` mode) and question benchmarks (``qa`` mode) define their own wording and
their own system prompt, so nothing of ours is added to the text: the request is the benchmark's system
prompt (if it has one), then one user message with its prompt and the frames of the task's video. The
answer is returned as text, for the benchmark to read and score as it publishes.

``baseline.task_frames`` chooses how the video is shown: frames at the inference fps (default) or exactly
``count`` frames, one image per frame (default) or all of them tiled into one grid image (``layout: grid``,
the VidPair-Halluc release's GPT-4o input). A pair-aware task (``VideoTask.pair_aware``) also shows the other
video of its pair, after the task's own; then, and only then, a short label of ours names each video.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any, Union

import numpy as np
from PIL import Image

from viddiff.backends.chat import ChatModel
from viddiff.backends.llm import UsageMeter, system_message, user_message
from viddiff.config import BaselineConfig, ImageConfig
from viddiff.errors import ConfigError, InvalidAnswerError, ViddiffError
from viddiff.methods.lmm.budget import budget_stride
from viddiff.methods.lmm.grid import frame_grid
from viddiff.methods.lmm.video_input import video_part
from viddiff.schema import Sample, VideoTask
from viddiff.video import VideoFrames

TASK_VIDEO_LABEL = "Video 1 (the video the question or instruction is about):"
OTHER_VIDEO_LABEL = "Video 2 (the other video of the pair, shown only for comparison):"
"""Pair-aware labels, sent before each video's frames (our words)."""


def task_of(sample: Sample) -> VideoTask:
    """The sample's task; a pair sample has none, which is a benchmark/method mismatch worth naming."""
    if sample.task is None:
        raise ViddiffError(f"sample {sample.sample_key} has no instruction or question (Sample.task) to answer")
    return sample.task


def frame_stride(n_frames: int, max_images: int) -> int:
    """Smallest stride that fits ``n_frames`` into ``max_images`` (never fails)."""
    if n_frames < 1:
        raise ValueError("the video has no frames")
    return max(1, math.ceil(n_frames / max(1, max_images)))


def shown_videos(sample: Sample, videos: tuple[VideoFrames, ...]) -> list[VideoFrames]:
    """The videos a request shows, the task's first: the partner too when the task is pair-aware."""
    task = task_of(sample)
    if not task.pair_aware:
        return [videos[task.video]]
    return [videos[task.video], videos[1 - task.video]]


def _grid_image_config(cfg: BaselineConfig) -> ImageConfig:
    """Grids are sent as made (the grid has its own size limit), in ``task_frames.grid_format``."""
    return ImageConfig(max_side=None, format=cfg.task_frames.grid_format, quality=cfg.image.quality, detail=cfg.image.detail)


def task_messages(
    task: VideoTask, shown: list[VideoFrames], stride: int, cfg: BaselineConfig
) -> list[dict[str, Any]]:
    """The benchmark's system prompt (if any), then its prompt and the shown videos; CPU-bound (image encoding)."""
    messages = [system_message(task.system_prompt)] if task.system_prompt else []
    labels = [TASK_VIDEO_LABEL, OTHER_VIDEO_LABEL] if len(shown) > 1 else [None]
    grid = cfg.task_frames.layout == "grid"
    if cfg.video_input:
        if grid:
            raise ConfigError("baseline.video_input sends the clip itself; it cannot be combined with task_frames.layout=grid")
        content: list[dict[str, Any]] = [{"type": "text", "text": task.prompt}]
        for label, frames in zip(labels, shown):
            if label:
                content.append({"type": "text", "text": label})
            content.append(video_part(frames.frames[::stride], frames.fps / stride, cfg.image.max_side))
        return [*messages, {"role": "user", "content": content}]
    parts: list[Union[str, np.ndarray, Image.Image]] = [task.prompt]
    for label, frames in zip(labels, shown):
        if label:
            parts.append(label)
        if grid:
            tf = cfg.task_frames
            parts.append(frame_grid(frames.frames, tf.grid_band_px, tf.grid_max_side))
        else:
            parts.extend(frames.frames[::stride])
    return [*messages, user_message(*parts, image=_grid_image_config(cfg) if grid else cfg.image)]


def _notes(shown: list[VideoFrames], stride: int, max_images: int, cfg: BaselineConfig) -> list[str]:
    counts = [math.ceil(len(f.frames) / stride) for f in shown]
    rates = ", ".join(f"{f.fps / stride:.4g}" for f in shown)
    if cfg.task_frames.layout == "grid":
        notes = [f"frames sent: {' + '.join(map(str, counts))} tiled in {len(shown)} grid image(s) ({rates} fps)"]
    else:
        notes = [f"frames sent: {' + '.join(map(str, counts))} at {rates} fps"]
    if len(shown) > 1:
        notes.append("pair-aware: the other video of the pair was shown after the task's video, labelled as such")
    if stride > 1:
        total = sum(len(f.frames) for f in shown)
        notes.append(f"frame budget: {total} frames exceed baseline.max_images={max_images}; thinned by stride {stride}")
    return notes


async def answer_video_task(
    client: ChatModel,
    cfg: BaselineConfig,
    sample: Sample,
    videos: tuple[VideoFrames, ...],
    max_images: int,
    meter: UsageMeter,
    stage: str,
) -> tuple[str, list[str]]:
    """The model's answer to ``sample.task`` about its video, and notes on what was sent."""
    task = task_of(sample)
    shown = shown_videos(sample, videos)
    grid = cfg.task_frames.layout == "grid" and not cfg.video_input
    if grid:
        stride = 1
    elif len(shown) == 2:
        stride = budget_stride(len(shown[0].frames), len(shown[1].frames), max_images)
    else:
        stride = frame_stride(len(shown[0].frames), max_images)
    notes = _notes(shown, stride, max_images, cfg)
    messages = await asyncio.to_thread(task_messages, task, shown, stride, cfg)
    answer = await client.complete_text(cfg, messages, stage=stage, meter=meter)
    if not answer.strip():
        raise InvalidAnswerError(f"{cfg.model} ({stage}) answered with empty text", raw=answer)
    return answer.strip(), notes
