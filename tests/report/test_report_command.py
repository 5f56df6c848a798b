"""``viddiff report RUN_DIR``: the pages of a finished run, built afterwards without any model call. The README's
"add --report" failed on a run already made ("already holds results; pass --resume"); this is the way instead."""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

from viddiff.testing.fake_openai import FakeOpenAIServer


def _chat_requests(server: FakeOpenAIServer) -> int:
    return len(server.requests)


def test_report_of_a_finished_open_run_equals_the_one_the_run_wrote(
    cli, synth_dir: Path, offline_sets: list[str], tmp_path: Path, scripted_server: FakeOpenAIServer
) -> None:
    """Open mode scores with a judge: the rebuild takes its answers from the run's cache and sends nothing."""
    out = tmp_path / "run"
    rc, _, err = cli(["run", "--dataset", str(synth_dir), "--mode", "open", "--output", str(out), "--report", *offline_sets])
    assert rc == 0, err
    first = tmp_path / "first-report"
    shutil.move(out / "report", first)
    before = _chat_requests(scripted_server)
    rc, stdout, err = cli(["report", str(out)])
    assert rc == 0, err
    assert stdout.strip() == f"report in {out / 'report' / 'index.html'}"
    assert _chat_requests(scripted_server) == before  # no model call
    comparison = filecmp.dircmp(first, out / "report")
    assert sorted(comparison.common_files) == sorted(p.name for p in first.iterdir()) and len(comparison.common_files) >= 3
    assert not comparison.diff_files and not comparison.left_only and not comparison.right_only
    rc, _, err = cli(["report", str(out)])  # again: rebuilt in place
    assert rc == 0, err


def test_a_judge_answer_missing_from_the_cache_stops_it_and_says_so(
    cli, synth_dir: Path, offline_sets: list[str], tmp_path: Path, scripted_server: FakeOpenAIServer
) -> None:
    out = tmp_path / "run"
    rc, _, err = cli(["run", "--dataset", str(synth_dir), "--mode", "open", "--output", str(out), *offline_sets])
    assert rc == 0, err
    (tmp_path / "cache.sqlite").unlink()  # the cache the run filled (offline_sets put it there)
    before = _chat_requests(scripted_server)
    rc, _, err = cli(["report", str(out)])
    assert rc == 2
    assert "has no answer in the cache at" in err and "nothing here calls a model" in err and "viddiff eval" in err
    assert _chat_requests(scripted_server) == before
    assert not (out / "report" / "index.html").exists()


def test_what_is_not_a_finished_run_is_refused(cli, tmp_path: Path) -> None:
    rc, _, err = cli(["report", str(tmp_path / "nowhere")])
    assert rc == 2 and "no such directory" in err
    rc, _, err = cli(["report", str(tmp_path)])
    assert rc == 2 and "not the output of viddiff run" in err
