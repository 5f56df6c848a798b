"""IF-VidCap end to end, offline: `viddiff data synth` → `viddiff run --benchmark ifvidcap` (the LMM captions under
the benchmark's system prompt, the judges check) → hand-computed scores, the benchmark's response layout,
`viddiff eval` on it, a failed sample in errors.json completed by --resume, the HTML report, and `viddiff
audit` refused with the reason."""

from __future__ import annotations

import csv
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from viddiff.cli import main
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer, HTTPFault
from viddiff.testing.responders import FailingWhen, ScriptedModel
from viddiff.store import ResultsStore

JSON_PROMPT = "Return a JSON object with the keys"
EXPECTED = {
    # Worked out by hand in docs/captioning.md ("The demo run"): the scripted captioner states the colour and
    # the direction it sees, writes a list, JSON or prose as asked, and ignores the lowercase instruction.
    "overall": {"isr": 62.5, "csr_micro": 87.5, "csr_macro": 90.625, "constraints": 24, "satisfied_constraints": 21},
    "rule": {"isr": 100 * 4 / 6, "csr_micro": 100 * 12 / 14, "csr_macro": 100 * 8 / 9, "constraints": 14},
    "open": {"isr": 87.5, "csr_micro": 90.0, "csr_macro": 93.75, "constraints": 10},
}


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ifvidcap-e2e")
    assert main(["data", "synth", "--benchmark", "ifvidcap", "--out", str(out), "--pairs", "2", "--seed", "0"]) == 0
    return out


def _sets(server: FakeOpenAIServer, tmp_path: Path) -> list[str]:
    return [arg for item in offline_overrides(server.base_url, str(tmp_path / "cache.sqlite")) for arg in ("--set", item)]


def _refuse(req: ChatRequest):
    raise HTTPFault(400, "this request is refused", code="content_filter")


def _is_json_caption(req: ChatRequest) -> bool:
    return bool(req.images) and JSON_PROMPT in req.text


def test_run_scores_as_worked_out_and_resume_completes_a_failed_sample(synth: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    responder = FailingWhen(ScriptedModel(), _is_json_caption, _refuse)
    out = tmp_path / "run"
    with FakeOpenAIServer(responder) as server:
        args = ["-q", "run", "--benchmark", "ifvidcap", "--dataset", str(synth), "--output", str(out), "--report", *_sets(server, tmp_path)]
        assert main(args) == 1
        assert "2 of 8 samples failed" in capsys.readouterr().out
        errors = json.loads((out / "errors.json").read_text())
        assert sorted(e["sample_key"] for e in errors) == ["clip_001/03", "clip_002/03"]
        partial = json.loads((out / "metrics.json").read_text())["metrics"]
        assert partial["empty_responses"] == ["clip_001/03", "clip_002/03"]
        responder.active = False
        n_before = len(server.requests)
        assert main([*args, "--resume"]) == 0
        captions = [r for r in server.requests[n_before:] if r.images]
        assert len(captions) == 2  # only the two failed samples are captioned again
        n_before = len(server.requests)  # eval re-scores the response layout from the cache alone
        assert main(["-q", "eval", "--benchmark", "ifvidcap", "--dataset", str(synth), "--predictions",
                     str(out / "predictions.json"), "--output", str(tmp_path / "eval"), *_sets(server, tmp_path)]) == 0
        assert len(server.requests) == n_before
    assert not (out / "errors.json").exists()

    results = ResultsStore(out).load()
    first = results["clip_001/01"]
    assert first.method == "lmm:gpt-4o-2024-08-06" and first.mode == "caption" and first.response.startswith("- the background is")
    predictions = json.loads((out / "predictions.json").read_text())
    assert list(predictions) == ["clip_001", "clip_002"]
    assert [e["prompt_id"] for e in predictions["clip_001"]] == ["01", "02", "03", "04"]
    assert predictions["clip_001"][0]["response"] == first.response

    scores = json.loads((out / "metrics.json").read_text())["metrics"]["scores"]
    for kind, expected in EXPECTED.items():
        for key, value in expected.items():
            assert scores[kind][key] == pytest.approx(value), (kind, key)
    rows = list(csv.DictReader((out / "constraints.csv").open(newline="")))
    assert len(rows) == 14 + 11 + 1  # 14 rule items, 11 open questions in 10 groups, and the empty group
    assert sum(r["passed"] == "True" for r in rows) == 12 + 11
    assert "CSR (micro, released)" in (out / "report.md").read_text()

    rescored = json.loads((tmp_path / "eval" / "metrics.json").read_text())["metrics"]["scores"]
    assert rescored == scores

    page = (out / "report" / "0001-clip_001_02.html").read_text()
    assert "Describe the video in one paragraph of plain text" in page and "frames per second" in page
    assert first.response.splitlines()[0] in (out / "report" / "0000-clip_001_01.html").read_text()
    checks = _check_rows(page)
    assert ("case: All in lowercase.", "false") in checks and ("plain_text: Plain text.", "true") in checks
    index = (out / "report" / "index.html").read_text()
    assert "3 of 4 constraints" in index and "CSR (macro, Eq. 1)" in index


class _Checks(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, str]] = []
        self._passed: str | None = None
        self._cell = 0
        self._text = ""

    def handle_starttag(self, tag: str, attrs) -> None:
        a = dict(attrs)
        if tag == "tr" and a.get("class") == "check":
            self._passed, self._cell = a["data-passed"], 0
        elif tag == "td" and self._passed is not None:
            self._cell += 1

    def handle_data(self, data: str) -> None:
        if self._passed is not None and self._cell == 1:
            self._text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "tr" and self._passed is not None:
            self.rows.append((self._text.strip(), self._passed))
            self._passed, self._text = None, ""


def _check_rows(page: str) -> list[tuple[str, str]]:
    parser = _Checks()
    parser.feed(page)
    return parser.rows


def test_the_viddiff_method_is_refused_and_audit_says_why(synth: Path, tmp_path: Path, capsys) -> None:
    base = ["--benchmark", "ifvidcap", "--dataset", str(synth), "--set", f"cache.path={tmp_path / 'c.sqlite'}"]
    assert main(["-q", "run", *base, "--method", "viddiff", "--output", str(tmp_path / "x")]) == 2
    assert re.search(r"method viddiff cannot answer caption mode .*--method baseline can", capsys.readouterr().err)
    assert main(["-q", "audit", *base, "--mode", "closed", "--output", str(tmp_path / "audit")]) == 2
    assert "viddiff audit needs a/b answers to swap (VidDiffBench, closed or open) or pairs of single-video questions" \
        " to show together (VidPair-Halluc), not ifvidcap" in capsys.readouterr().err
