"""LMM baseline: frames of both videos straight to a multimodal chat model (paper §5 baselines).

Runs on the same data, cache, runner and scorer as the VidDiff method, so
its numbers are directly comparable; a new model is a ``--model`` flag. The
same model answers single-video tasks (``caption``, ``qa``: see ``video_task.py``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from viddiff.backends.chat import ChatModel
from viddiff.backends.llm import ChatClient, UsageMeter, system_message, user_message
from viddiff.methods.lmm import prompts
from viddiff.methods.lmm.answers import OpenAnswer, closed_answer_model, closed_letters
from viddiff.methods.lmm.budget import budget_stride, default_max_images
from viddiff.methods.lmm.video_input import video_part
from viddiff.methods.lmm.video_task import answer_video_task
from viddiff.cache import Cache, open_cache
from viddiff.config import BaselineConfig, Config, ModelCallConfig
from viddiff.errors import InvalidAnswerError
from viddiff.schema import VIDEO_TASK_MODES, Mode, Prediction, Sample, SampleResult
from viddiff.differencer.statements import statement_text
from viddiff.video import VideoFrames, read_videos

STAGE = "baseline"


def resolve_config(config: Config, model: Optional[str] = None) -> Config:
    """``config`` with ``baseline.model`` set (when given) and ``baseline.max_images`` made explicit,
    so the results' ``config.yaml`` records the budget actually used."""
    base = config.baseline.model_copy(update={"model": model or config.baseline.model})
    return config.model_copy(update={"baseline": base.model_copy(update={"max_images": effective_max_images(base)})})


def effective_max_images(base: BaselineConfig) -> int:
    """``baseline.max_images``, or the model's known limit when it is unset."""
    return base.max_images or default_max_images(base.model)


@dataclass(frozen=True)
class SentFrames:
    """The frames of A and B that go into one request, after the frame budget."""

    a: np.ndarray
    b: np.ndarray
    fps_a: float
    fps_b: float
    stride: int
    """Extra stride applied on top of the domain fps (1 = within budget)."""


def fit_budget(a: VideoFrames, b: VideoFrames, max_images: int) -> SentFrames:
    """Subsample both videos by the same stride so that A+B fit ``max_images`` (never fails)."""
    stride = budget_stride(len(a.frames), len(b.frames), max_images)
    return SentFrames(
        a=a.frames[::stride], b=b.frames[::stride], fps_a=a.fps / stride, fps_b=b.fps / stride, stride=stride
    )


def frame_notes(a: VideoFrames, b: VideoFrames, sent: SentFrames, max_images: int) -> list[str]:
    """What was sent, in ``samples.jsonl``: frame counts, effective fps, and any budget downsampling."""
    notes = [
        f"frames sent: A {len(sent.a)}, B {len(sent.b)}; effective fps A {sent.fps_a:.4g}, B {sent.fps_b:.4g}"
    ]
    if sent.stride > 1:
        notes.append(
            f"frame budget: {len(a.frames)}+{len(b.frames)} frames at {a.fps:.4g}/{b.fps:.4g} fps exceed "
            f"baseline.max_images={max_images}; "
            f"both videos thinned by stride {sent.stride} (1 frame in {sent.stride} kept)"
        )
    if abs(a.fps - b.fps) > 1e-9:
        notes.append(f"videos sampled at different fps: A {a.fps:.4g}, B {b.fps:.4g} (integer source strides)")
    return notes


class LMMBaseline:
    """An LMM as a :class:`viddiff.methods.Method` (``baseline``): ``run_benchmark`` drives it like VidDiff."""

    stages = (STAGE,)
    modes = ("closed", "open", "describe", "caption", "qa")

    def __init__(self, config: Config, *, cache: Optional[Cache] = None, client: Optional[ChatModel] = None):
        self.config = resolve_config(config)
        self.max_images = effective_max_images(self.config.baseline)
        self.name = f"lmm:{self.config.baseline.model}"
        self._owns_cache = cache is None and client is None
        self.cache = cache if cache is not None else (open_cache(self.config.cache) if client is None else None)
        self.client = client or ChatClient(
            self.config.endpoints, self.cache, cache_nonzero_temperature=self.config.cache.cache_nonzero_temperature
        )

    async def load_videos(self, sample: Sample) -> tuple[VideoFrames, ...]:
        """The sample's videos (both of a pair) at the baselines' own inference fps (``baseline.fps_by_domain``; released: fitness 4,
        ballsports 5, diving 6, music 1, surgery 1), else the task's own rate (``VideoTask.fps``), else ``data.default_fps``.

        Frames are decoded no larger than they will be sent (``baseline.image.max_side``),
        which bounds memory when up to ``max_images`` frames per sample are held. A single-video task follows
        ``baseline.task_frames``: exactly ``count`` frames when set, and for a grid layout frames up to
        ``data.max_side`` (the grid, not each frame, is then shrunk to ``grid_max_side``).
        """
        data = self.config.data
        task_fps = sample.task.fps if sample.task is not None else None
        fps = self.config.baseline.fps_by_domain.get(sample.domain, task_fps or data.default_fps)
        task_frames = self.config.baseline.task_frames if sample.task is not None else None
        per_image = None if task_frames and task_frames.layout == "grid" else self.config.baseline.image.max_side
        sides = [s for s in (data.max_side, per_image) if s is not None]
        max_side = min(sides) if sides else None
        count = task_frames.count if task_frames else None
        return await read_videos(sample.videos, fps, max_side, data.video_backend, count=count)

    async def aprocess(
        self,
        sample: Sample,
        mode: Mode,
        *,
        index: int = 0,
        videos: Optional[tuple[VideoFrames, ...]] = None,
        on_stage: Optional[Callable[[str], Any]] = None,
        meter: Optional[UsageMeter] = None,
    ) -> SampleResult:
        """One request with the sampled frames of A then B.

        Closed: a letter per statement. Open: statements with letters, as many as the model gives.
        Describe: free text on similarities and differences along the seven dimensions.
        Caption / qa: the benchmark's prompt and the task's video, answered in free text.
        ``meter`` collects the sample's model calls (also when it fails part-way).
        """
        cfg = self.config.baseline
        meter = meter if meter is not None else UsageMeter()
        if mode in VIDEO_TASK_MODES:
            return await self._video_task(sample, mode, index, videos, on_stage, meter)
        if mode == "closed" and sample.labels and not sample.closed_differences():
            return SampleResult(
                sample_key=sample.sample_key, index=index, mode=mode, method=self.name,
                notes=["no a/b-labelled differences: nothing to ask"],
            )
        a, b = videos or await self.load_videos(sample)
        sent = fit_budget(a, b, self.max_images)
        notes = frame_notes(a, b, sent, self.max_images)
        make_layout = prompts.release_layout if self._as_released and mode != "describe" else prompts.video_layout
        layout = make_layout(len(sent.a), len(sent.b), sent.fps_a, sent.fps_b, cfg.video_input)
        predictions: list[Prediction] = []
        description = None
        if mode == "closed":
            predictions = await self._closed(sample, layout, sent, meter, notes)
        elif mode == "open":
            predictions = await self._open(sample, layout, sent, meter, notes)
        else:
            description = await self._describe(sample, layout, sent, meter)
        if on_stage is not None:
            on_stage(STAGE)
        return SampleResult(
            sample_key=sample.sample_key,
            index=index,
            mode=mode,
            method=self.name,
            predictions=predictions,
            usage=meter.by_stage(),
            notes=notes,
            description=description,
        )

    async def _video_task(
        self,
        sample: Sample,
        mode: Mode,
        index: int,
        videos: Optional[tuple[VideoFrames, ...]],
        on_stage: Optional[Callable[[str], Any]],
        meter: UsageMeter,
    ) -> SampleResult:
        videos = videos or await self.load_videos(sample)
        response, notes = await answer_video_task(
            self.client, self.config.baseline, sample, videos, self.max_images, meter, STAGE
        )
        if on_stage is not None:
            on_stage(STAGE)
        return SampleResult(
            sample_key=sample.sample_key, index=index, mode=mode, method=self.name, usage=meter.by_stage(),
            notes=notes, response=response,
        )

    async def _closed(
        self, sample: Sample, layout: str, sent: SentFrames, meter: UsageMeter, notes: list[str]
    ) -> list[Prediction]:
        # Benchmark samples: the task input is the a/b-labelled differences only, labels never shown.
        # Unlabelled user input (API): every given difference.
        diffs = sample.closed_differences() if sample.labels else list(sample.differences.values())
        if not diffs:
            notes.append("no differences: nothing to ask")
            return []
        statements = {d.key: statement_text(d, self.config.baseline.statement) for d in diffs}
        make_prompt = prompts.release_closed_prompt if self._as_released else prompts.closed_prompt
        text = make_prompt(sample.action_description, layout, statements)
        schema = closed_answer_model(list(statements))
        messages = await asyncio.to_thread(self._messages, text, sent)
        answer = await self.client.complete_json(self.config.baseline, messages, schema, stage=STAGE, meter=meter)
        letters = closed_letters(answer)
        return [Prediction(key=d.key, description=d.description, prediction=letters[d.key]) for d in diffs]

    async def _open(
        self, sample: Sample, layout: str, sent: SentFrames, meter: UsageMeter, notes: list[str]
    ) -> list[Prediction]:
        if sample.n_differences_open < 1:
            notes.append("N_diff is 0: nothing to ask")
            return []
        make_prompt = prompts.release_open_prompt if self._as_released else prompts.open_prompt
        text = make_prompt(sample.action_description, layout, sample.n_differences_open)
        messages = await asyncio.to_thread(self._messages, text, sent)
        answer = await self.client.complete_json(self.config.baseline, messages, OpenAnswer, stage=STAGE, meter=meter)
        return [
            Prediction(key=str(i), description=item.description, prediction=item.prediction)
            for i, item in enumerate(answer.differences)
        ]

    async def _describe(self, sample: Sample, layout: str, sent: SentFrames, meter: UsageMeter) -> str:
        text = prompts.describe_prompt(sample.action_description, layout)
        messages = await asyncio.to_thread(self._messages, text, sent, True)
        answer = await self.client.complete_text(self.config.baseline, messages, stage=STAGE, meter=meter)
        if not answer.strip():
            raise InvalidAnswerError(f"{self.config.baseline.model} ({STAGE}) answered with empty text", raw=answer)
        return answer.strip()

    @property
    def _as_released(self) -> bool:
        return self.config.baseline.prompt_style == "release"

    def _messages(self, text: str, sent: SentFrames, describe: bool = False) -> list[dict[str, Any]]:
        """System + user message: the prompt, then A's label and frames (or clip), then B's. As released
        (``baseline.prompt_style=release``; describe mode is this project's own): no system message, no labels.
        CPU-bound (JPEG/H.264 encoding), so callers run it in a worker thread."""
        cfg = self.config.baseline
        released = self._as_released and not describe
        head = [] if released else [system_message(prompts.SYSTEM_DESCRIBE if describe else prompts.SYSTEM)]
        label_a = [] if released else [prompts.video_label("A", len(sent.a), sent.fps_a)]
        label_b = [] if released else [prompts.video_label("B", len(sent.b), sent.fps_b)]
        if cfg.video_input:
            content = [
                {"type": "text", "text": text},
                *({"type": "text", "text": label} for label in label_a),
                video_part(sent.a, sent.fps_a, cfg.image.max_side),
                *({"type": "text", "text": label} for label in label_b),
                video_part(sent.b, sent.fps_b, cfg.image.max_side),
            ]
            return [*head, {"role": "user", "content": content}]
        return [*head, user_message(text, *label_a, *sent.a, *label_b, *sent.b, image=cfg.image)]

    def model_calls(self) -> dict[str, ModelCallConfig]:
        return {STAGE: self.config.baseline}

    def clip_stats(self) -> None:
        return None

    async def aclose(self) -> None:
        await self.client.aclose()
        if self._owns_cache and self.cache is not None:
            self.cache.close()
