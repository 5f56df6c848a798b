"""Single-video tasks (``caption``, ``qa``): the LMM gets the benchmark's own system prompt and words and the
task's video, over real HTTP; a method that cannot answer a task is refused, naming one that can."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from viddiff.config import Config, ConfigError
from viddiff.methods import check_mode
from viddiff.methods.lmm.baseline import LMMBaseline
from viddiff.methods.viddiff import VidDiffMethod
from viddiff.schema import Sample, VideoRef, VideoTask
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer
from viddiff.video.write import write_video


def _clip(path: Path, value: int, n: int = 12, fps: float = 4.0) -> Path:
    frames = np.full((n, 48, 64, 3), value, np.uint8)
    write_video(path, frames, fps)
    return path


def _task_sample(video: Path, task: VideoTask, other: Path | None = None) -> Sample:
    refs = (VideoRef(path=str(video)),) + ((VideoRef(path=str(other)),) if other else ())
    return Sample(
        sample_key="clip_001/01", action="caption", action_name="caption", action_description="",
        split="test", domain="custom", videos=refs, task=task,
    )


def _run(config: Config, sample: Sample, mode: str):
    async def go():
        method = LMMBaseline(config)
        try:
            return await method.aprocess(sample, mode)
        finally:
            await method.aclose()

    return asyncio.run(go())


def test_a_caption_task_sends_the_benchmarks_words_and_only_its_video(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    video = _clip(tmp_path / "dark.mp4", 40)
    other = _clip(tmp_path / "bright.mp4", 220)
    task = VideoTask(prompt="Describe the video in exactly three bullet points.", system_prompt="You caption videos.")
    sample = _task_sample(video, task, other)

    def responder(req: ChatRequest) -> str:
        return "- dark\n- still\n- short"

    with FakeOpenAIServer(responder) as server:
        config = Config().with_overrides(
            [*offline_overrides(server.base_url, str(tmp_path / "c.sqlite")), "baseline.model=fake-vlm",
             "baseline.max_images=5"]
        )
        result = _run(config, sample, "caption")
        (req,) = server.requests
    assert result.response == "- dark\n- still\n- short" and result.mode == "caption" and result.predictions == []
    assert req.messages[0] == {"role": "system", "content": "You caption videos."}
    assert req.texts[-1] == "Describe the video in exactly three bullet points." and len(req.texts) == 2
    # 12 frames at the default fps thinned to the budget of 5; every one is the task's (dark) video.
    assert 1 <= len(req.images) <= 5
    assert all(float(np.asarray(img.image).mean()) < 100 for img in req.images)
    assert any("frames sent" in note for note in result.notes)


def test_a_task_without_a_system_prompt_sends_no_system_message(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    sample = _task_sample(_clip(tmp_path / "v.mp4", 90), VideoTask(prompt="Is there a dog? Answer yes or no."))
    with FakeOpenAIServer(lambda req: "No.") as server:
        config = Config().with_overrides([*offline_overrides(server.base_url, str(tmp_path / "c.sqlite"))])
        result = _run(config, sample, "qa")
        (req,) = server.requests
    assert result.response == "No." and [m["role"] for m in req.messages] == ["user"]


def test_an_empty_answer_is_invalid_never_an_empty_response(tmp_path: Path, monkeypatch) -> None:
    from viddiff.errors import InvalidAnswerError

    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    sample = _task_sample(_clip(tmp_path / "v.mp4", 90), VideoTask(prompt="Describe the video."))
    with FakeOpenAIServer(lambda req: "   ") as server:
        config = Config().with_overrides([*offline_overrides(server.base_url, str(tmp_path / "c.sqlite"))])
        with pytest.raises(InvalidAnswerError, match="empty text"):
            _run(config, sample, "caption")


def test_one_video_makes_a_sample_only_with_a_task() -> None:
    with pytest.raises(ValidationError, match="compares two videos"):
        Sample(sample_key="x", action="a", action_name="a", action_description="a", split="s", domain="d",
               videos=(VideoRef(path="v.mp4"),))
    with pytest.raises(ValidationError, match="task.video is 1"):
        Sample(sample_key="x", action="a", action_name="a", action_description="a", split="s", domain="d",
               videos=(VideoRef(path="v.mp4"),), task=VideoTask(prompt="q", video=1))


def test_the_viddiff_method_is_refused_for_a_caption_task_naming_the_baseline(tmp_path: Path) -> None:
    config = Config().with_overrides([f"cache.path={tmp_path / 'c.sqlite'}"])
    method = VidDiffMethod(config)
    try:
        with pytest.raises(ConfigError, match=r"method viddiff cannot answer caption mode .*--method baseline can"):
            check_mode(method, "caption")
    finally:
        asyncio.run(method.aclose())
