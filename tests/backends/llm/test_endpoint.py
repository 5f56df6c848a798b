"""Where a call goes and with which key; what the client remembers of each endpoint."""

from __future__ import annotations

import pytest

from viddiff.backends.llm.endpoint import DEFAULT_BASE_URL, EndpointHistory, endpoint_url, resolve_target
from viddiff.config import EndpointConfig, EndpointsConfig, ModelCallConfig
from viddiff.errors import EndpointError


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-default")


def test_url_precedence_stage_then_default_then_env_then_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    stage = ModelCallConfig(model="m", endpoint=EndpointConfig(base_url="http://stage/v1"))
    configured = EndpointsConfig(default=EndpointConfig(base_url="http://default/v1"))
    assert endpoint_url(stage, configured) == "http://stage/v1"
    assert endpoint_url(ModelCallConfig(model="m"), configured) == "http://default/v1"
    assert endpoint_url(ModelCallConfig(model="m"), EndpointsConfig()) == DEFAULT_BASE_URL
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env/v1")
    assert endpoint_url(ModelCallConfig(model="m"), EndpointsConfig()) == "http://env/v1"


def test_the_key_comes_from_the_named_variable_and_stays_out_of_reprs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STAGE_KEY", "sk-stage-secret")
    call = ModelCallConfig(model="m", endpoint=EndpointConfig(base_url="http://stage/v1", api_key_env="STAGE_KEY"))
    target = resolve_target(call, EndpointsConfig())
    assert (target.base_url, target.api_key_env, target.api_key) == ("http://stage/v1", "STAGE_KEY", "sk-stage-secret")
    assert "sk-stage-secret" not in repr(target)


def test_a_missing_key_is_fatal_and_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(EndpointError, match="environment variable OPENAI_API_KEY is not set") as info:
        resolve_target(ModelCallConfig(model="m"), EndpointsConfig())
    assert info.value.fatal


def test_history_tells_reached_endpoints_from_answering_models() -> None:
    history = EndpointHistory()
    history.mark_reached("http://a/v1")
    assert history.has_reached("http://a/v1") and not history.has_answered("http://a/v1", "m")
    history.mark_answered("http://b/v1", "m")
    assert history.has_reached("http://b/v1") and history.has_answered("http://b/v1", "m")
    assert not history.has_answered("http://b/v1", "other")
