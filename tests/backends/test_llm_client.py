"""ChatClient through the real openai SDK against the fake server: requests, JSON, re-asks, usage, concurrency."""

from __future__ import annotations

import asyncio
import json
import logging

import numpy as np
import pytest
from PIL import Image
from pydantic import BaseModel

from viddiff.backends.llm import (
    ChatClient,
    ImageEncodingError,
    UsageMeter,
    encode_image,
    system_message,
    user_message,
)
from viddiff.config import EndpointConfig, EndpointsConfig, ImageConfig, ModelCallConfig, ModelPrice
from viddiff.errors import InvalidAnswerError
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer, FaultPlan, Reply


class Answer(BaseModel):
    answer: str
    confidence: int


def _endpoints(server: FakeOpenAIServer, **kw: object) -> EndpointsConfig:
    opts = {"backoff_base_s": 0.01, "backoff_max_s": 0.05, "max_retries": 3, "timeout_s": 5.0}
    opts.update(kw)
    return EndpointsConfig(default=EndpointConfig(base_url=server.base_url), **opts)


CALL = ModelCallConfig(model="fake-model")


def _frame(h: int, w: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 255, size=(h, w, 3), dtype=np.uint8)


def test_text_request_is_well_formed_and_answered() -> None:
    with FakeOpenAIServer(lambda req: f"echo:{req.texts[-1]}") as server:
        client = ChatClient(_endpoints(server))
        out = client.complete_text_sync(CALL, [system_message("be brief"), user_message("hello")])
    assert out == "echo:hello"
    (req,) = server.requests
    assert req.model == "fake-model"
    assert req.texts == ["be brief", "hello"]
    assert req.api_key == "sk-test-dummy"
    assert req.body["temperature"] == 0.0 and req.body["seed"] == 0
    assert "response_format" not in req.body


@pytest.mark.parametrize("fmt, mime", [("jpeg", "image/jpeg"), ("png", "image/png")])
def test_images_arrive_decodable_in_order_with_mime_and_resize(fmt: str, mime: str) -> None:
    cfg = ImageConfig(format=fmt, max_side=64, detail="low")
    msg = user_message("first", _frame(100, 200), "between", Image.fromarray(_frame(30, 20, 1)), "last", image=cfg)
    with FakeOpenAIServer(lambda req: "ok") as server:
        ChatClient(_endpoints(server)).complete_text_sync(CALL, [msg])
    (req,) = server.requests
    assert req.texts == ["first", "between", "last"]
    assert [im.mime for im in req.images] == [mime, mime]
    assert [im.size for im in req.images] == [(64, 32), (20, 30)]  # long side capped, small image untouched
    assert [im.detail for im in req.images] == ["low", "low"]
    assert [p["type"] for p in req.messages[0]["content"]] == ["text", "image_url", "text", "image_url", "text"]


def test_png_is_lossless_and_keeps_alpha() -> None:
    rgba = np.random.default_rng(3).integers(0, 255, size=(8, 9, 4), dtype=np.uint8)
    with FakeOpenAIServer(lambda req: "ok") as server:
        ChatClient(_endpoints(server)).complete_text_sync(CALL, [user_message(rgba, image=ImageConfig(format="png"))])
    got = server.requests[0].images[0].image
    assert got.mode == "RGBA"
    np.testing.assert_array_equal(np.asarray(got), rgba)


def test_encode_image_hash_tracks_content_and_jpeg_drops_alpha() -> None:
    cfg = ImageConfig(format="jpeg", quality=80)
    url1, h1 = encode_image(_frame(16, 16, 0), cfg)
    url2, h2 = encode_image(_frame(16, 16, 0), cfg)
    _, h3 = encode_image(_frame(16, 16, 1), cfg)
    url4, _ = encode_image(np.zeros((8, 8, 4), np.uint8), cfg)
    assert url1 == url2 and h1 == h2 and h1 != h3
    assert url1.startswith("data:image/jpeg;base64,") and url4.startswith("data:image/jpeg;base64,")


def test_json_schema_mode_sends_schema_and_parses_fenced_answer() -> None:
    def responder(req: ChatRequest) -> str:
        assert req.json_schema is not None and set(req.json_schema["properties"]) == {"answer", "confidence"}
        return '```json\n{"answer": "a", "confidence": 3}\n```'

    with FakeOpenAIServer(responder) as server:
        client = ChatClient(_endpoints(server))
        out = client.complete_json_sync(CALL, [user_message("Which video?")], Answer)
    assert out == Answer(answer="a", confidence=3)
    rf = server.requests[0].response_format
    assert rf["type"] == "json_schema" and rf["json_schema"]["name"] == "Answer" and rf["json_schema"]["strict"] is False
    assert "JSON" in server.requests[0].texts[-1]
    assert server.responder_errors == []


def test_json_object_mode_embeds_schema_in_text_and_leaves_caller_messages_alone() -> None:
    messages = [user_message("Which video?", _frame(8, 8))]
    before = json.dumps(messages)
    with FakeOpenAIServer(lambda req: '{"answer": "b", "confidence": 1}') as server:
        client = ChatClient(_endpoints(server, response_format="json_object"))
        out = client.complete_json_sync(CALL, messages, Answer)
    assert out.answer == "b"
    req = server.requests[0]
    assert req.response_format == {"type": "json_object"}
    assert '"confidence"' in req.texts[-1] and "JSON schema" in req.texts[-1]
    assert json.dumps(messages) == before


@pytest.mark.parametrize(
    "bad",
    ["not json at all", '{"answer": "a"}', '{"answer": "a", "confidence": "high"}'],
    ids=["invalid-json", "missing-field", "wrong-type"],
)
def test_invalid_answers_are_reasked_then_raise_with_raw_text(bad: str) -> None:
    with FakeOpenAIServer(lambda req: bad) as server:
        client = ChatClient(_endpoints(server, max_reasks=2))
        with pytest.raises(InvalidAnswerError) as info:
            client.complete_json_sync(CALL, [user_message("q")], Answer)
    assert info.value.raw == bad
    assert "Answer" in str(info.value) and "3 attempts" in str(info.value)
    assert len(server.requests) == 3
    last = server.requests[-1].messages
    assert [m["role"] for m in last] == ["user", "assistant", "user", "assistant", "user"]
    assert last[1]["content"] == bad and "not valid" in last[2]["content"]


def test_reask_recovers_when_second_answer_is_valid() -> None:
    with FakeOpenAIServer(
        lambda req: '{"answer": "a", "confidence": 2}', faults=FaultPlan(sequence=["schema"])
    ) as server:
        client = ChatClient(_endpoints(server))
        out = client.complete_json_sync(CALL, [user_message("q")], Answer)
    assert out.answer == "a"
    assert [r.faulted for r in server.requests] == ["schema", None]
    assert "confidence" in server.requests[1].texts[-1]  # the error names the missing field


def test_validate_hook_rejection_is_reasked_with_its_message() -> None:
    answers = iter(['{"answer": "x", "confidence": 1}', '{"answer": "a", "confidence": 1}'])

    def check(obj: Answer) -> None:
        if obj.answer not in ("a", "b"):
            raise ValueError(f"answer must be 'a' or 'b', got {obj.answer!r}")

    with FakeOpenAIServer(lambda req: next(answers)) as server:
        client = ChatClient(_endpoints(server))
        out = client.complete_json_sync(CALL, [user_message("q")], Answer, validate=check)
    assert out.answer == "a"
    assert len(server.requests) == 2
    assert "answer must be 'a' or 'b', got 'x'" in server.requests[1].texts[-1]


def test_usage_per_stage_with_cost_and_unknown_model() -> None:
    prices = {"priced": ModelPrice(input_per_mtok=2.0, output_per_mtok=10.0)}
    with FakeOpenAIServer(lambda req: Reply("ok", prompt_tokens=1000, completion_tokens=100)) as server:
        client = ChatClient(_endpoints(server, prices=prices))
        meter = UsageMeter()
        img = _frame(8, 8)
        client.complete_text_sync(ModelCallConfig(model="priced"), [user_message("q", img, img)], stage="diff", meter=meter)
        client.complete_text_sync(ModelCallConfig(model="priced"), [user_message("q")], stage="propose")
        client.complete_text_sync(ModelCallConfig(model="unpriced"), [user_message("q")], stage="propose")
    stages = client.usage.by_stage()
    assert stages["diff"].calls == 1 and stages["diff"].images == 2
    assert stages["diff"].prompt_tokens == 1000 and stages["diff"].completion_tokens == 100
    assert stages["diff"].cost_usd == pytest.approx(0.003)
    assert stages["propose"].calls == 2 and stages["propose"].cost_usd is None
    total = client.usage.total()
    assert total.calls == 3 and total.prompt_tokens == 3000 and total.cost_usd is None
    assert set(meter.by_stage()) == {"diff"} and meter.total().cost_usd == pytest.approx(0.003)


def test_concurrency_never_exceeds_limit_and_is_used() -> None:
    async def run(client: ChatClient) -> list[str]:
        try:
            calls = [client.complete_text(CALL, [user_message(f"q{i}")]) for i in range(12)]
            return await asyncio.gather(*calls)
        finally:
            await client.aclose()

    with FakeOpenAIServer(lambda req: req.texts[-1], latency_s=0.15) as server:
        client = ChatClient(_endpoints(server, max_concurrency=3))
        out = asyncio.run(run(client))
    assert out == [f"q{i}" for i in range(12)]
    assert server.max_in_flight == 3


def test_client_survives_successive_event_loops() -> None:
    with FakeOpenAIServer(lambda req: req.texts[-1]) as server:
        client = ChatClient(_endpoints(server, max_concurrency=1))
        first = client.complete_text_sync(CALL, [user_message("one")])
        second = client.complete_text_sync(CALL, [user_message("two")])
    assert (first, second) == ("one", "two")


def test_sync_wrapper_inside_running_loop_is_a_clear_error() -> None:
    async def misuse() -> None:
        client = ChatClient(EndpointsConfig())
        client.complete_text_sync(CALL, [user_message("q")])

    with pytest.raises(RuntimeError, match="await complete_json/complete_text"):
        asyncio.run(misuse())


def test_bad_frames_raise_encoding_errors_naming_the_problem() -> None:
    cfg = ImageConfig()
    with pytest.raises(ImageEncodingError, match="float32"):
        encode_image(np.zeros((4, 4, 3), np.float32), cfg)
    with pytest.raises(ImageEncodingError, match=r"\(4, 4, 2\)"):
        encode_image(np.zeros((4, 4, 2), np.uint8), cfg)
    with pytest.raises(ImageEncodingError, match="empty"):
        encode_image(np.zeros((0, 4, 3), np.uint8), cfg)


def test_debug_log_names_call_but_never_key_or_image_data(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="viddiff.backends.llm")
    with FakeOpenAIServer(lambda req: "ok") as server:
        ChatClient(_endpoints(server)).complete_text_sync(CALL, [user_message("q", _frame(8, 8))], stage="diff")
    ours = [r.getMessage() for r in caplog.records if r.name == "viddiff.backends.llm"]
    assert any("model=fake-model" in m and "stage=diff" in m and "cached=False" in m for m in ours)
    assert not any("sk-test-dummy" in m or "base64" in m for m in ours)


def test_an_answer_cut_at_max_tokens_says_so_names_the_key_and_is_not_re_asked() -> None:
    """HTTP 200 with finish_reason "length" and half a JSON object: one request, and an error that says the
    answer was cut and which key to raise (it said "Invalid JSON: EOF while parsing" after two identical re-asks)."""
    from viddiff.config import Config

    call = Config().differencer.model_copy(update={"max_tokens": 16})
    with FakeOpenAIServer(lambda req: '{"answer": "a", "confidence": 3}', faults=FaultPlan(rate=1.0, kinds=["length"])) as server:
        client = ChatClient(_endpoints(server, max_reasks=2))
        with pytest.raises(InvalidAnswerError) as caught:
            client.complete_json_sync(call, [user_message("which?")], Answer, stage="differencer")
    assert len(server.requests) == 1
    message = str(caught.value)
    assert "cut at the token limit" in message and "EOF" not in message
    assert "raise differencer.max_tokens (now 16), e.g. --set differencer.max_tokens=64" in message
    assert client.usage.total().calls == 1  # the cut answer was paid for


def test_a_complete_answer_at_the_token_limit_is_kept() -> None:
    """finish_reason "length" on an answer that is whole, valid JSON: nothing to complain about."""
    faults = FaultPlan(sequence=["length"])
    with FakeOpenAIServer(lambda req: '{"answer": "a", "confidence": 3}' + " " * 40, faults=faults) as server:
        answer = ChatClient(_endpoints(server)).complete_json_sync(CALL, [user_message("which?")], Answer)
    assert answer == Answer(answer="a", confidence=3) and len(server.requests) == 1


def test_a_call_built_on_its_own_gets_advice_without_a_key() -> None:
    with FakeOpenAIServer(lambda req: '{"answer": "a", "confidence": 3}', faults=FaultPlan(sequence=["length"])) as server:
        with pytest.raises(InvalidAnswerError, match=r"raise this model call's max_tokens \(unset, so the server's own limit cut it\)"):
            ChatClient(_endpoints(server)).complete_json_sync(CALL, [user_message("which?")], Answer)
