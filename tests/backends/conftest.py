"""Backend tests talk to local servers only: a dummy key, and no OPENAI_BASE_URL from the caller's shell."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
