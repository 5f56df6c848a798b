"""LMM baseline: frames of both videos straight to a multimodal chat model (paper §5 baselines).

Runs on the same data, cache, runner and scorer as the VidDiff method, so
its numbers are directly comparable; a new model is a ``--model`` flag.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Literal, Optional

import numpy as np
from pydantic import BaseModel, Field, RootModel

from viddiff.backends.llm import ChatClient, UsageMeter, system_message, user_message
from viddiff.baselines import prompts
from viddiff.baselines.budget import budget_stride
from viddiff.baselines.video_input import video_part
from viddiff.cache import Cache, open_cache
from viddiff.config import Config, config_from_args
from viddiff.errors import ViddiffError
from viddiff.schema import Mode, Prediction, Sample, SampleResult
from viddiff.video import VideoFrames, read_video_ref

STAGE = "baseline"


class ClosedAnswer(RootModel[dict[str, Literal["a", "b"]]]):
    """``{difference key: "a"|"b"}`` for every statement in the prompt."""


class OpenItem(BaseModel):
    description: str = Field(min_length=1)
    prediction: Literal["a", "b"]


class OpenAnswer(BaseModel):
    differences: list[OpenItem]


class LMMBaseline:
    """Same interface as ``VidDiff`` for the runner: ``load_videos``, ``aprocess``, ``client``, ``aclose``."""

    stages = (STAGE,)

    def __init__(self, config: Config, *, cache: Optional[Cache] = None, client: Optional[ChatClient] = None):
        self.config = config
        self._owns_cache = cache is None and client is None
        self.cache = cache if cache is not None else (open_cache(config.cache) if client is None else None)
        self.client = client or ChatClient(
            config.endpoints, self.cache, cache_nonzero_temperature=config.cache.cache_nonzero_temperature
        )

    async def load_videos(self, sample: Sample) -> tuple[VideoFrames, VideoFrames]:
        data = self.config.data
        fps = data.fps_for(sample.domain)
        return tuple(
            await asyncio.gather(
                *(
                    asyncio.to_thread(read_video_ref, ref, fps, max_side=data.max_side, backend=data.video_backend)
                    for ref in sample.videos
                )
            )
        )

    async def aprocess(
        self,
        sample: Sample,
        mode: Mode,
        *,
        index: int = 0,
        videos: Optional[tuple[VideoFrames, VideoFrames]] = None,
        on_stage=None,
    ) -> SampleResult:
        cfg = self.config.baseline
        videos = videos or await self.load_videos(sample)
        a, b = videos
        stride = budget_stride(len(a.frame_indices), len(b.frame_indices), cfg.max_images)
        frames_a, frames_b = a.frames[::stride], b.frames[::stride]
        fps = a.fps / stride
        notes = [f"sent {len(frames_a)}+{len(frames_b)} frames at {fps:.3g} fps (budget {cfg.max_images})"]
        if abs(a.fps - b.fps) > 1e-6:
            notes.append(f"videos sampled at different fps: A {a.fps:.3g}, B {b.fps:.3g}")
        layout = prompts.video_layout(len(frames_a), len(frames_b), fps, cfg.video_input)
        meter = UsageMeter()
        if mode == "closed":
            diffs = sample.closed_differences()
            if not diffs:
                raise ViddiffError(f"sample {sample.sample_key}: no a/b-labelled differences to ask about")
            statements = {d.key: d.description for d in diffs}
            text = prompts.closed_prompt(sample.action_description, layout, statements)

            def validate(answer: ClosedAnswer) -> None:
                missing = sorted(set(statements) - set(answer.root))
                extra = sorted(set(answer.root) - set(statements))
                if missing or extra:
                    raise ValueError(f"answer ids must be exactly {sorted(statements)}; missing {missing}, unknown {extra}")

            answer = await self.client.complete_json(
                cfg, self._messages(text, frames_a, frames_b, fps), ClosedAnswer, stage=STAGE, validate=validate, meter=meter
            )
            predictions = [
                Prediction(key=d.key, description=d.description, prediction=answer.root[d.key]) for d in diffs
            ]
        else:
            text = prompts.open_prompt(sample.action_description, layout, sample.n_differences_open)
            answer = await self.client.complete_json(
                cfg, self._messages(text, frames_a, frames_b, fps), OpenAnswer, stage=STAGE, meter=meter
            )
            predictions = [
                Prediction(key=str(i), description=item.description.strip(), prediction=item.prediction)
                for i, item in enumerate(answer.differences)
            ]
        if on_stage is not None:
            on_stage(STAGE)
        return SampleResult(
            sample_key=sample.sample_key,
            index=index,
            mode=mode,
            method=f"lmm:{cfg.model}",
            predictions=predictions,
            usage=meter.by_stage(),
            notes=notes,
        )

    def _messages(self, text: str, frames_a: np.ndarray, frames_b: np.ndarray, fps: float) -> list[dict]:
        cfg = self.config.baseline
        if cfg.video_input:
            content = [{"type": "text", "text": text}, video_part(frames_a, fps), video_part(frames_b, fps)]
            return [system_message(prompts.SYSTEM), {"role": "user", "content": content}]
        return [system_message(prompts.SYSTEM), user_message(text, *frames_a, *frames_b, image=cfg.image)]

    async def aclose(self) -> None:
        await self.client.aclose()
        if self._owns_cache and self.cache is not None:
            self.cache.close()


def cli_baseline(args) -> int:
    from viddiff.pipeline import cli_run_method

    cfg = config_from_args(args)
    cfg = cfg.model_copy(update={"baseline": cfg.baseline.model_copy(update={"model": args.model})})
    safe_model = "".join(c if c.isalnum() or c in "-_." else "_" for c in args.model)
    split_name = "-".join(args.split) if args.split else "all"
    default_out = Path(f"runs/baseline-{safe_model}-{split_name}-{args.mode}")
    return cli_run_method(cfg, args, LMMBaseline, default_out)
