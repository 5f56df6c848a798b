"""A method plug-in in one file: answers closed mode from image brightness, with no model calls.

For each statement it compares the mean brightness of the two videos' middle frames and says ``a`` when
A is brighter, ``b`` when B is, ``c`` when they are within 1 grey level: meaningless as video
differencing, but exactly what ``viddiff audit`` should find perfectly consistent (its answers follow the
videos, so they flip when the videos swap and are ``c`` on identical videos). It is a
:class:`viddiff.methods.Method`: ``viddiff.runs.pipeline.run_benchmark(cfg, method=BrightnessMethod, ...)``
runs it with resume, failure isolation, the predictions file and scoring, and once registered
(``viddiff.methods.register_method("brightness", BrightnessMethod)``, or an entry point
``brightness = toy_method:BrightnessMethod`` in the group ``viddiff.methods``) so do
``viddiff audit --method brightness`` and any command taking ``--method``.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from viddiff.backends.llm import ChatClient
from viddiff.backends.usage import UsageMeter
from viddiff.cache import Cache, open_cache
from viddiff.config import Config, ModelCallConfig
from viddiff.schema import Mode, Prediction, Sample, SampleResult
from viddiff.video import VideoFrames, read_pair

STAGE = "brightness"


class BrightnessMethod:
    name = "brightness"
    stages = (STAGE,)
    modes = ("closed",)

    def __init__(self, config: Config, *, cache: Optional[Cache] = None):
        self.config = config
        self._own_cache = cache is None
        self.cache = open_cache(config.cache) if cache is None else cache
        # No model of its own; the client is what a benchmark's judge borrows when the run is scored.
        self.client = ChatClient(config.endpoints, self.cache)

    def model_calls(self) -> dict[str, ModelCallConfig]:
        return {}

    async def load_videos(self, sample: Sample) -> tuple[VideoFrames, VideoFrames]:
        data = self.config.data
        return await read_pair(sample.videos, data.fps_for(sample.domain), data.max_side, data.video_backend)

    async def aprocess(
        self,
        sample: Sample,
        mode: Mode,
        *,
        index: int = 0,
        videos: Optional[tuple[VideoFrames, VideoFrames]] = None,
        on_stage: Optional[Callable[[str], Any]] = None,
        meter: Optional[UsageMeter] = None,
    ) -> SampleResult:
        statements = sample.closed_differences() if sample.labels else list(sample.differences.values())
        if not statements:  # a pair with nothing labelled a/b: an empty answer, counted nothing
            return SampleResult(sample_key=sample.sample_key, index=index, mode=mode, method=self.name)
        a, b = videos or await self.load_videos(sample)
        gap = float(a.frames[len(a.frames) // 2].mean()) - float(b.frames[len(b.frames) // 2].mean())
        letter = "c" if abs(gap) < 1 else ("a" if gap > 0 else "b")
        predictions = [
            Prediction(key=d.key, description=d.description, prediction=letter, rationale=f"brightness A-B {gap:+.1f}")
            for d in statements
        ]
        if on_stage is not None:
            on_stage(STAGE)
        return SampleResult(
            sample_key=sample.sample_key, index=index, mode=mode, method=self.name, predictions=predictions
        )

    def clip_stats(self) -> None:
        return None

    async def aclose(self) -> None:
        await self.client.aclose()
        if self._own_cache and self.cache is not None:
            self.cache.close()
