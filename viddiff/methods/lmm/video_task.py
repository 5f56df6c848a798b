"""Single-video tasks for an LMM: the benchmark's instruction or question, then the video's frames (or clip).

Captioning benchmarks (``caption`` mode) and question benchmarks (``qa`` mode) define their own wording and
their own system prompt, so nothing of ours is added to the text: the request is the benchmark's system
prompt (if it has one), then one user message with its prompt and the frames of the task's video. The
answer is returned as text, for the benchmark to read and score as it publishes.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

from viddiff.backends.chat import ChatModel
from viddiff.backends.llm import UsageMeter, system_message, user_message
from viddiff.config import BaselineConfig
from viddiff.errors import InvalidAnswerError, ViddiffError
from viddiff.methods.lmm.video_input import video_part
from viddiff.schema import Sample, VideoTask
from viddiff.video import VideoFrames


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


def task_messages(task: VideoTask, frames: VideoFrames, stride: int, cfg: BaselineConfig) -> list[dict[str, Any]]:
    """The benchmark's system prompt (if any), then its prompt and the frames; CPU-bound (image encoding)."""
    sent = frames.frames[::stride]
    messages = [system_message(task.system_prompt)] if task.system_prompt else []
    if cfg.video_input:
        content = [{"type": "text", "text": task.prompt}, video_part(sent, frames.fps / stride, cfg.image.max_side)]
        return [*messages, {"role": "user", "content": content}]
    return [*messages, user_message(task.prompt, *sent, image=cfg.image)]


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
    frames = videos[task.video]
    stride = frame_stride(len(frames.frames), max_images)
    notes = [f"frames sent: {math.ceil(len(frames.frames) / stride)} at {frames.fps / stride:.4g} fps"]
    if stride > 1:
        notes.append(
            f"frame budget: {len(frames.frames)} frames at {frames.fps:.4g} fps exceed baseline.max_images={max_images}; "
            f"thinned by stride {stride}"
        )
    messages = await asyncio.to_thread(task_messages, task, frames, stride, cfg)
    answer = await client.complete_text(cfg, messages, stage=stage, meter=meter)
    if not answer.strip():
        raise InvalidAnswerError(f"{cfg.model} ({stage}) answered with empty text", raw=answer)
    return answer.strip(), notes
