"""One rule: whenever a stand-in (the scripted server, random CLIP weights) produced a number, every output that shows
that number says so: the console, the files, the JSON. Each case below printed or wrote such numbers without a word
(issue 32): --json-lines, --resume, the Python API on cached embeddings. (audit and ablate: their end-to-end tests,
tests/audit/test_audit_cli.py and tests/runs/test_ablate.py, check theirs; compare --json: tests/runs/test_pipeline.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from viddiff.cli import main
from viddiff.testing.fake_openai import FakeOpenAIServer

CLIP_NOTE = "stand-in: CLIP (viddiff-test-tiny-clip): random weights"
CLIP_LINE = "  - CLIP (viddiff-test-tiny-clip): random weights"
HEAD = "NOTE: stand-ins, not models, produced these results"


def _pair(synth_dir: Path) -> list[str]:
    videos = synth_dir / "videos"
    return [str(videos / "pair_0001_a.mp4"), str(videos / "pair_0001_b.mp4")]


def test_json_lines_result_names_the_stand_ins(synth_dir: Path, offline_sets: list[str], capsys) -> None:
    args = ["compare", *_pair(synth_dir), "--action", "squat", "--difference", "the squat is deeper", "--json-lines"]
    assert main([*args, *offline_sets]) == 0
    captured = capsys.readouterr()
    last = json.loads(captured.out.splitlines()[-1])
    assert last["type"] == "result"
    assert any(n.startswith(CLIP_NOTE) for n in last["result"]["notes"])
    assert any("scripted stand-in server" in n for n in last["result"]["notes"])


def test_the_python_api_says_it_with_embeddings_from_the_cache(
    synth_dir: Path, scripted_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    """Second process, same cache: CLIP never loads; the result and the log still say the weights are random."""
    from viddiff.testing import offline_overrides

    overrides = offline_overrides(scripted_server.base_url, str(tmp_path / "api.sqlite"))
    a, b = _pair(synth_dir)
    script = (
        "import json\n"
        "from viddiff import Config, compare\n"
        f"cfg = Config().with_overrides({overrides!r})\n"
        f"r = compare({a!r}, {b!r}, action='squat', differences=['the squat is deeper'], config=cfg)\n"
        "print(json.dumps(r.notes))\n"
    )
    env = {**os.environ, "OPENAI_API_KEY": "dummy"}
    for attempt in ("first", "cached"):
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env)
        assert proc.returncode == 0, proc.stderr
        notes = json.loads(proc.stdout)
        assert any(n.startswith(CLIP_NOTE) for n in notes), (attempt, notes)
        assert "has RANDOM weights" in proc.stderr, (attempt, proc.stderr)


def test_resume_keeps_the_clip_line(synth_dir: Path, offline_sets: list[str], tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    args = ["run", "--dataset", str(synth_dir), "--mode", "closed", "--output", str(out), *offline_sets]
    assert main(args) == 0
    capsys.readouterr()
    assert main([*args, "--resume"]) == 0  # nothing left to do: CLIP is not used in this session
    printed = capsys.readouterr().out
    assert HEAD in printed and CLIP_LINE in printed
    stand_ins = json.loads((out / "metrics.json").read_text())["stand_ins"]
    assert any(line.startswith(CLIP_NOTE) for line in stand_ins)
    assert CLIP_LINE in (out / "report.md").read_text()
