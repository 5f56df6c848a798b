"""Tests for viddiff.console and the console of real ``viddiff`` processes: one line per event, bars that
behave on a terminal and stay out of log files, no library noise unless --debug."""

from __future__ import annotations

import fcntl
import http.server
import io
import logging
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

from viddiff.cli import main
from viddiff.console import ONCE_PER_RUN, ConsoleHandler, console_session, stage_progress
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.video.write import write_video

CURSOR_CODES = re.compile(r"\r|\x1b\[")
NATIVE_NOISE = ("moov atom", "video_reader.cc", "[mov,mp4", "@ 0x", "Parsing model identifier", "x265 [")


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "viddiff.cli", *args]


def run_cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli(*args), capture_output=True, text=True, timeout=timeout)


def run_in_terminal(command: list[str], timeout: float = 300) -> tuple[int, str]:
    """Run ``command`` with a pseudo-terminal (100 columns) as stdin/stdout/stderr; return its exit code and output."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    proc = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.time() + timeout
    while time.time() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    proc.wait(timeout=10)
    os.close(master)
    return proc.returncode, b"".join(chunks).decode("utf-8", "replace")


# --------------------------------------------------------------------------- handler and progress units


@pytest.fixture
def session_stream() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    with console_session(stream=stream):
        yield stream


def test_once_per_run_message_is_said_once_and_never_again() -> None:
    """Issue 22: the end of a run no longer repeats the message with a count (it was said twice)."""
    stream = io.StringIO()
    log = logging.getLogger("viddiff.video")
    with console_session(stream=stream):
        for _ in range(3):
            log.warning("target fps %g is not an integer divisor of %g fps", 4, 30, extra=ONCE_PER_RUN)
        log.warning("a per-file problem")
        log.warning("a per-file problem")
    lines = stream.getvalue().splitlines()
    assert [line for line in lines if "target fps" in line] == [
        "WARNING viddiff.video: target fps 4 is not an integer divisor of 30 fps"
    ]
    assert lines.count("WARNING viddiff.video: a per-file problem") == 2  # unmarked messages are not collapsed


def test_session_levels_and_restore() -> None:
    stream = io.StringIO()
    root, package = logging.getLogger(), logging.getLogger("viddiff")
    before = (root.level, package.level, list(root.handlers))
    with console_session(stream=stream):
        logging.getLogger("viddiff.runs.pipeline").info("resuming")
        logging.getLogger("httpx").info("HTTP Request: POST http://x")
        logging.info("Parsing model identifier. Schema: None")  # open_clip logs through the root logger
        logging.getLogger("httpx").warning("a library warning")
    assert "INFO viddiff.runs.pipeline: resuming" in stream.getvalue()
    assert "HTTP Request" not in stream.getvalue() and "Parsing model" not in stream.getvalue()
    assert "WARNING httpx: a library warning" in stream.getvalue()
    assert (root.level, package.level, list(root.handlers)) == before

    quiet, debug = io.StringIO(), io.StringIO()
    with console_session(quiet=True, stream=quiet):
        logging.getLogger("viddiff.runs.pipeline").info("resuming")
        logging.getLogger("viddiff.runs.pipeline").warning("careful")
    with console_session(debug=True, stream=debug):
        logging.getLogger("httpx").debug("HTTP Request: POST http://x")
    assert quiet.getvalue() == "WARNING viddiff.runs.pipeline: careful\n"
    assert "DEBUG httpx: HTTP Request" in debug.getvalue()


def test_root_records_are_named_by_their_package() -> None:
    handler = ConsoleHandler(io.StringIO())
    record = logging.LogRecord("root", logging.WARNING, "/venv/lib/site-packages/open_clip/factory.py", 1, "w", (), None)
    handler.handle(record)
    assert handler.stream.getvalue() == "WARNING open_clip: w\n"


def test_plain_progress_lines_off_a_terminal(session_stream: io.StringIO) -> None:
    bars = stage_progress(["proposer", "differencer"], 3, stream=session_stream, interval_s=0.0)
    bars["proposer"].update(1)
    bars["differencer"].update(1)
    for bar in bars.values():
        bar.close()
    lines = session_stream.getvalue().splitlines()
    assert lines[0].startswith("INFO viddiff.progress: proposer 1/3, differencer 0/3 samples")
    assert lines[-1].startswith("INFO viddiff.progress: proposer 1/3, differencer 1/3 samples")
    assert len(lines) == 3 and not CURSOR_CODES.search(session_stream.getvalue())


def test_plain_progress_is_periodic(session_stream: io.StringIO) -> None:
    bars = stage_progress(["proposer"], 100, stream=session_stream, interval_s=3600)
    for _ in range(100):
        bars["proposer"].update(1)
    assert session_stream.getvalue() == ""  # nothing until the interval passes...
    bars["proposer"].close()
    assert session_stream.getvalue().count("\n") == 1  # ...and one last line


def test_quiet_has_no_progress() -> None:
    stream = io.StringIO()
    with console_session(quiet=True, stream=stream):
        bars = stage_progress(["proposer"], 2, stream=stream, interval_s=0.0)
        bars["proposer"].update(2)
        bars["proposer"].close()
    assert stream.getvalue() == ""


# --------------------------------------------------------------------------- real processes


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Real files: good clips (8 fps, so 4 fps needs no rounding), a text file, a truncated MP4, VP9, AV1, a phone clip."""
    root = tmp_path_factory.mktemp("console-media")

    def frames(n: int) -> list[np.ndarray]:
        return [np.full((48, 64, 3), 20 + 7 * i, np.uint8) for i in range(n)]

    good = write_video(root / "good.mp4", frames(24), 8)
    cut = root / "cut.mp4"
    cut.write_bytes(good.read_bytes()[:1500])
    text = root / "text.mp4"
    text.write_text("not a video\n" * 50)
    return {
        "good": good,
        "good_b": write_video(root / "good_b.mp4", frames(24), 8),
        "odd_fps": write_video(root / "odd.mp4", frames(30), 10),
        "odd_fps_b": write_video(root / "odd_b.mp4", frames(30)[::-1], 10),
        "cut": cut,
        "text": text,
        "vp9": write_video(root / "clip.webm", frames(24), 8, "libvpx-vp9"),
        "phone": write_video(root / "phone.mp4", frames(24), 8, display_rotation=90),
    }


@pytest.mark.parametrize(("bad", "backend"), [("cut", "auto"), ("text", "auto"), ("cut", "decord"), ("text", "pyav")])
def test_bad_file_is_one_error_line(media: dict[str, Path], bad: str, backend: str, capfd: pytest.CaptureFixture[str]) -> None:
    """Everything written to the process's stderr (C libraries included) is the one error line."""
    code = main([
        "compare", str(media[bad]), str(media["good"]), "--action", "squat", "--difference", "deeper",
        "--set", f"data.video_backend={backend}",
    ])
    err = capfd.readouterr().err
    assert code == 2
    assert err.splitlines() == [err.strip()] and err.startswith("viddiff: error: ")
    assert str(media[bad]) in err
    assert not any(noise in err for noise in NATIVE_NOISE)


def test_bad_file_in_a_real_process(media: dict[str, Path]) -> None:
    """The same through a separate ``viddiff`` process, decord forced: its FFmpeg and C++ logs stay silent."""
    proc = run_cli(
        "compare", str(media["text"]), str(media["good"]), "--action", "squat", "--difference", "deeper",
        "--set", "data.video_backend=decord",
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [proc.stderr.strip()] and proc.stderr.startswith("viddiff: error: ")
    assert "not a readable video (Invalid data found when processing input)" in proc.stderr


def test_debug_shows_what_ffmpeg_said(media: dict[str, Path], capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["--debug", "compare", str(media["cut"]), str(media["good"]), "--action", "squat", "--difference", "x"]) == 2
    err = capfd.readouterr().err
    assert "libav" in err  # FFmpeg's own message about the broken file, as a log record
    assert "Traceback" in err


def test_data_check_on_edge_files_is_quiet(media: dict[str, Path], synth_dir: Path, tmp_path: Path) -> None:
    """The synthetic benchmark's rows with edge files as videos: problems listed on stdout, stderr silent."""
    import json

    pairs = [("good", "vp9"), ("phone", "cut"), ("text", "good_b")]
    rows = [json.loads(line) for line in (synth_dir / "dataset.jsonl").read_text().splitlines()]
    for row, (a, b) in zip(rows, pairs):
        row["videos"] = json.dumps([{"path": str(media[a]), "fps_original": 8}, {"path": str(media[b]), "fps_original": 8}])
    (tmp_path / "dataset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[: len(pairs)]))
    proc = run_cli("data", "check", "--dataset", str(tmp_path), "--set", "data.allow_paths_outside_root=true")
    assert proc.returncode == 1, proc.stderr
    assert "2 of 6 videos cannot be used" in proc.stdout
    assert str(media["cut"]) in proc.stdout and str(media["text"]) in proc.stdout
    assert proc.stderr == ""  # no FFmpeg, decord or progress-bar output when stderr is not a terminal


def offline_args(server: FakeOpenAIServer, cache: Path) -> list[str]:
    from viddiff.testing import offline_overrides

    return [x for item in offline_overrides(server.base_url, str(cache)) for x in ("--set", item)]


def test_open_clip_chatter_only_with_debug(
    media: dict[str, Path], offline_sets: list[str], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    compare = ["compare", str(media["odd_fps"]), str(media["good"]), "--action", "squat", "--difference", "deeper"]
    assert main([*compare, *offline_sets]) == 0
    err = capfd.readouterr().err
    assert "Parsing model identifier" not in err and "INFO" not in err
    assert err.count("not an integer divisor of 10 fps") == 1 and "videos in this run" not in err
    # our own warning says the weights are random; open_clip's line saying the same stays out (issue 22)
    assert err.count("has RANDOM weights") == 1 and "No pretrained weights loaded" not in err
    fresh_cache = ["--set", f"cache.path={tmp_path / 'debug.sqlite'}"]  # so CLIP is loaded again
    assert main(["--debug", *compare, *offline_sets, *fresh_cache]) == 0
    err = capfd.readouterr().err
    assert "Parsing model identifier" in err and "No pretrained weights loaded" in err


def test_python_api_says_each_warning_once_and_leaves_the_apps_logging_alone(
    media: dict[str, Path], scripted_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    """``viddiff.compare`` in an app that configured no logging: one stride warning for the pair (not one per
    video), our random-weights warning and not open_clip's, and no handler left on the root logger (open_clip's
    module-level ``logging.warning`` would otherwise have run ``basicConfig`` on the app's behalf)."""
    from viddiff.testing import offline_overrides

    overrides = offline_overrides(scripted_server.base_url, str(tmp_path / "api.sqlite"))
    script = (
        "import logging\n"
        "from viddiff import Config, compare\n"
        f"cfg = Config().with_overrides({overrides!r})\n"
        f"r = compare({str(media['odd_fps'])!r}, {str(media['odd_fps_b'])!r}, action='squat', "
        "differences=['deeper'], config=cfg, fps=4)\n"
        "print(len(logging.getLogger().handlers))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
        env={**os.environ, "OPENAI_API_KEY": "dummy"},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0"]
    lines = proc.stderr.splitlines()
    assert sum("not an integer divisor of 10 fps" in line for line in lines) == 1, lines
    assert sum("has RANDOM weights" in line for line in lines) == 1, lines
    assert not any("No pretrained weights" in line or line.startswith("WARNING:root") for line in lines), lines


@pytest.mark.slow
def test_run_log_has_plain_progress_and_one_warning_per_kind(
    synth_dir: Path, scripted_server: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """stderr to a file (as under nohup or CI): no cursor codes, progress as plain lines, repeated warnings counted."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    proc = run_cli(
        "run", "--dataset", str(synth_dir), "--mode", "closed", "--output", str(tmp_path / "out"),
        "--set", "data.default_fps=5", "--set", "data.fps_by_domain={}",  # 8 fps clips: stride 2 gives 4, not 5
        *offline_args(scripted_server, tmp_path / "c.sqlite"),
    )
    assert proc.returncode == 0, proc.stderr
    assert not CURSOR_CODES.search(proc.stderr)
    progress = [line for line in proc.stderr.splitlines() if "viddiff.progress" in line]
    assert progress and "differencer 3/3 samples" in progress[-1]
    stride = [line for line in proc.stderr.splitlines() if "not an integer divisor" in line]
    assert len(stride) == 1 and "videos in this run" not in proc.stderr  # said once, never repeated
    assert not any(noise in proc.stderr for noise in NATIVE_NOISE)


@pytest.mark.slow
def test_log_lines_never_break_a_bar(
    synth_dir: Path, scripted_server: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    code, output = run_in_terminal(cli(
        "run", "--dataset", str(synth_dir), "--mode", "closed", "--output", str(tmp_path / "out"),
        "--set", "data.default_fps=5", "--set", "data.fps_by_domain={}",
        *offline_args(scripted_server, tmp_path / "c.sqlite"),
    ))
    assert code == 0, output
    assert "differencer: 100%" in output  # bars were drawn
    logged = 0
    for segment in re.split(r"[\r\n]", output):
        segment = segment.replace("\x1b[A", "")
        for level in ("WARNING viddiff", "INFO viddiff"):
            if level in segment:
                logged += 1
                # the line holds the log record alone: no bar before it, none glued after it
                assert segment.startswith(level), repr(segment)
                assert "%|" not in segment, repr(segment)
    assert logged >= 2  # the random-CLIP and the stride warnings at least


class _Unavailable(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self.send_response(503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_huggingface_hub_retry_warnings_are_printed_once(tmp_path: Path) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Unavailable)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/api/datasets/x"
    script = (
        "from viddiff.console import console_session\n"
        "from huggingface_hub.utils import http_backoff\n"
        "with console_session():\n"
        "    try:\n"
        f"        http_backoff('GET', {url!r}, max_retries=2, base_wait_time=0.01, max_wait_time=0.02)\n"
        "    except Exception as exc:\n"
        "        pass\n"
    )
    try:
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    finally:
        server.shutdown()
    lines = proc.stderr.splitlines()
    assert sum("Retrying in" in line for line in lines) == 2  # one per retry, not two
    assert all(line.startswith("WARNING huggingface_hub") for line in lines), lines
