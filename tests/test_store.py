"""Results files: only a torn last line is ever dropped, failed writes leave nothing behind, modes follow the umask."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from viddiff.schema import SampleResult
from viddiff.store import DamagedLogError, ResultsStore, write_text_atomic


def _result(key: str, note: str = "") -> SampleResult:
    return SampleResult(sample_key=key, index=int(key[1:]), mode="closed", notes=[note] if note else [])


def _store_with(tmp_path: Path, n: int) -> ResultsStore:
    store = ResultsStore(tmp_path)
    for i in range(n):
        store.append(_result(f"s{i}"))
    return store


def test_torn_last_line_is_dropped_and_the_rest_kept(tmp_path):
    store = _store_with(tmp_path, 3)
    data = store.path.read_bytes()
    store.path.write_bytes(data[:-20])  # a kill in the middle of the third append
    assert list(store.load()) == ["s0", "s1"]
    assert store.path.read_bytes() == b"".join(data.splitlines(keepends=True)[:2])


def test_a_complete_last_record_without_newline_is_kept(tmp_path):
    store = _store_with(tmp_path, 2)
    store.path.write_bytes(store.path.read_bytes().rstrip(b"\n"))  # e.g. an editor dropped the final newline
    assert list(store.load()) == ["s0", "s1"]
    assert store.path.read_bytes().endswith(b"}\n")
    store.append(_result("s2"))
    assert list(store.load()) == ["s0", "s1", "s2"]


@pytest.mark.parametrize("damage", [b'{"sample_key": "s1", "ind', b"\x00" * 40, b"not json at all"])
def test_a_damaged_middle_line_is_an_error_naming_it_and_nothing_changes(tmp_path, damage):
    store = _store_with(tmp_path, 3)
    lines = store.path.read_bytes().splitlines(keepends=True)
    lines[1] = damage + b"\n"
    store.path.write_bytes(b"".join(lines))
    before = store.path.read_bytes()
    with pytest.raises(DamagedLogError, match=r"samples.jsonl: line 2 of 3 is damaged .*repair or delete that line"):
        store.load()
    assert store.path.read_bytes() == before


def test_blank_lines_are_ignored(tmp_path):
    store = _store_with(tmp_path, 2)
    lines = store.path.read_bytes().splitlines(keepends=True)
    store.path.write_bytes(lines[0] + b"\n" + lines[1])
    assert list(store.load()) == ["s0", "s1"]


def test_a_sample_written_twice_is_an_error(tmp_path):
    store = _store_with(tmp_path, 2)
    store.append(_result("s1"))
    with pytest.raises(DamagedLogError, match="sample s1 appears twice"):
        store.load()


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_created_files_follow_the_umask(tmp_path, mask, mode):
    old = os.umask(mask)
    try:
        write_text_atomic(tmp_path / "config.yaml", "a: 1\n")
        _store_with(tmp_path, 1)
    finally:
        os.umask(old)
    for name in ("config.yaml", "samples.jsonl"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == mode, name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.yaml", "samples.jsonl"]  # no temp file left


_SHORT_WRITE = textwrap.dedent(
    """
    import resource, signal, sys
    from viddiff.errors import OutputError
    from viddiff.schema import SampleResult
    from viddiff.store import ResultsStore, write_text_atomic

    store = ResultsStore(sys.argv[1])
    write_text_atomic(store.path.with_name("report.md"), "old report\\n")
    store.append(SampleResult(sample_key="s0", index=0, mode="closed"))
    size = store.path.stat().st_size
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # so the OS reports EFBIG instead of killing us
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + 40, resource.RLIM_INFINITY))
    try:
        store.append(SampleResult(sample_key="s1", index=1, mode="closed", notes=["x" * 500]))
    except OutputError as exc:
        print(exc)
    try:
        write_text_atomic(store.path.with_name("report.md"), "y" * (size + 100))
    except OutputError as exc:
        print(exc)
    """
)


def test_failed_writes_are_rolled_back_and_reported_in_one_line(tmp_path):
    """RLIMIT_FSIZE makes the kernel accept only part of a write (a real short write), then refuse (EFBIG):
    the append leaves no partial line, the atomic write leaves the old file and no temp file."""
    proc = subprocess.run(
        [sys.executable, "-c", _SHORT_WRITE, str(tmp_path)], capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        f"cannot write {tmp_path / 'samples.jsonl'}: File too large (EFBIG)",
        f"cannot write {tmp_path / 'report.md'}: File too large (EFBIG)",
    ]
    assert list(ResultsStore(tmp_path).load()) == ["s0"]
    assert (tmp_path / "samples.jsonl").read_bytes().endswith(b"}\n")
    assert (tmp_path / "report.md").read_text() == "old report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md", "samples.jsonl"]
