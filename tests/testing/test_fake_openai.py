"""The fake OpenAI server itself, probed with plain urllib so its checks do not depend on our client."""

from __future__ import annotations

import base64
import io
import json
import urllib.error
import urllib.request
from typing import Any, Optional

import pytest
from PIL import Image

from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer, FaultPlan, HTTPFault, Reply


def _post(server: FakeOpenAIServer, body: dict[str, Any], auth: Optional[str] = "Bearer k") -> tuple[int, dict, dict]:
    headers = {"Content-Type": "application/json"}
    if auth:
        headers["Authorization"] = auth
    req = urllib.request.Request(f"{server.base_url}/chat/completions", json.dumps(body).encode(), headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read()), dict(resp.headers)
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read()), dict(err.headers)


def _png_url(size: tuple[int, int] = (5, 3)) -> str:
    buf = io.BytesIO()
    Image.new("RGB", size, (10, 20, 30)).save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _body(*content: Any) -> dict[str, Any]:
    return {"model": "fake-model", "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": list(content)}]}


def test_completion_shape_and_parsed_request() -> None:
    seen: list[ChatRequest] = []

    def responder(req: ChatRequest) -> Reply:
        seen.append(req)
        return Reply("hi", prompt_tokens=7, completion_tokens=2)

    body = _body({"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": _png_url(), "detail": "low"}})
    with FakeOpenAIServer(responder) as server:
        status, payload, _ = _post(server, body)
    assert status == 200
    assert payload["object"] == "chat.completion" and payload["model"] == "fake-model"
    assert payload["choices"][0]["message"] == {"role": "assistant", "content": "hi"}
    assert payload["choices"][0]["finish_reason"] == "stop"
    assert payload["usage"] == {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}
    (req,) = seen
    assert req.texts == ["sys", "look"] and req.text == "sys\nlook"
    assert [(im.mime, im.size, im.detail) for im in req.images] == [("image/png", (5, 3), "low")]
    assert req.has_auth and req.api_key == "k" and req.faulted is None
    assert server.requests == [req]


def test_models_endpoint_lists_models() -> None:
    with FakeOpenAIServer(models=["m1", "m2"]) as server:
        with urllib.request.urlopen(f"{server.base_url}/models", timeout=10) as resp:
            payload = json.loads(resp.read())
    assert [m["id"] for m in payload["data"]] == ["m1", "m2"]


def test_missing_authorization_is_401_and_logged() -> None:
    with FakeOpenAIServer(lambda req: "x") as server:
        status, payload, _ = _post(server, _body({"type": "text", "text": "q"}), auth=None)
    assert status == 401 and "Authorization" in payload["error"]["message"]
    assert server.requests[0].rejected and not server.requests[0].has_auth


@pytest.mark.parametrize(
    "url, fragment",
    [
        ("https://example.com/a.png", "base64 data URL"),
        ("data:image/png;base64,!!!notbase64", "could not be decoded"),
        (_png_url().replace("image/png", "image/jpeg"), "says image/jpeg but the bytes are PNG"),
    ],
)
def test_bad_images_are_400(url: str, fragment: str) -> None:
    with FakeOpenAIServer(lambda req: "x") as server:
        status, payload, _ = _post(server, _body({"type": "image_url", "image_url": {"url": url}}))
    assert status == 400 and fragment in payload["error"]["message"]


def test_no_responder_and_failing_responder_are_500_with_reason() -> None:
    with FakeOpenAIServer() as server:
        status, payload, _ = _post(server, _body({"type": "text", "text": "q"}))
    assert status == 500 and "no responder" in payload["error"]["message"]

    def broken(req: ChatRequest) -> str:
        raise KeyError("oops")

    with FakeOpenAIServer(broken) as server:
        status, _, _ = _post(server, _body({"type": "text", "text": "q"}))
    assert status == 500 and server.responder_errors == ["KeyError: 'oops'"]


def test_fault_sequence_then_ok_with_retry_after_and_log_flags() -> None:
    plan = FaultPlan(sequence=["429", "ok", "500", "401", "404", "schema"], retry_after_s=2)
    with FakeOpenAIServer(lambda req: "fine", faults=plan) as server:
        results = [_post(server, _body({"type": "text", "text": "q"})) for _ in range(7)]
    assert [r[0] for r in results] == [429, 200, 500, 401, 404, 200, 200]
    assert results[0][2]["Retry-After"] == "2"
    assert json.loads(results[5][1]["choices"][0]["message"]["content"]) == {"fake_fault": "schema violation"}
    assert results[6][1]["choices"][0]["message"]["content"] == "fine"
    assert [r.faulted for r in server.requests] == ["429", None, "500", "401", "404", "schema", None]


def test_malformed_fault_returns_unparseable_200() -> None:
    with FakeOpenAIServer(lambda req: "x", faults=FaultPlan(sequence=["malformed"])) as server:
        req = urllib.request.Request(
            f"{server.base_url}/chat/completions",
            json.dumps(_body({"type": "text", "text": "q"})).encode(),
            {"Authorization": "Bearer k", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            status, raw = resp.status, resp.read()
    assert status == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(raw)


def test_random_faults_are_deterministic_by_index() -> None:
    plan = FaultPlan(rate=0.3, kinds=["429", "500"], seed=7)
    draws = [plan.fault_for(i) for i in range(400)]
    assert draws == [FaultPlan(rate=0.3, kinds=["429", "500"], seed=7).fault_for(i) for i in range(400)]
    assert draws != [FaultPlan(rate=0.3, kinds=["429", "500"], seed=8).fault_for(i) for i in range(400)]
    rate = sum(d is not None for d in draws) / len(draws)
    assert 0.2 < rate < 0.4 and {d for d in draws if d} == {"429", "500"}


def test_fault_plan_rejects_unknown_kinds() -> None:
    with pytest.raises(ValueError, match="unknown fault kinds"):
        FaultPlan(sequence=["503"])


def test_reset_log_clears_requests() -> None:
    with FakeOpenAIServer(lambda req: "x") as server:
        _post(server, _body({"type": "text", "text": "q"}))
        server.reset_log()
        assert server.requests == []
        _post(server, _body({"type": "text", "text": "q"}))
    assert [r.index for r in server.requests] == [1]


def test_html_fault_is_a_web_page_with_status_200() -> None:
    with FakeOpenAIServer(lambda req: "x", faults=FaultPlan(sequence=["html"])) as server:
        req = urllib.request.Request(
            f"{server.base_url}/chat/completions", json.dumps(_body()).encode(), {"Authorization": "Bearer k"}, method="POST"
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert resp.status == 200 and resp.headers["Content-Type"].startswith("text/html")
            assert resp.read().startswith(b"<!doctype html>")


def test_a_trickled_answer_is_still_a_whole_completion() -> None:
    with FakeOpenAIServer(lambda req: Reply('{"a": 1}', trickle_s=0.001)) as server:
        status, body, _ = _post(server, _body())
    assert status == 200 and body["choices"][0]["message"]["content"] == '{"a": 1}'


def test_a_responder_can_refuse_one_request_with_an_http_status() -> None:
    def responder(req: ChatRequest) -> str:
        if "too long" in req.text:
            raise HTTPFault(400, "maximum context length exceeded", code="context_length_exceeded")
        return "fine"

    with FakeOpenAIServer(responder) as server:
        status, body, _ = _post(server, _body({"type": "text", "text": "too long"}))
        ok, _, _ = _post(server, _body({"type": "text", "text": "short"}))
    assert (status, body["error"]["code"], body["error"]["message"]) == (400, "context_length_exceeded", "maximum context length exceeded")
    assert ok == 200 and server.requests[0].rejected == "HTTP 400: maximum context length exceeded"
    assert not server.responder_errors
