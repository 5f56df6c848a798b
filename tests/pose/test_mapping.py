"""The mapping call over real HTTP: one structured, validated, cached request per sample."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Optional

import pytest

from viddiff.backends.llm import ChatClient
from viddiff.cache import Cache
from viddiff.config import EndpointConfig, EndpointsConfig, ModelCallConfig
from viddiff.pose.mapping import map_differences
from viddiff.schema import Difference, MeasurementSpec, Stage
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel

STAGES = [Stage(name=n, description=f"the {n}", retrieval_strings=["A photo of a person"]) for n in ("setup", "descent", "ascent")]


def diffs(*texts: str) -> list[Difference]:
    return [Difference(key=str(i), name=t, description=t) for i, t in enumerate(texts)]


def client(server: FakeOpenAIServer, cache=None) -> ChatClient:
    endpoints = EndpointsConfig(default=EndpointConfig(base_url=server.base_url), backoff_base_s=0.01)
    return ChatClient(endpoints, cache)


CALL = ModelCallConfig(model="gpt-4o-mini-2024-07-18", temperature=0.0)


def mapped(chat: ChatClient, action: str, differences: list[Difference]) -> dict[str, Optional[MeasurementSpec]]:
    """``map_differences`` on a loop of its own, hanging up before the loop ends (as the method does)."""

    async def run() -> dict[str, Optional[MeasurementSpec]]:
        try:
            return await map_differences(chat, CALL, action, STAGES, differences)
        finally:
            await chat.aclose()

    return asyncio.run(run())


def test_maps_statements_to_measurements_or_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    statements = diffs("the squat is deeper", "the person is slower in the descent", "the shirt is red", "the left knee is straighter")
    with FakeOpenAIServer(ScriptedModel()) as server, Cache(tmp_path / "c.sqlite") as cache:
        specs = mapped(client(server, cache), "squat", statements)
        again = mapped(client(server, cache), "squat", statements)
        assert len(server.requests) == 1  # one call for all differences, then from the cache
        request = server.requests[0]
    assert specs == again
    assert specs["0"] == MeasurementSpec(quantity="knee_angle", side="both", statistic="min", direction="smaller")
    assert specs["1"] == MeasurementSpec(quantity="duration", stage=1, direction="greater")  # "descent" is stage 2 → index 1
    assert specs["2"] is None
    assert specs["3"].side == "left" and specs["3"].quantity == "knee_angle"
    assert request.response_format["json_schema"]["name"] == "PoseMeasurementsAnswer"
    assert list(request.json_schema["properties"]) == ["differences"]  # the answer model's schema was sent
    assert "2. descent: the descent" in request.text and "1: the person is slower in the descent" in request.text
    assert all(q in request.text for q in ('"knee_angle"', '"duration"', '"stance_width"'))


def test_invalid_answers_are_asked_again_never_guessed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    answers = iter([
        {"differences": [{"id": "0", "measurable": True, "quantity": "knee_angle", "direction": "smaller", "stage": 7}]},
        {"differences": [{"id": "0", "measurable": True, "quantity": "speed", "direction": "greater"}]},
        {"differences": [{"id": "0", "measurable": True, "quantity": "speed", "body_part": "wrist", "side": "right",
                          "statistic": "max", "direction": "greater", "stage": 3}]},
    ])
    with FakeOpenAIServer(lambda req: json.dumps(next(answers))) as server:
        specs = mapped(client(server), "golf swing", diffs("the hands are faster"))
        texts = [r.text for r in server.requests]
    assert len(texts) == 3
    assert "stage 7 is not between 1 and 3" in texts[1] and '"speed" needs a body_part' in texts[2]
    assert specs["0"] == MeasurementSpec(quantity="speed", side="right", body_part="wrist", statistic="max", stage=2, direction="greater")


def test_fields_a_quantity_ignores_are_normalised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    answer = {"differences": [
        {"id": "0", "measurable": True, "quantity": "trunk_lean", "side": "left", "body_part": "knee", "statistic": "mean", "direction": "greater"},
        {"id": "1", "measurable": True, "quantity": "elbow_angle", "side": "none", "statistic": "max", "direction": "greater"},
    ]}
    with FakeOpenAIServer(lambda req: json.dumps(answer)) as server:
        specs = mapped(client(server), "row", diffs("leans more", "arms straighter"))
    assert specs["0"].side == "none" and specs["0"].body_part is None
    assert specs["1"].side == "both"
