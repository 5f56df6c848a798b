"""ViDiC-1K edge cases where the released judge script differs from our defaults, each a named option: a blank
response (``vidic.empty_response``) and how a judge reply is read (``vidic.answer_reading``: spaces around the
answer, a reply that is not JSON). A response file on disk, the judge over a real local chat server; every
number worked out by hand below."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Optional

import pytest

from viddiff.benchmarks.vidic.data import ChecklistItem, VidicDataset
from viddiff.benchmarks.vidic.reading import read_as_released
from viddiff.benchmarks.vidic.scoring import VidicMetrics, evaluate_vidic
from viddiff.config import Config, load_config
from viddiff.schema import Sample, VideoRef
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer

REPO = Path(__file__).resolve().parents[2]


def _dataset(items: dict[str, list[str]]) -> VidicDataset:
    """Pairs with their item keys: ``s*`` similarity items (correct "no"), ``d*`` difference items ("yes")."""
    samples, checklists = [], {}
    for key, keys in items.items():
        samples.append(Sample(sample_key=key, action="vidic", action_name="", action_description="", split="vidic",
                              domain="vidic", source_dataset="vidic",
                              videos=(VideoRef(path=f"/data/{key}/a.mp4"), VideoRef(path=f"/data/{key}/b.mp4"))))
        checklists[key] = [
            ChecklistItem(key=k, kind="similarity" if k[0] == "s" else "difference", category="motion",
                          question=f"Question {key}-{k}?", correct_answer="no" if k[0] == "s" else "yes")
            for k in keys
        ]
    return VidicDataset(samples=samples, source="fixture", revision=None, root=Path("/data"), checklists=checklists)


def _question(req: ChatRequest) -> str:
    return re.search(r"<question>\n(.*?)\n</question>", req.text, flags=re.S).group(1)


def _score(
    tmp_path: Path, dataset: VidicDataset, responses: Any, judge, *sets: str, base: Optional[Config] = None
) -> tuple[VidicMetrics, list]:
    path = tmp_path / "responses.json"
    path.write_text(json.dumps(responses), encoding="utf-8")
    with FakeOpenAIServer(judge) as server:
        cfg = (base or Config()).with_overrides([f"endpoints.default.base_url={server.base_url}", "endpoints.backoff_base_s=0",
                                       "cache.enabled=false", "data.benchmark=vidic", *sets])
        return evaluate_vidic(dataset, path, cfg), list(server.requests)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")


def _description_judge(req: ChatRequest) -> str:
    """Right on a description; on a blank one, "no" to everything (nothing stated: the videos count as the same)."""
    blank = "<description>\n\n</description>" in req.text
    answer = "no" if blank or "-s" in _question(req) else "yes"
    return json.dumps({"answer": answer, "explanation": "scripted"})


def test_a_blank_response_counts_wrong_unless_judged_as_released(tmp_path: Path) -> None:
    dataset = _dataset({"p0": ["s0", "d0"], "p1": ["s0", "s1", "d0"], "p2": ["s0", "d0"]})
    responses = {"p0": "The second video is slower.", "p1": ""}  # p2 has no response at all
    ours, requests = _score(tmp_path, dataset, responses, _description_judge)
    # p0 2 of 2; p1 (blank) and p2 (missing) every item wrong: 2 of 7; similarity 1 of 4
    assert (ours.overall.avg.correct, ours.overall.avg.n, ours.overall.sim.correct) == (2, 7, 1) and len(requests) == 2
    released, requests = _score(tmp_path, dataset, responses, _description_judge, "vidic.empty_response=judge")
    # p1 is judged: its two similarity items collect "no"; p2 is still wrong (released: answer "error"): 4 of 7
    assert (released.overall.avg.correct, released.overall.avg.n, released.overall.sim.correct) == (4, 7, 3)
    assert released.overall.avg.accuracy == pytest.approx(4 / 7) and len(requests) == 5
    status = {(r.sample_key, r.key): r.status for r in released.records}
    assert status["p1", "s0"] == "judged" and status["p2", "s0"] == "no_response"
    assert released.empty_responses == ["p1", "p2"]


def test_a_null_response_is_blank_unless_judged_as_the_text_none_as_released(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 42: a null response (a failed inference call) was refused. The released judge reads every response
    as ``str(response)``, so it judges the text "None"; ``--config paper`` does that, our default counts it blank."""
    dataset = _dataset({"p0": ["s0", "d0"], "p1": ["s0", "s1", "d0"]})
    release_file = [  # the ViDiC-1K repository's response layout
        {"video1_path": "/data/p0/a.mp4", "video2_path": "/data/p0/b.mp4", "response": "The second video is slower."},
        {"video1_path": "/data/p1/a.mp4", "video2_path": "/data/p1/b.mp4", "response": None},
    ]
    seen: list[str] = []

    def judge(req: ChatRequest) -> str:
        described = re.search(r"<description>\n(.*?)\n</description>", req.text, flags=re.S).group(1)
        seen.append(described)
        answer = "no" if described in ("", "None") or "-s" in _question(req) else "yes"
        return json.dumps({"answer": answer, "explanation": "scripted"})

    ours, requests = _score(tmp_path, dataset, release_file, judge)
    # p0 2 of 2; p1 blank, not judged, every item wrong: 2 of 5
    assert (ours.overall.avg.correct, ours.overall.avg.n) == (2, 5) and len(requests) == 2
    assert ours.empty_responses == ["p1"]
    assert "a null response for 1 pair(s) (p1); they count as blank" in caplog.text
    seen.clear()
    released, requests = _score(tmp_path, dataset, release_file, judge, base=load_config("paper"))
    # p1 is judged on the text "None": its two similarity items collect "no": 4 of 5
    assert (released.overall.avg.correct, released.overall.avg.n) == (4, 5) and len(requests) == 5
    assert sorted(seen) == ["None", "None", "None", "The second video is slower.", "The second video is slower."]
    assert 'judged as the text "None", as released' in caplog.text


REPLIES = {
    "s0": '{"answer": " no ", "explanation": "nothing differs"}',
    "s1": '```json\n{"answer": " no ", "explanation": "nothing differs"}\n```',
    "d0": "Answer: yes, because the second video is slower.",
}


def test_judge_replies_are_read_structured_unless_read_as_released(tmp_path: Path) -> None:
    dataset = _dataset({"p0": ["s0", "s1", "d0"]})
    judge = lambda req: REPLIES[_question(req).split("-")[1].rstrip("?")]  # noqa: E731
    ours, requests = _score(tmp_path, dataset, {"p0": "The second video is slower."}, judge, "eval.max_reasks=1")
    # " no " is "no" (s0, s1 right); the prose reply is re-asked once, stays invalid and counts wrong: 2 of 3
    assert (ours.overall.avg.correct, ours.overall.avg.n) == (2, 3) and len(ours.judge_failures) == 1
    assert len(requests) == 4 and all(r.response_format is not None for r in requests)
    released, requests = _score(tmp_path, dataset, {"p0": "The second video is slower."}, judge,
                                "eval.max_reasks=1", "vidic.answer_reading=as_released")
    # free text, no re-ask: " no " lower-cased but not stripped is wrong twice; the pattern reads d0 "yes": 1 of 3
    assert (released.overall.avg.correct, released.overall.avg.n) == (1, 3) and released.judge_failures == []
    assert len(requests) == 3 and all(r.response_format is None for r in requests)
    answers = {r.key: (r.judge_answer, r.correct) for r in released.records}
    assert answers == {"s0": (" no ", False), "s1": (" no ", False), "d0": ("yes", True)}


def test_the_released_reading() -> None:
    assert read_as_released('{"answer": "Yes"}').matches("yes")  # lower-cased
    assert not read_as_released('{"answer": "yes "}').matches("yes")  # not stripped
    assert read_as_released("I think so.\nANSWER： no").answer == "no"  # full-width colon, any case
    unread = read_as_released("It is hard to say.")
    assert (unread.answer, unread.explanation) == ("error", "It is hard to say.")
    assert read_as_released('{"explanation": "no answer key"}').answer == "error"
    assert not read_as_released('{"answer": true}').matches("yes") and read_as_released('{"answer": true}').text == "true"
    assert read_as_released("answer: unsure because the text is vague").explanation == "the text is vague"


def test_the_release_config_switches_both_on() -> None:
    paper, ours = load_config(REPO / "configs" / "paper.yaml").vidic, Config().vidic
    assert (paper.empty_response, paper.answer_reading) == ("judge", "as_released")
    assert (ours.empty_response, ours.answer_reading) == ("wrong", "structured")
