"""Fixtures for proposer tests: a scripted fake LLM behind the real openai client.

The ``proposer`` fixture answers each kind of proposer request (differences,
stages, refine, links) from its own queue, so a test scripts only the call it
is about; the other calls get well-formed defaults.
"""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any, Callable, Iterator, Union

import pytest

from viddiff.backends.llm import ChatClient
from viddiff.config import EndpointConfig, EndpointsConfig, ProposerConfig
from viddiff.proposer import Proposer
from viddiff.schema import Proposal
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer

Answer = Union[str, dict, Callable[[ChatRequest], Union[str, dict]]]

STAGES = [
    {
        "name": "stage one",
        "description": "setup",
        "retrieval_strings": [
            "A photo of a person standing tall",
            "A photo of a person holding a bar on the shoulders",
            "A photo of a person with feet apart",
        ],
    },
    {
        "name": "stage two",
        "description": "descent",
        "retrieval_strings": [
            "A photo of a person with knees bent",
            "A photo of a person crouching low",
            "A photo of a person leaning forward",
        ],
    },
    {
        "name": "stage three",
        "description": "ascent",
        "retrieval_strings": [
            "A photo of a person rising up",
            "A photo of a person with hips extended",
            "A photo of a person with arms locked",
        ],
    },
]
DIFFERENCES = [
    {"name": "depth", "description": "the squat is deeper", "query_string": "the hips go lower", "num_frames": "1"},
    {"name": "speed", "description": "the ascent is faster", "query_string": "", "num_frames": "gt_1"},
]

DIMENSION_DIFFERENCES = [
    {
        "name": "camera distance",
        "category": "camera",
        "scope": "global",
        "description": "the camera is closer to the subject",
        "contrast": "the camera is further from the subject",
        "num_frames": "1",
    },
    {
        "name": "arm swing",
        "category": "motion",
        "scope": "local",
        "description": "the arms swing higher",
        "contrast": "the arms swing lower",
        "query_string": "the hands rise above the head",
        "num_frames": "gt_1",
    },
]


def request_kind(req: ChatRequest) -> str:
    """``differences``, ``dimensions``, ``stages``, ``refine``, ``links`` or ``one`` (``proposer.calls: one``),
    from the response-format schema name."""
    name = req.response_format["json_schema"]["name"]
    if name == "StagesAnswer":
        return "refine" if "Remove the strings" in req.text or "filter out" in req.text else "stages"
    kinds = {
        "DifferencesAnswer": "differences", "DimensionDifferencesAnswer": "dimensions", "LinksAnswer": "links",
        "StageNameLinks": "links", "ProposalAnswer": "one",
    }
    return kinds[name]


def listed_ids(req: ChatRequest) -> list[str]:
    """Difference ids of a links request, as listed in its prompt (``"key: statement"`` lines)."""
    block = req.text.split("(id: statement):\n", 1)[1].split("\n\n", 1)[0]
    return [line.split(":", 1)[0] for line in block.splitlines()]


def _first_stage_links(req: ChatRequest) -> dict:
    return {"links": [{"stage": STAGES[0]["name"], "differences": listed_ids(req)}]}


def _one_call(req: ChatRequest) -> dict:
    """``proposer.calls: one``: the default stages, every difference linked to the first stage."""
    if "(id: statement):" in req.text:
        return {"stages": STAGES, **_first_stage_links(req)}
    names = [d["name"] for d in DIFFERENCES]
    return {"differences": DIFFERENCES, "stages": STAGES, "links": [{"stage": STAGES[0]["name"], "differences": names}]}


class Harness:
    """A fake LLM server plus a way to run :meth:`Proposer.propose` against it."""

    STAGES = STAGES
    DIFFERENCES = DIFFERENCES
    DIMENSION_DIFFERENCES = DIMENSION_DIFFERENCES

    def __init__(self, server: FakeOpenAIServer):
        self.server = server
        self.queues: dict[str, list[Answer]] = {}
        self.script()
        server.responder = self._respond

    def script(self, **queues: list[Answer]) -> None:
        """Set the answers per request kind; each request pops its queue's next answer, the last repeats."""
        self.queues = {
            "differences": [{"differences": DIFFERENCES}],
            "dimensions": [{"differences": DIMENSION_DIFFERENCES}],
            "stages": [{"stages": STAGES}],
            "refine": [{"stages": STAGES}],
            "links": [_first_stage_links],
            "one": [_one_call],
        }
        self.queues.update({k: list(v) for k, v in queues.items()})

    def _respond(self, req: ChatRequest) -> str:
        queue = self.queues[request_kind(req)]
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        if callable(answer):
            answer = answer(req)
        return answer if isinstance(answer, str) else json.dumps(answer)

    def propose(self, action: str = "barbell squat", cfg: ProposerConfig | None = None, **kwargs: Any) -> Proposal:
        return self._run(lambda proposer: proposer.propose(action, **kwargs), cfg)

    def describe(self, action: str = "", n: int = 2, cfg: ProposerConfig | None = None) -> Proposal:
        """Describe mode as ``VidDiff`` runs it: differences along the dimensions, then stages and links."""

        async def both(proposer: Proposer) -> Proposal:
            differences = await proposer.propose_dimension_differences(action, n, None)
            return await proposer.propose(action, differences=differences)

        return self._run(both, cfg)

    def _run(self, call: Callable[[Proposer], Any], cfg: ProposerConfig | None) -> Proposal:
        endpoints = EndpointsConfig(
            default=EndpointConfig(base_url=self.server.base_url, api_key_env="VIDDIFF_TEST_KEY"), backoff_base_s=0.01
        )
        client = ChatClient(endpoints, cache=None)
        proposer = Proposer(client, cfg or ProposerConfig(model="fake-model", n_retrieval_keys=3))

        async def main() -> Proposal:
            try:
                return await call(proposer)
            finally:
                await client.aclose()

        return asyncio.run(main())

    def kinds(self) -> list[str]:
        """Kinds of the requests the server answered, in order."""
        return [request_kind(r) for r in self.server.requests]

    def of(self, kind: str) -> list[ChatRequest]:
        return [r for r in self.server.requests if request_kind(r) == kind]


@pytest.fixture
def harness(monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    monkeypatch.setenv("VIDDIFF_TEST_KEY", "dummy")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with FakeOpenAIServer() as server:
        yield Harness(server)
    assert not server.responder_errors, server.responder_errors


@pytest.fixture
def stages() -> list[dict]:
    """A fresh copy of the default stages answer, safe to edit."""
    return copy.deepcopy(STAGES)
