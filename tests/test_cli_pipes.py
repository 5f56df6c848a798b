"""A reader that goes away (``viddiff ... | head -1``) ends the command quietly with exit 141, as it would
``cat`` or ``grep``: real processes writing into real pipes whose read end is closed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from viddiff.cli import EXIT_READER_GONE

VIDDIFF = [sys.executable, "-m", "viddiff.cli"]


def _compare_args(synth_dir: Path, offline_sets: list[str]) -> list[str]:
    videos = synth_dir / "videos"
    return [
        "compare", str(videos / "pair_0001_a.mp4"), str(videos / "pair_0001_b.mp4"),
        "--action", "barbell back squat", "--difference", "the squat is deeper", "--difference", "the bar is higher",
        *offline_sets,
    ]


def _finish(proc: subprocess.Popen[str]) -> tuple[int, str]:
    assert proc.stderr is not None
    stderr = proc.stderr.read()
    return proc.wait(timeout=300), stderr


def _assert_quiet_exit(returncode: int, stderr: str) -> None:
    assert returncode == EXIT_READER_GONE, stderr
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr and "Exception ignored" not in stderr, stderr


def test_json_lines_reader_gone_after_the_first_line(synth_dir: Path, offline_sets: list[str]) -> None:
    proc = subprocess.Popen(
        [*VIDDIFF, *_compare_args(synth_dir, offline_sets), "--json-lines"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first.startswith('{"type":"proposal"')
    proc.stdout.close()  # like `head -1`: the later events go into a pipe nobody reads
    _assert_quiet_exit(*_finish(proc))


def test_table_into_a_pipe_already_closed(synth_dir: Path, offline_sets: list[str]) -> None:
    proc = subprocess.Popen(
        [*VIDDIFF, *_compare_args(synth_dir, offline_sets)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert proc.stdout is not None
    proc.stdout.close()
    _assert_quiet_exit(*_finish(proc))


def test_a_listing_into_a_closed_pipe() -> None:
    proc = subprocess.Popen([*VIDDIFF, "config", "list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    proc.stdout.close()
    _assert_quiet_exit(*_finish(proc))


def test_help_into_a_closed_pipe_ends_as_argparse_ends_it() -> None:
    """argparse drops a failed help write and exits 0; quiet, which is what matters to the pipeline."""
    proc = subprocess.Popen([*VIDDIFF, "compare", "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    proc.stdout.close()
    returncode, stderr = _finish(proc)
    assert (returncode, stderr) == (0, "")


def test_an_open_pipe_still_gets_everything(synth_dir: Path, offline_sets: list[str]) -> None:
    """The handling is for a closed pipe only: a reader that stays gets the whole table and exit 0."""
    proc = subprocess.run(
        [*VIDDIFF, *_compare_args(synth_dir, offline_sets)], capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "the squat is deeper" in proc.stdout and "model calls" in proc.stdout
