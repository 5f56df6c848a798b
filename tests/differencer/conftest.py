"""Fixtures for differencer tests: a fake VLM server behind the real openai client."""

from __future__ import annotations

import asyncio
from typing import Callable, Iterator, Optional, Sequence, Union

import numpy as np
import pytest

from viddiff.backends.llm import ChatClient
from viddiff.cache import Cache
from viddiff.config import DifferencerConfig, EndpointConfig, EndpointsConfig
from viddiff.differencer import Differencer
from viddiff.schema import Difference, Prediction
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer, Reply

Responder = Callable[[ChatRequest], Union[str, Reply]]
DIFFERENCE = Difference(key="3", name="depth", description="the squat is deeper", query_string="the hips go lower")


class Harness:
    """A fake VLM server plus a way to run :meth:`Differencer.judge` against it."""

    def __init__(self, server: FakeOpenAIServer):
        self.server = server

    def answer(self, responder: Responder) -> None:
        self.server.responder = responder

    def judge(
        self,
        frames_a: Optional[Sequence[np.ndarray]] = None,
        frames_b: Optional[Sequence[np.ndarray]] = None,
        *,
        cfg: Optional[DifferencerConfig] = None,
        seconds_between_frames: Optional[float] = None,
        difference: Difference = DIFFERENCE,
        cache: Optional[Cache] = None,
        action: str = "barbell squat",
        endpoints: Optional[dict] = None,
    ) -> Prediction:
        """``endpoints``: settings of ``EndpointsConfig`` besides the fake server (``max_reasks``, ...)."""
        endpoints = EndpointsConfig(
            default=EndpointConfig(base_url=self.server.base_url, api_key_env="VIDDIFF_TEST_KEY"),
            backoff_base_s=0.01,
            **(endpoints or {}),
        )
        client = ChatClient(endpoints, cache=cache)
        differencer = Differencer(client, cfg or DifferencerConfig(model="fake-vlm"))
        frames_a = [np.full((16, 16, 3), 200, np.uint8)] if frames_a is None else list(frames_a)
        frames_b = [np.full((16, 16, 3), 50, np.uint8)] if frames_b is None else list(frames_b)

        async def main() -> Prediction:
            try:
                return await differencer.judge(
                    action, difference, frames_a, frames_b, seconds_between_frames=seconds_between_frames
                )
            finally:
                await client.aclose()

        return asyncio.run(main())

    @property
    def requests(self) -> list[ChatRequest]:
        return self.server.requests


@pytest.fixture
def vlm(monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    monkeypatch.setenv("VIDDIFF_TEST_KEY", "dummy")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with FakeOpenAIServer() as server:
        yield Harness(server)
    assert not server.responder_errors, server.responder_errors
