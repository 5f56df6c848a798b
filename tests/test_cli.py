"""The ``viddiff`` command line itself: flags on either side of the subcommand, --version, help with defaults
for every option, hints in CLI words, what Ctrl-C says, `cache stats` layout."""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

import viddiff
from viddiff.cache import Cache
from viddiff.cli import build_parser, main
from viddiff.store import ResultsStore
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.responders import Gate, ScriptedModel


def all_parsers(parser: argparse.ArgumentParser, path: str = "viddiff") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from all_parsers(sub, f"{path} {name}")


def test_version() -> None:
    proc = subprocess.run([sys.executable, "-m", "viddiff.cli", "--version"], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == f"viddiff {viddiff.__version__}"


@pytest.mark.parametrize(
    "argv",
    [
        ["--debug", "-q", "cache", "stats"],
        ["cache", "stats", "--debug", "-q"],
        ["--debug", "cache", "stats", "--quiet"],
        ["data", "--debug", "synth", "--out", "x", "-q"],
        ["compare", "a.mp4", "b.mp4", "--debug", "-q", "--action", "squat"],
        ["-q", "run", "--mode", "closed", "--debug"],
    ],
)
def test_debug_and_quiet_before_or_after_the_subcommand(argv: list[str]) -> None:
    args = build_parser().parse_args(argv)
    assert args.debug is True and args.quiet is True


@pytest.mark.parametrize("argv", [["cache", "stats"], ["data", "synth", "--out", "x"], ["run", "--mode", "open"]])
def test_flags_default_off(argv: list[str]) -> None:
    args = build_parser().parse_args(argv)
    assert args.debug is False and args.quiet is False


def test_every_option_of_every_subcommand_says_its_default() -> None:
    missing = []
    for path, parser in all_parsers(build_parser()):
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)):
                continue
            name = "/".join(action.option_strings) or action.dest
            text = (action.help or "").lower()
            if not text:
                missing.append(f"{path} {name}: no help")
            elif action.option_strings and not action.required and "default" not in text:
                missing.append(f"{path} {name}: no default in {action.help!r}")
            elif action.option_strings and action.required and "required" not in text:
                missing.append(f"{path} {name}: required but not said")
    assert not missing, "\n".join(missing)
    proc = subprocess.run([sys.executable, "-m", "viddiff.cli", "data", "synth", "--help"], capture_output=True, text=True)
    assert "(default: 12)" in proc.stdout and "(default: 0)" in proc.stdout  # as rendered


def _leaf_commands() -> list[tuple[str, argparse.ArgumentParser]]:
    """Every command a user runs (``viddiff run``, ``viddiff data synth``, ...), not the groups above them."""
    out = []
    for path, parser in all_parsers(build_parser()):
        has_sub = any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)
        if path != "viddiff" and not has_sub:
            out.append((path, parser))
    return out


def test_every_command_help_has_a_description_and_examples_that_parse() -> None:
    """Issue 22: `viddiff run --help` showed the options only. Each page now says what the command does and
    shows examples, and every example is a command line this parser accepts."""
    import shlex

    problems = []
    commands = _leaf_commands()
    assert {"viddiff run", "viddiff compare", "viddiff eval", "viddiff cache clear"} <= {p for p, _ in commands}
    for path, parser in commands:
        text = parser.format_help()
        if not parser.description:
            problems.append(f"{path}: no description")
        examples = [line.strip() for line in (parser.epilog or "").splitlines() if line.strip().startswith("viddiff ")]
        if not (parser.epilog or "").startswith("examples:") or not examples:
            problems.append(f"{path}: no examples")
        for example in examples:
            argv = shlex.split(example.split("  #")[0])[1:]
            if not " ".join(["viddiff", *argv]).startswith(path):
                problems.append(f"{path}: example of another command: {example}")
            try:
                build_parser().parse_args(argv)
            except SystemExit:
                problems.append(f"{path}: example does not parse: {example}")
        if "examples:\n  viddiff" not in text:
            problems.append(f"{path}: examples not shown as written")
    assert not problems, "\n".join(problems)


def test_defaults_taken_from_the_config_show_their_value() -> None:
    """An option whose default is a config key says the key's built-in value too ("data.default_fps, i.e. 8")."""
    from viddiff.config import Config

    cfg = Config()
    sections = "|".join(type(cfg).model_fields)
    key = re.compile(rf"(?<!--set )\b(?:{sections})\.[a-z_]+(?:\.[a-z_]+)*\b(?!, i\.e\. )")
    bare = []
    for path, parser in all_parsers(build_parser()):
        for action in parser._actions:
            text = action.help or ""
            if "default" in text and key.search(text):
                bare.append(f"{path} {'/'.join(action.option_strings)}: {text}")
    assert not bare, "\n".join(bare)
    helps = {a.dest: a.help for a in dict(all_parsers(build_parser()))["viddiff compare"]._actions}
    assert f"data.default_fps, i.e. {cfg.data.default_fps:g}" in helps["fps"]
    assert f"proposer.describe_n_differences, i.e. {cfg.proposer.describe_n_differences}" in helps["n_differences"]
    helps = {a.dest: a.help for a in dict(all_parsers(build_parser()))["viddiff audit"]._actions}
    assert f"baseline.model, i.e. {cfg.baseline.model}" in helps["model"]


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--action", "squat"], ["--difference", "--n-differences"]),
        (["--action", "squat", "--difference", "x", "--n-differences", "2"], ["--difference", "--n-differences", "not both"]),
        (["--difference", "x"], ["--action"]),
        (["--action", "squat", "--n-differences", "0"], ["--n-differences must be at least 1"]),
    ],
)
def test_compare_hints_name_the_flags(
    tmp_path: Path, extra: list[str], words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", str(tmp_path / "a.mp4"), str(tmp_path / "b.mp4"), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("viddiff: error: ") and err.count("\n") == 1
    for word in words:
        assert word in err
    assert "n_differences" not in err and "differences (closed" not in err


def test_cache_stats_columns_line_up(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cache.sqlite"
    with Cache(path) as cache:  # namespaces shorter than the "namespace" header, sizes of different widths
        for i in range(12):
            cache.put("llm", f"k{i}", b"x" * 5000)
        cache.put("clip", "k", b"y" * 300)
    assert main(["cache", "stats", "--set", f"cache.path={path}"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.startswith("namespace"))
    rows = lines[lines.index(header) + 1:]
    assert [row.split()[0] for row in rows] == ["clip", "llm"]
    entries_end = header.index("entries") + len("entries")
    for row in rows:  # numbers right-aligned under their headers
        assert len(row) == len(header), (header, row)
        assert row[entries_end - 1] != " " and row[entries_end] == " ", (header, row)
        assert row.split()[1] in ("1", "12")


def _spawn_interruptible(command: list[str]) -> subprocess.Popen[str]:
    """The command with Ctrl-C's default action even when pytest runs as a shell's background job, which
    starts with SIGINT ignored (the child would inherit that and never be interrupted)."""
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


@pytest.mark.slow
def test_ctrl_c_says_how_to_continue(synth_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGINT (Ctrl-C) a real run after its first sample: it says how to go on, and going on works.

    Requests made once the first sample is saved wait at a gate until the signal has been handled, so the
    run cannot finish first on a machine that is slow to deliver it."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    out = tmp_path / "run"
    samples = out / "samples.jsonl"

    def first_sample_saved(_request: object = None) -> bool:
        return samples.exists() and samples.read_bytes().count(b"\n") >= 1

    gate = Gate(ScriptedModel(), matches=first_sample_saved, timeout_s=120)
    with FakeOpenAIServer(gate, latency_s=0.1) as server:
        sets = [x for item in offline_overrides(server.base_url, str(tmp_path / "c.sqlite")) for x in ("--set", item)]
        command = [sys.executable, "-m", "viddiff.cli", "run", "--dataset", str(synth_dir), "--mode", "closed",
                   "--output", str(out), "--set", "run.max_samples_in_flight=1", *sets]
        proc = _spawn_interruptible(command)
        deadline = time.time() + 180
        while time.time() < deadline and not first_sample_saved():
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=120)
        finally:
            gate.open()
        assert proc.returncode == 130, err
        last = err.strip().splitlines()[-1]
        assert last == (
            "viddiff: interrupted; finished samples are saved. "
            f"To continue, run the same command with --resume and --output {out}"
        )
        assert "Traceback" not in err
        done = len(ResultsStore(out).load())
        assert 1 <= done < 3
        resumed = subprocess.run([*command, "--resume"], capture_output=True, text=True, timeout=300)
        assert resumed.returncode == 0, resumed.stderr
        assert len(ResultsStore(out).load()) == 3


@pytest.mark.slow
def test_ctrl_c_during_localisation_says_it_is_stopping_and_abandons_the_clip_work(
    copy_dataset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22: SIGINT while CLIP embeds long videos. The run says at once that it is stopping, and the CLIP
    work in flight ends after one batch: the cache holds no embedding of the videos' frames (they are stored
    only when a video's frames are all embedded), where finishing the work would have stored all of them."""
    import numpy as np

    from viddiff.cache import Cache
    from viddiff.video.write import write_video

    rng = np.random.default_rng(0)
    long_video = tmp_path / "dataset" / "long.mp4"
    long_video.parent.mkdir()
    write_video(long_video, [rng.integers(0, 255, (64, 64, 3), dtype=np.uint8) for _ in range(320)], 8)

    def long_videos(rows: list[dict]) -> None:
        for row in rows:
            videos = json.loads(row["videos"])
            row["videos"] = json.dumps([{**v, "path": str(long_video), "fps_original": 8, "frames_trim": None} for v in videos])

    dataset = copy_dataset(long_videos)
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    cache = tmp_path / "c.sqlite"
    with FakeOpenAIServer(ScriptedModel()) as server:
        items = [*offline_overrides(server.base_url, str(cache)), "localizer.clip.model=ViT-B-32",
                 "localizer.clip.arch_config=null", "data.default_fps=8", "data.fps_by_domain={}",
                 "localizer.clip.batch_size=8"]
        command = [sys.executable, "-m", "viddiff.cli", "run", "--dataset", str(dataset), "--mode", "closed",
                   "--output", str(tmp_path / "run"), *[x for item in items for x in ("--set", item)]]
        proc = _spawn_interruptible(command)
        lines: list[str] = []
        for line in proc.stderr:  # the model loads as localisation begins; CLIP then has 320 frames to embed
            lines.append(line)
            if "RANDOM weights" in line:
                os.kill(proc.pid, signal.SIGINT)
                break
        _, rest = proc.communicate(timeout=240)
    err = "".join(lines) + rest
    assert proc.returncode == 130, err
    stopping = [line for line in err.splitlines() if "stopping: cancelling" in line]
    assert stopping == [
        "WARNING viddiff.runs.sample_runner: stopping: cancelling 3 unfinished samples (finished samples are saved); "
        "work in progress ends after its current step (one CLIP batch at most)"
    ]
    assert err.index("stopping: cancelling") < err.index("viddiff: interrupted")
    with Cache(cache) as opened:
        assert opened.stats().get("clip_image", {"entries": 0})["entries"] == 0, opened.stats()


def test_ctrl_c_of_other_commands_is_short() -> None:
    from viddiff.cli import interrupted_message

    args = build_parser().parse_args(["cache", "stats"])
    assert interrupted_message(args) == "viddiff: interrupted"
    args = build_parser().parse_args(["baseline", "--model", "m", "--mode", "closed"])
    assert "--resume" in interrupted_message(args) and "the same --output" in interrupted_message(args)
