"""What `viddiff run` leaves on disk when things go wrong (issue 11, items 5, 9, 12): shared-readable files,
a damaged line refused by name, and a full disk or file-size limit reported in one line, resumable."""

from __future__ import annotations

import json
import math
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from viddiff.cli import main
from viddiff.runs.output_lock import LOCK_FILE
from viddiff.store import ResultsStore
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel

ROOT = Path(__file__).resolve().parents[2]
PAGE = 4096
_LIMITED = (
    "import resource, signal, sys\n"
    "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the OS then reports EFBIG instead of killing the process\n"
    "resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), resource.RLIM_INFINITY))\n"
    "from viddiff.cli import main\n"
    "sys.exit(main(sys.argv[2:]))\n"
)


@pytest.fixture(scope="module")
def server():
    with pytest.MonkeyPatch.context() as env, FakeOpenAIServer(ScriptedModel()) as srv:
        env.setenv("OPENAI_API_KEY", "dummy-key")
        yield srv


def _args(synth_dir: Path, out: Path, server: FakeOpenAIServer, cache: Path, *extra: str) -> list[str]:
    items = [*offline_overrides(server.base_url, str(cache)), "run.max_samples_in_flight=1", "cache.enabled=false"]
    sets = [x for item in items for x in ("--set", item)]
    return ["-q", "run", "--dataset", str(synth_dir), "--mode", "closed", "--output", str(out), *sets, *extra]


def _one_error_line(err: str) -> str:
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("viddiff:")]
    assert len(lines) == 1 and err.rstrip().endswith(lines[0]), err
    return lines[0]


@pytest.fixture(scope="module")
def clean(synth_dir, server, tmp_path_factory) -> Path:
    """A finished run (read-only for the tests: copy it before changing it)."""
    out = tmp_path_factory.mktemp("clean") / "run"
    assert main(_args(synth_dir, out, server, out.parent / "clean.sqlite")) == 0
    return out


@pytest.mark.slow
def test_every_output_file_is_shared_readable(synth_dir, server, tmp_path):
    old = os.umask(0o022)
    try:
        out = tmp_path / "run"
        assert main([*_args(synth_dir, out, server, tmp_path / "c.sqlite"), "--save-visuals"]) == 0
    finally:
        os.umask(old)
    files = [p for p in out.rglob("*") if p.is_file()]
    names = {p.name for p in files}
    assert {"config.yaml", "run.json", "predictions.json", "usage.json", "samples.jsonl", LOCK_FILE} <= names
    assert any(p.suffix == ".png" for p in files)
    assert {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in files} == {p.name: "0o644" for p in files}


def test_a_damaged_middle_line_stops_the_resume_and_names_it(synth_dir, server, clean, tmp_path, capsys):
    out = tmp_path / "run"
    subprocess.run(["cp", "-a", str(clean), str(out)], check=True)
    lines = (out / "samples.jsonl").read_bytes().splitlines(keepends=True)
    lines[1] = lines[1][:40] + b"\n"  # e.g. a hand edit gone wrong
    (out / "samples.jsonl").write_bytes(b"".join(lines))
    before = (out / "samples.jsonl").read_bytes()
    capsys.readouterr()
    assert main([*_args(synth_dir, out, server, tmp_path / "c.sqlite"), "--resume"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "samples.jsonl: line 2 of 3 is damaged" in line and "repair or delete that line, then --resume" in line
    assert (out / "samples.jsonl").read_bytes() == before


def _run_limited(limit: int, args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", _LIMITED, str(limit), *args], capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


@pytest.mark.slow
def test_a_file_size_limit_mid_run_is_one_line_and_resumable(synth_dir, server, clean, tmp_path):
    """RLIMIT_FSIZE lets samples.jsonl take its first lines and half of the next (a real short write)."""
    lines = [len(x) for x in (clean / "samples.jsonl").read_bytes().splitlines(keepends=True)]
    # The limit falls inside the first line that ends well past config.yaml's size (half-way through it where
    # that is past config.yaml), so that it hits samples.jsonl (written line by line, one sample at a time
    # here), not config.yaml, whose size differs a little between runs (it names their paths).
    room = (clean / "config.yaml").stat().st_size + 256
    kept = next(k for k in range(len(lines)) if sum(lines[: k + 1]) > room)
    limit = max(sum(lines[:kept]) + lines[kept] // 2, room)
    assert 1 <= kept < len(lines) and limit < sum(lines[: kept + 1])
    out = tmp_path / "run"
    proc = _run_limited(limit, _args(synth_dir, out, server, tmp_path / "c.sqlite"))
    assert proc.returncode == 2, proc.stderr
    line = _one_error_line(proc.stderr)
    assert line == (
        f"viddiff: error: cannot write {out / 'samples.jsonl'}: File too large (EFBIG); "
        "finished samples are kept: fix this, then re-run with --resume"
    )
    assert (out / "samples.jsonl").stat().st_size == sum(lines[:kept])  # the torn line was rolled back
    assert len(ResultsStore(out).load()) == kept

    assert main([*_args(synth_dir, out, server, tmp_path / "c.sqlite"), "--resume"]) == 0
    assert json.loads((out / "predictions.json").read_text()) == json.loads((clean / "predictions.json").read_text())


@pytest.fixture
def tiny_disk(tmp_path):
    """A tmpfs mount of a few pages (needs root with the right to mount; skipped elsewhere)."""
    mounts: list[Path] = []

    def mount(pages: int) -> Path:
        where = tmp_path / f"disk{len(mounts)}"
        where.mkdir()
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={pages * PAGE}", "tmpfs", str(where)], capture_output=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.decode().strip()}")
        mounts.append(where)
        return where

    yield mount
    for where in mounts:
        subprocess.run(["umount", str(where)], check=True)


def test_a_full_disk_mid_run_is_one_line_and_resumable(synth_dir, server, clean, tiny_disk, tmp_path, capsys):
    """A real full file system: room for the lock note, config.yaml, run.json and the first sample only."""
    first, second = [len(x) for x in (clean / "samples.jsonl").read_bytes().splitlines(keepends=True)[:2]]
    sizes = [(clean / "config.yaml").stat().st_size, (clean / "run.json").stat().st_size, 1, first]
    assert math.ceil((first + second) / PAGE) > math.ceil(first / PAGE)
    disk = tiny_disk(sum(math.ceil(s / PAGE) for s in sizes))
    out = disk / "run"
    capsys.readouterr()
    assert main(_args(synth_dir, out, server, tmp_path / "c.sqlite")) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert line.startswith(f"viddiff: error: cannot write {out / 'samples.jsonl'}: No space left on device (ENOSPC)")
    assert (out / "samples.jsonl").stat().st_size == first

    moved = tmp_path / "moved"  # the user moves the run to a disk with room, and resumes there
    subprocess.run(["cp", "-a", str(out), str(moved)], check=True)
    assert main([*_args(synth_dir, moved, server, tmp_path / "c.sqlite"), "--resume"]) == 0
    assert json.loads((moved / "predictions.json").read_text()) == json.loads((clean / "predictions.json").read_text())


# --- links in the output directory (issue 22): never write through them --------------------------------------


@pytest.mark.parametrize("name", ["samples.jsonl", "failures.jsonl", LOCK_FILE, "report"])
def test_a_fresh_run_refuses_a_dangling_link_and_writes_nothing_outside(synth_dir, server, tmp_path, capsys, name):
    out, outside = tmp_path / "run", tmp_path / "elsewhere" / "target"
    out.mkdir()
    outside.parent.mkdir()
    (out / name).symlink_to(outside)
    capsys.readouterr()
    extra = ["--report"] if name == "report" else []
    assert main([*_args(synth_dir, out, server, tmp_path / "c.sqlite"), *extra]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert line == (
        f"viddiff: error: {out / name} is a symbolic link (to {outside}); viddiff never writes through a link in "
        "its output directory: remove the link, or choose another --output"
    )
    assert list(outside.parent.iterdir()) == []
    assert not (out / "config.yaml").exists()  # refused before anything was written


def test_resume_refuses_a_linked_results_file_and_leaves_its_target_alone(synth_dir, server, clean, tmp_path, capsys):
    out = tmp_path / "run"
    subprocess.run(["cp", "-a", str(clean), str(out)], check=True)
    target = tmp_path / "kept-elsewhere.jsonl"
    (out / "samples.jsonl").rename(target)
    lines = target.read_bytes().splitlines(keepends=True)
    target.write_bytes(b"".join(lines[:1]))  # one sample missing: a resume would append to the target
    (out / "samples.jsonl").symlink_to(target)
    before = target.read_bytes()
    capsys.readouterr()
    assert main([*_args(synth_dir, out, server, tmp_path / "c.sqlite"), "--resume"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert line.startswith(f"viddiff: error: {out / 'samples.jsonl'} is a symbolic link (to {target})")
    assert target.read_bytes() == before


def test_appending_to_a_results_log_never_follows_a_link(tmp_path):
    """The guard at the appends themselves, for a link made after the run's start check."""
    target = tmp_path / "target.jsonl"
    target.write_bytes(b"")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "samples.jsonl").symlink_to(target)
    store = ResultsStore(tmp_path / "out")
    from viddiff.errors import OutputError
    from viddiff.schema import SampleResult

    with pytest.raises(OutputError, match="is a symbolic link"):
        store.append(SampleResult(sample_key="s", index=0, mode="closed"))
    with pytest.raises(OutputError, match="is a symbolic link"):
        store.load()
    assert target.read_bytes() == b""
