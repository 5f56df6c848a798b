"""Every synchronous entry point hangs up its HTTP connections before it returns.

An SDK client left open outlives the event loop it was made in: an app backend calling ``VidDiff.compare``
in a loop holds one more socket per call, and when the client is finally collected while another loop
runs, the SDK schedules its close on that loop and logs "Event loop is closed" with a traceback. The
fake server counts the connections a client still holds, which is what the endpoint sees.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator

import pytest

import viddiff
from viddiff.api import VidDiff
from viddiff.backends.llm import ChatClient
from viddiff.cli import main
from viddiff.config import Config, DataConfig, ModelCallConfig, load_config
from viddiff.data.viddiffbench import load_dataset
from viddiff.differencer.differencer import AnswerAB
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel

STATEMENTS = ["the squat is deeper", "the stance is wider"]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    with FakeOpenAIServer(ScriptedModel()) as fake:
        yield fake


@pytest.fixture
def pair(synth_dir: Path) -> tuple[str, str]:
    sample = load_dataset(DataConfig(dataset=str(synth_dir)))[2]
    return sample.videos[0].path, sample.videos[1].path


def config(server: FakeOpenAIServer, tmp_path: Path) -> Config:
    return load_config(None, offline_overrides(server.base_url, str(tmp_path / "cache.sqlite")))


CALLS: dict[str, Callable[[VidDiff, tuple[str, str]], object]] = {
    "compare": lambda vd, pair: vd.compare(*pair, "squat", differences=STATEMENTS),
    "compare twice": lambda vd, pair: [vd.compare(*pair, "squat", differences=[s]) for s in STATEMENTS],
    "describe": lambda vd, pair: vd.describe(*pair, n_differences=2),
    "stream": lambda vd, pair: list(vd.stream(*pair, "squat", differences=STATEMENTS)),
}


@pytest.mark.parametrize("call", CALLS, ids=list(CALLS))
def test_a_kept_vidiff_object_holds_no_connection_between_calls(call, server, pair, tmp_path):
    vd = VidDiff(config(server, tmp_path))  # kept alive, as an app backend keeps it
    CALLS[call](vd, pair)
    assert server.requests
    assert server.open_connections() == 0


def test_module_compare_holds_no_connection(server, pair, tmp_path):
    viddiff.compare(*pair, action="squat", differences=STATEMENTS, config=config(server, tmp_path))
    assert server.requests and server.open_connections() == 0


def test_chat_client_sync_calls_hold_no_connection(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    with FakeOpenAIServer(lambda request: '{"answer": "a"}') as fake:
        client = ChatClient(config(fake, tmp_path).endpoints)
        call, messages = ModelCallConfig(model="any"), [{"role": "user", "content": "a or b?"}]
        assert client.complete_json_sync(call, messages, AnswerAB).answer == "a"
        assert client.complete_text_sync(call, messages) == '{"answer": "a"}'
        assert len(fake.requests) == 2 and fake.open_connections() == 0


def test_open_run_and_its_judge_hold_no_connection(server, synth_dir, tmp_path):
    sets = [x for item in offline_overrides(server.base_url, str(tmp_path / "c.sqlite")) for x in ("--set", item)]
    code = main(["-q", "run", "--dataset", str(synth_dir), "--mode", "open", "--output", str(tmp_path / "run"), *sets])
    assert code == 0
    assert server.requests and server.open_connections() == 0
