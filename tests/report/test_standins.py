"""Stand-in detection: config for CLIP, a real HTTP probe for the chat server (loopback only)."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

import pytest

from viddiff.config import Config, EndpointConfig, ModelCallConfig
from viddiff.report.standins import (
    clip_stand_in,
    display_url,
    endpoint_stand_ins,
    is_loopback,
    model_entries,
    model_roles,
    probe_endpoint,
)
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel


class _PlainModels(BaseHTTPRequestHandler):
    """A local OpenAI-compatible ``/models`` that is not viddiff's stand-in (like vLLM or Ollama)."""

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        body = json.dumps({"object": "list", "data": [{"id": "qwen", "object": "model", "owned_by": "vllm"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def plain_server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _PlainModels)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_probe_tells_the_scripted_server_from_other_local_servers(plain_server):
    with FakeOpenAIServer(ScriptedModel()) as fake:
        assert probe_endpoint(fake.base_url) is True
    assert probe_endpoint(plain_server) is False
    assert probe_endpoint(f"http://127.0.0.1:{_closed_port()}/v1", timeout_s=1.0) is None


def test_banner_lines_per_endpoint(plain_server):
    with FakeOpenAIServer(ScriptedModel()) as fake:
        cfg = Config().model_copy(
            update={
                "proposer": ModelCallConfig(model="p", endpoint=EndpointConfig(base_url=fake.base_url)),
                "differencer": ModelCallConfig(model="d", endpoint=EndpointConfig(base_url=plain_server)),
            }
        )
        lines = endpoint_stand_ins(cfg, model_roles(cfg), {})
    assert len(lines) == 1 and lines[0].component == "proposer (p)" and "scripted stand-in" in lines[0].reason


def test_remote_endpoints_are_never_contacted():
    asked: list[str] = []

    def probe(url: str):
        asked.append(url)
        return True

    cfg = Config()  # OpenAI's endpoint
    assert endpoint_stand_ins(cfg, model_roles(cfg, [("judge", cfg.eval.judge), ("opposite check", cfg.eval.flip)]), {}, probe=probe) == []
    env = {"OPENAI_BASE_URL": "http://localhost:9/v1"}
    lines = endpoint_stand_ins(cfg, model_roles(cfg, [("judge", cfg.eval.judge), ("opposite check", cfg.eval.flip)]), env, probe=probe)
    assert asked == ["http://localhost:9/v1"]  # one probe per endpoint, whatever the number of roles
    assert "judge" in lines[0].component and "opposite check" in lines[0].component


def test_unreachable_local_server_is_flagged_as_unidentified():
    cfg = Config()
    lines = endpoint_stand_ins(cfg, model_roles(cfg), {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, probe=lambda u: None)
    assert len(lines) == 1 and "could not be identified" in lines[0].reason


def test_random_clip_is_a_stand_in_only_without_weights():
    cfg = Config()
    assert clip_stand_in(cfg) is None
    random = cfg.with_overrides(["localizer.clip.pretrained=null"])
    assert "random weights" in clip_stand_in(random).reason
    assert clip_stand_in(random.with_overrides(["localizer.clip.checkpoint=/models/clip.bin"])) is None


def test_a_plug_in_embedder_is_named_and_never_called_random(monkeypatch):
    from viddiff.plugins import EMBEDDERS

    monkeypatch.setitem(EMBEDDERS._registered, "frozen_features", lambda clip, cache: None)
    cfg = Config().with_overrides(["localizer.clip.pretrained=null", "localizer.clip.backend=frozen_features"])
    assert clip_stand_in(cfg) is None
    last = model_entries(cfg, model_roles(cfg), {})[-1]
    assert (last.role, last.model) == ("embedder", "frozen_features") and "random" not in last.where


def test_urls_on_the_page_carry_no_credentials():
    assert display_url("https://user:s3cret@example.com:8443/v1") == "https://example.com:8443/v1"
    cfg = Config().with_overrides(["endpoints.default.base_url=https://me:s3cret@llm.internal/v1"])
    assert all("s3cret" not in e.where for e in model_entries(cfg, model_roles(cfg), {}))


@pytest.mark.parametrize(
    "url, loopback",
    [
        ("http://127.0.0.1:8011/v1", True),
        ("http://127.5.0.9/v1", True),
        ("http://localhost:8000/v1", True),
        ("http://[::1]:8000/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://10.0.0.5:8000/v1", False),
    ],
)
def test_is_loopback(url, loopback):
    assert is_loopback(url) is loopback
