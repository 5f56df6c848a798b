"""One headline: the VLM's answer beside the measured one, on real clips through ``viddiff compare`` over the real
local server (console, ``--json``, report), and ``differencer.evidence: decide`` letting the measurement answer."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from viddiff.cli import main
from viddiff.testing import offline_overrides

ACTION = "a person moving in a lab"


@pytest.fixture
def sets(scripted_server, pose_cache: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Offline, equal stages, the session's pose cache (each clip's pose is estimated once per session)."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    items = offline_overrides(scripted_server.base_url, str(pose_cache)) + ["localizer.method=uniform"]
    return [x for item in items for x in ("--set", item)]


def compare(video_a: Path, video_b: Path, statements: list[str], sets: list[str], *extra: str) -> list[str]:
    args = ["-q", "compare", str(video_a), str(video_b), "--action", ACTION, "--pose", *sets, *extra]
    for statement in statements:
        args += ["--difference", statement]
    return args


def test_the_headline_shows_a_vlm_letter_that_its_own_numbers_contradict(
    clip_h264: Path, sets: list[str], tmp_path: Path, capsys
) -> None:
    """The same clip twice: the forced-choice VLM picks A, the knees measure the same within noise. The console,
    --json and the report all say so, with the same words; the answer stays the VLM's (``off``, the default)."""
    report = tmp_path / "report.html"
    assert main(compare(clip_h264, clip_h264, ["the knees are straighter"], sets, "--report", str(report))) == 0
    console = capsys.readouterr().out
    assert main(compare(clip_h264, clip_h264, ["the knees are straighter"], sets, "--json")) == 0
    (d,) = json.loads(capsys.readouterr().out)["differences"]
    agreement = d["agreement"]
    assert d["prediction"] == "a" and d["evidence"]["value_a"] == d["evidence"]["value_b"]
    assert agreement["vlm"] == "a" and agreement["measured"] == "c" and agreement["outcome"] == "disagree"
    assert agreement["decided_by"] == "vlm"
    assert agreement["headline"].startswith("VLM: A · measured: same within ±") and agreement["headline"].endswith("— disagree")
    assert f"verdict: {agreement['headline']}" in console
    page = html.unescape(report.read_text())  # the report writes non-ASCII characters as entities
    assert f'<p class="agreement disagree">{agreement["headline"]}</p>' in page


def test_decide_lets_the_measurement_answer_and_c_only_where_the_options_allow_it(
    clip_h264: Path, slowed_clip: Path, sets: list[str], capsys
) -> None:
    """Tempo (no pose model needed): the 1.5× slowed copy is measured slower, which decides; on the clip against
    itself the measurement says "same", which answers ``c`` under ``abc`` and leaves the forced choice to the VLM
    under ``ab``."""
    statements = ["the person is slower", "the person is faster"]
    decide = ["--set", "differencer.evidence=decide", "--json"]
    assert main(compare(clip_h264, slowed_clip, statements, sets, *decide)) == 0
    slower, faster = json.loads(capsys.readouterr().out)["differences"]
    assert (slower["prediction"], faster["prediction"]) == ("b", "a")
    assert slower["agreement"]["decided_by"] == faster["agreement"]["decided_by"] == "measurement"
    assert slower["agreement"]["measured_words"].startswith("B (×1.5")
    assert slower["rationale"].startswith("clip length: A 1.67") and ". The VLM answered " in slower["rationale"]

    assert main(compare(clip_h264, clip_h264, statements, sets, *decide, "--set", "differencer.options=abc")) == 0
    assert [d["prediction"] for d in json.loads(capsys.readouterr().out)["differences"]] == ["c", "c"]
    assert main(compare(clip_h264, clip_h264, statements, sets, *decide)) == 0
    forced = json.loads(capsys.readouterr().out)["differences"]
    assert all(d["prediction"] in ("a", "b") and d["agreement"]["decided_by"] == "vlm" for d in forced)
    assert all(d["agreement"]["outcome"] == "disagree" for d in forced)
