"""Verdicts as they arrive: ``VidDiff.astream`` / ``stream`` and ``viddiff compare --json-lines``.

Events come in order (proposal, segmentation, one verdict per difference, result); each verdict comes as
soon as it is decided, not after the slowest; the result is ``acompare``'s; a client that goes away stops
the model calls still to come.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from viddiff.api import CompareEvent, VidDiff
from viddiff.cli import main
from viddiff.config import Config, DataConfig, load_config
from viddiff.data.viddiffbench import load_dataset
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.responders import Gate, ScriptedModel, schema_name

STATEMENTS = ["the squat is deeper", "the stance is wider", "the descent is slower", "the back is straighter"]
DIFFERENCER_SCHEMAS = {"AnswerAB", "AnswerABC"}


@pytest.fixture
def pair(synth_dir: Path) -> tuple[str, str]:
    sample = load_dataset(DataConfig(dataset=str(synth_dir)))[2]
    return sample.videos[0].path, sample.videos[1].path


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")


def config(server: FakeOpenAIServer, cache: Path, *sets: str) -> Config:
    return load_config(None, [*offline_overrides(server.base_url, str(cache)), *sets])


def differencer_requests(server: FakeOpenAIServer) -> list:
    return [r for r in server.requests if schema_name(r) in DIFFERENCER_SCHEMAS]


async def collect(cfg: Config, pair, **kwargs) -> list:
    vd = VidDiff(cfg)
    try:
        return [event async for event in vd.astream(*pair, "barbell back squat", **kwargs)]
    finally:
        await vd.aclose()


async def compare(cfg: Config, pair, **kwargs):
    vd = VidDiff(cfg)
    try:
        return await vd.acompare(*pair, "barbell back squat", **kwargs)
    finally:
        await vd.aclose()


@pytest.mark.parametrize("kwargs", [{"differences": STATEMENTS}, {"n_differences": 3}], ids=["closed", "open"])
def test_events_in_order_and_the_result_is_acompares(pair, tmp_path, kwargs):
    with FakeOpenAIServer(ScriptedModel()) as server:
        events = asyncio.run(collect(config(server, tmp_path / "a.sqlite"), pair, **kwargs))
        expected = asyncio.run(compare(config(server, tmp_path / "b.sqlite"), pair, **kwargs))
    types = [e.type for e in events]
    n = len(expected.differences)
    assert types == ["proposal", "segmentation", *["verdict"] * n, "result"]
    assert events[-1].result == expected
    proposal, segmentation = events[0], events[1]
    assert [d.key for d in proposal.differences] == [d.key for d in expected.differences]
    assert proposal.stages == expected.stages
    assert segmentation.segmentations == expected.segmentations
    verdicts = {e.difference.key: e.difference for e in events[2:-1]}
    assert verdicts == {d.key: d for d in expected.differences}  # each verdict is its entry of the result
    for event in events:  # every event is one JSON object that parses back into the same event
        assert TypeAdapter(CompareEvent).validate_json(event.model_dump_json()) == event


def test_a_verdict_arrives_while_another_is_still_being_decided(pair, tmp_path):
    slow = STATEMENTS[0]
    gate = Gate(ScriptedModel(), matches=lambda r: schema_name(r) in DIFFERENCER_SCHEMAS and slow in r.text)
    with FakeOpenAIServer(gate) as server:
        cfg = config(server, tmp_path / "c.sqlite")

        async def go():
            vd = VidDiff(cfg)
            got = []
            try:
                async for event in vd.astream(*pair, "barbell back squat", differences=STATEMENTS):
                    got.append(event)
                    if event.type == "verdict" and len([e for e in got if e.type == "verdict"]) == 3:
                        held = gate.arrived == 1 and not gate.timed_out  # the slow one is still unanswered
                        gate.open()
            finally:
                await vd.aclose()
            return got, held

        events, held = asyncio.run(go())
    assert held
    verdicts = [e.difference.description for e in events if e.type == "verdict"]
    assert verdicts[-1] == slow and sorted(verdicts) == sorted(STATEMENTS)
    assert [d.description for d in events[-1].result.differences] == STATEMENTS  # the result keeps the order


def test_closing_the_stream_after_the_first_verdict_stops_the_remaining_calls(pair, tmp_path):
    with FakeOpenAIServer(ScriptedModel(), latency_s=0.2) as server:
        cfg = config(server, tmp_path / "c.sqlite", "endpoints.max_concurrency=1")  # verdicts one after another

        async def go():
            vd = VidDiff(cfg)
            try:
                stream = vd.astream(*pair, "barbell back squat", differences=STATEMENTS)
                async for event in stream:
                    if event.type == "verdict":
                        break
                await stream.aclose()  # the client went away
                await asyncio.sleep(1.5)  # time for the other answers, had they been asked for
            finally:
                await vd.aclose()

        asyncio.run(go())
        asked = differencer_requests(server)
    assert len(asked) <= 2  # the decided one and at most the one then in flight


def test_cancelling_the_consumer_task_after_the_proposal_makes_no_differencer_call(pair, tmp_path):
    with FakeOpenAIServer(ScriptedModel(), latency_s=0.2) as server:
        cfg = config(server, tmp_path / "c.sqlite")

        async def go():
            vd = VidDiff(cfg)
            proposed = asyncio.Event()

            async def consume():
                async for event in vd.astream(*pair, "barbell back squat", differences=STATEMENTS):
                    if event.type == "proposal":
                        proposed.set()

            task = asyncio.ensure_future(consume())
            try:
                await proposed.wait()
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
                n = len(server.requests)
                await asyncio.sleep(1.0)
                return n
            finally:
                await vd.aclose()

        at_cancel = asyncio.run(go())
        assert len(server.requests) == at_cancel
    assert not differencer_requests(server)


def test_sync_stream_matches_compare_and_stops_when_left(pair, tmp_path):
    with FakeOpenAIServer(ScriptedModel(), latency_s=0.05) as server:
        events = list(VidDiff(config(server, tmp_path / "a.sqlite")).stream(*pair, "squat", differences=STATEMENTS))
        expected = VidDiff(config(server, tmp_path / "b.sqlite")).compare(*pair, "squat", differences=STATEMENTS)
        assert events[-1].type == "result" and events[-1].result == expected

        server.reset_log()
        for event in VidDiff(config(server, tmp_path / "c.sqlite")).stream(*pair, "squat", differences=STATEMENTS):
            if event.type == "proposal":
                break
        time.sleep(0.5)
    assert not differencer_requests(server)


def test_sync_stream_refuses_a_running_loop(pair, tmp_path):
    async def inside():
        VidDiff(Config()).stream(*pair, "squat", differences=STATEMENTS)

    with pytest.raises(RuntimeError, match="running event loop"):
        asyncio.run(inside())


def test_cli_json_lines_prints_each_event_and_the_compare_result(pair, tmp_path, capsys):
    with FakeOpenAIServer(ScriptedModel()) as server:
        args = ["-q", "compare", *pair, "--action", "squat"]
        for statement in STATEMENTS[:2]:
            args += ["--difference", statement]

        def sets(cache: str) -> list[str]:
            return [x for s in offline_overrides(server.base_url, str(tmp_path / cache)) for x in ("--set", s)]

        assert main([*args, "--json-lines", *sets("a.sqlite")]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert main([*args, "--json", *sets("b.sqlite")]) == 0
        whole = json.loads(capsys.readouterr().out)
    events = [json.loads(line) for line in lines]
    assert [e["type"] for e in events] == ["proposal", "segmentation", "verdict", "verdict", "result"]
    assert events[-1]["result"] == whole


def test_cli_json_lines_and_json_are_exclusive(pair, capsys):
    with pytest.raises(SystemExit):
        main(["compare", *pair, "--action", "squat", "--difference", "x", "--json", "--json-lines"])
    assert "not allowed with" in capsys.readouterr().err
