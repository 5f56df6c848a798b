"""Transient faults are retried until they pass; permanent ones fail at once with a clear message."""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np
import pytest
from pydantic import BaseModel
from tenacity import AsyncRetrying, RetryCallState

from viddiff.backends.llm import ChatClient, encode_image, user_message
from viddiff.backends.llm.faults import TransientError
from viddiff.backends.llm.retries import server_hint
from viddiff.config import EndpointConfig, EndpointsConfig, ImageConfig, ModelCallConfig
from viddiff.errors import EndpointError
from viddiff.testing.fake_openai import FakeOpenAIServer, FaultPlan

CALL = ModelCallConfig(model="fake-model")


class Verdict(BaseModel):
    answer: str


def _client(server: FakeOpenAIServer, **kw: object) -> ChatClient:
    opts = {"backoff_base_s": 0.01, "backoff_max_s": 0.05, "max_retries": 3, "timeout_s": 0.5}
    opts.update(kw)
    return ChatClient(EndpointsConfig(default=EndpointConfig(base_url=server.base_url), **opts))


@pytest.mark.parametrize("kind", ["429", "500", "timeout", "malformed", "drop"])
def test_each_transient_fault_is_retried_until_success(kind: str) -> None:
    faults = FaultPlan(sequence=[kind, kind], timeout_sleep_s=1.0)
    with FakeOpenAIServer(lambda req: '{"answer": "a"}', faults=faults) as server:
        client = _client(server)
        out = client.complete_json_sync(CALL, [user_message("q")], Verdict)
    assert out.answer == "a"
    assert [r.faulted for r in server.requests] == [kind, kind, None]
    usage = client.usage.total()
    assert usage.calls == 1 and usage.prompt_tokens == 10  # failed attempts are not billed calls


class _WaitSpy:
    """Wraps a client's wait rule; records the server hint each retry saw and the wait chosen."""

    def __init__(self, wait: Callable[[RetryCallState], float]):
        self.wait = wait
        self.seen: list[tuple[Optional[float], float]] = []

    def __call__(self, retry_state: RetryCallState) -> float:
        delay = self.wait(retry_state)
        self.seen.append((server_hint(retry_state), delay))
        return delay


def test_retry_after_header_is_honoured_and_capped() -> None:
    faults = FaultPlan(sequence=["429", "429"], retry_after_s=0.2)
    with FakeOpenAIServer(lambda req: "ok", faults=faults) as server:
        endpoints = EndpointsConfig(default=EndpointConfig(base_url=server.base_url), backoff_base_s=0.01, backoff_max_s=0.15)
        client = ChatClient(endpoints)
        spy = client.transport.retries.wait = _WaitSpy(client.transport.retries.wait)
        assert client.complete_text_sync(CALL, [user_message("q")]) == "ok"
    assert spy.seen == [(0.2, 0.15), (0.2, 0.15)]  # header parsed; delay capped at backoff_max_s
    assert [r.faulted for r in server.requests] == ["429", "429", None]


def test_backoff_has_full_jitter_under_the_exponential_cap() -> None:
    wait = ChatClient(EndpointsConfig(backoff_base_s=1.0, backoff_max_s=8.0)).transport.retries.wait

    def delay(attempt: int) -> float:
        """The wait after failed attempt ``attempt + 1`` (a timeout: no server hint)."""
        state = RetryCallState(AsyncRetrying(), fn=None, args=(), kwargs={})
        state.attempt_number = attempt + 1
        state.set_exception((TransientError, TransientError("no complete answer"), None))
        return wait(state)

    delays = [delay(attempt) for attempt in range(6) for _ in range(50)]
    per_attempt = [delays[i * 50 : (i + 1) * 50] for i in range(6)]
    for attempt, values in enumerate(per_attempt):
        assert all(0.0 <= v <= min(8.0, 2.0**attempt) for v in values)
    assert len(set(per_attempt[3])) > 40  # jittered, not a constant


def test_persistent_transient_failure_gives_up_with_endpoint_error() -> None:
    with FakeOpenAIServer(lambda req: "ok", faults=FaultPlan(rate=1.0, kinds=["500"])) as server:
        client = _client(server, max_retries=2)
        with pytest.raises(EndpointError) as info:
            client.complete_text_sync(CALL, [user_message("q")])
    assert len(server.requests) == 3
    msg = str(info.value)
    assert "3 attempts" in msg and "HTTP 500" in msg and server.base_url in msg


@pytest.mark.parametrize(
    "kind, expected",
    [
        ("401", ["OPENAI_API_KEY", "HTTP 401", "valid key"]),
        ("404", ["'fake-model'", "not found", "base_url"]),
    ],
)
def test_permanent_errors_fail_fast_with_clear_message(kind: str, expected: list[str]) -> None:
    with FakeOpenAIServer(lambda req: "ok", faults=FaultPlan(sequence=[kind])) as server:
        client = _client(server)
        with pytest.raises(EndpointError) as info:
            client.complete_text_sync(CALL, [user_message("q")])
    assert len(server.requests) == 1
    for part in expected:
        assert part in str(info.value)
    assert "sk-test-dummy" not in str(info.value)
    if kind == "404":
        assert server.base_url in str(info.value)


def test_bad_request_400_carries_the_server_message() -> None:
    bad_image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,/9j/4AAQSkZJRg==", "detail": "low"}}
    with FakeOpenAIServer(lambda req: "ok") as server:
        client = _client(server)
        with pytest.raises(EndpointError) as info:
            client.complete_text_sync(CALL, [{"role": "user", "content": [{"type": "text", "text": "q"}, bad_image]}])
    assert len(server.requests) == 1 and server.requests[0].rejected
    assert "HTTP 400" in str(info.value) and "image could not be decoded" in str(info.value)


def test_mime_mismatch_is_rejected_by_the_server() -> None:
    url, _ = encode_image(np.zeros((8, 8, 3), np.uint8), ImageConfig(format="jpeg"))
    lying = url.replace("data:image/jpeg", "data:image/png", 1)
    part = {"type": "image_url", "image_url": {"url": lying, "detail": "high"}}
    with FakeOpenAIServer(lambda req: "ok") as server:
        with pytest.raises(EndpointError, match="says image/png but the bytes are JPEG"):
            _client(server).complete_text_sync(CALL, [{"role": "user", "content": [part]}])
    assert len(server.requests) == 1


def test_missing_api_key_names_the_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VIDDIFF_TEST_KEY", raising=False)
    with FakeOpenAIServer(lambda req: "ok") as server:
        endpoint = EndpointConfig(base_url=server.base_url, api_key_env="VIDDIFF_TEST_KEY")
        client = ChatClient(EndpointsConfig(default=endpoint))
        with pytest.raises(EndpointError) as info:
            client.complete_text_sync(CALL, [user_message("q")])
    assert "VIDDIFF_TEST_KEY" in str(info.value) and "dummy value for local servers" in str(info.value)
    assert server.requests == []


def test_per_call_endpoint_overrides_default_and_uses_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTHER_KEY", "sk-other")
    with FakeOpenAIServer(lambda req: "default") as default, FakeOpenAIServer(lambda req: "other") as other:
        client = _client(default)
        call = ModelCallConfig(model="m", endpoint=EndpointConfig(base_url=other.base_url, api_key_env="OTHER_KEY"))
        assert client.complete_text_sync(call, [user_message("q")]) == "other"
        assert client.complete_text_sync(CALL, [user_message("q")]) == "default"
    assert other.requests[0].api_key == "sk-other"
    assert default.requests[0].api_key == "sk-test-dummy"


def test_openai_base_url_env_is_used_when_config_has_none(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAIServer(lambda req: "via env") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        client = ChatClient(EndpointsConfig(max_retries=0))
        assert client.complete_text_sync(CALL, [user_message("q")]) == "via env"
    assert len(server.requests) == 1


# --- a request refused as too large says which settings make it smaller (issue 22) ---------------------------

CONTEXT = "This model's maximum context length is 128000 tokens. However, your messages resulted in 210433 tokens."
IMAGE_HINT = {
    "differencer": (
        "the request is too large for the model: send smaller or fewer images, e.g. --set "
        "differencer.image.max_side=768, --set differencer.image.detail=low, or fewer frames per difference "
        "(--set localizer.n_frames_multi=1)"
    ),
    "baseline": (
        "the request is too large for the model: send smaller or fewer images, e.g. --set "
        "baseline.image.max_side=384, --set baseline.image.detail=low, or fewer frames (--set baseline.max_images=N)"
    ),
}


def _refuse(status: int, message: str, code: Optional[str] = None):
    from viddiff.testing.fake_openai import HTTPFault

    def responder(req):
        raise HTTPFault(status, message, code=code)

    return responder


@pytest.mark.parametrize("stage", ["differencer", "baseline"])
@pytest.mark.parametrize(
    "status, message, code",
    [(400, CONTEXT, "context_length_exceeded"), (413, "Request Entity Too Large", None),
     (400, "Request payload size exceeds the limit: 20971520 bytes.", None)],
)
def test_a_request_refused_as_too_large_names_the_settings_that_shrink_it(stage, status, message, code) -> None:
    with FakeOpenAIServer(_refuse(status, message, code)) as server:
        with pytest.raises(EndpointError) as info:
            _client(server).complete_text_sync(CALL, [user_message("q")], stage=stage)
    assert len(server.requests) == 1
    text = str(info.value)
    assert f"HTTP {status}" in text and message[:40] in text
    assert text.endswith("; " + IMAGE_HINT[stage])


def test_a_text_request_refused_as_too_long_gets_a_text_hint_and_other_400s_none() -> None:
    with FakeOpenAIServer(_refuse(400, CONTEXT, "context_length_exceeded")) as server:
        with pytest.raises(EndpointError) as info:
            _client(server).complete_text_sync(CALL, [user_message("q")], stage="proposer")
    assert str(info.value).endswith(
        "; the request is too long for the model's context: use a model with a longer context, or shorten the "
        "text it is sent (endpoints.max_prompt_chars refuses long requests before sending them)"
    )
    with FakeOpenAIServer(_refuse(400, "Invalid value for 'temperature'")) as server:
        with pytest.raises(EndpointError) as info:
            _client(server).complete_text_sync(CALL, [user_message("q")], stage="differencer")
    assert "too large" not in str(info.value) and "max_side" not in str(info.value)


# --- a host name that resolves nowhere is not retried (issue 22) ----------------------------------------------


def test_a_host_name_that_cannot_be_resolved_fails_at_once_without_retries(caplog: pytest.LogCaptureFixture) -> None:
    """``.invalid`` never resolves (RFC 2606); retrying a name lookup that failed before the host ever answered
    only repeats the wait (six attempts, a log line each, for every request in flight)."""
    url = "http://viddiff-no-such-host.invalid/v1"
    client = ChatClient(EndpointsConfig(default=EndpointConfig(base_url=url), backoff_base_s=0.01, max_retries=5))
    with caplog.at_level("INFO", logger="viddiff.backends.llm"), pytest.raises(EndpointError) as info:
        client.complete_text_sync(CALL, [user_message("q")], stage="proposer")
    assert info.value.fatal
    assert str(info.value).startswith(
        f"cannot reach {url}: its host name could not be resolved ("
    ) and str(info.value).endswith(
        "); check base_url and the network (offline, point endpoints.default.base_url at a local server)"
    )
    assert not [r for r in caplog.records if "retry" in r.getMessage()]


def _free_loopback_url() -> str:
    """The URL of a server that stopped: nothing listens on its port any more."""
    with FakeOpenAIServer(lambda req: "ok") as server:
        return server.base_url


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_a_refused_first_connection_to_this_machine_fails_at_once(host: str, caplog: pytest.LogCaptureFixture) -> None:
    """Nothing listening on a local port is a server not started (or the wrong port), not a blip: six retries
    only delayed the error by about 42 s."""
    url = _free_loopback_url().replace("127.0.0.1", host)
    client = ChatClient(EndpointsConfig(default=EndpointConfig(base_url=url), backoff_base_s=0.01, max_retries=5))
    with caplog.at_level("INFO", logger="viddiff.backends.llm"), pytest.raises(EndpointError) as info:
        client.complete_text_sync(CALL, [user_message("q")], stage="proposer")
    assert info.value.fatal
    assert str(info.value).startswith(f"cannot reach {url}: nothing is listening there (")
    assert str(info.value).endswith(
        "); start the model server first, or check the port in base_url (endpoints.default.base_url)"
    )
    assert not [r for r in caplog.records if "retry" in r.getMessage()]


def test_a_refused_connection_after_the_server_answered_is_retried(caplog: pytest.LogCaptureFixture) -> None:
    """A server that answered and now refuses is restarting: worth the retries."""
    with FakeOpenAIServer(lambda req: "ok") as server:
        url = server.base_url
        client = ChatClient(EndpointsConfig(default=EndpointConfig(base_url=url), backoff_base_s=0.01, max_retries=2))
        assert client.complete_text_sync(CALL, [user_message("q")]) == "ok"
    with caplog.at_level("INFO", logger="viddiff.backends.llm"), pytest.raises(EndpointError, match="3 attempts"):
        client.complete_text_sync(CALL, [user_message("again")])
    assert len([r for r in caplog.records if "retry" in r.getMessage()]) == 2


@pytest.mark.parametrize(
    "message",
    ["Invalid payload: messages must be a list", "Failed to parse the request payload as JSON",
     "Unknown parameter: 'context_window_size'"],
)
def test_a_400_that_only_mentions_payload_or_context_gets_no_size_hint(message: str) -> None:
    """Words like "payload" or "context window" alone do not say the request was too large: sending smaller
    images would not help, so the error does not suggest it."""
    with FakeOpenAIServer(_refuse(400, message)) as server:
        with pytest.raises(EndpointError) as info:
            _client(server).complete_text_sync(CALL, [user_message("q")], stage="differencer")
    assert message in str(info.value)
    assert IMAGE_HINT["differencer"] not in str(info.value) and "too long" not in str(info.value)
