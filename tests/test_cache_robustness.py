"""SQLite cache under faults: corrupted files, failing writes, lock contention, two processes."""

from __future__ import annotations

import json
import logging
import random
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Callable

import pytest
from pydantic import BaseModel

import viddiff.cache as cache_module
from viddiff.backends.llm import ChatClient, user_message
from viddiff.cache import Cache, CacheError
from viddiff.config import EndpointConfig, EndpointsConfig, ModelCallConfig
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer

PAGE = 4096


def _fill(path: Path, n: int = 600) -> dict[str, bytes]:
    """A real cache of ~40 pages whose values fit on b-tree leaves (so damage to a page is detectable)."""
    items = {f"k{i:04d}": (f"v{i}-".encode() * 40)[:200] for i in range(n)}
    with Cache(path) as cache:
        cache.put_many("chat", items)
    assert not Path(f"{path}-wal").exists()  # closing checkpointed everything into the main file
    return items


def _truncate_to_half(path: Path) -> None:
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size // 2)


def _garbage(path: Path) -> None:
    path.write_bytes(random.Random(1).randbytes(path.stat().st_size))


def _overwrite_pages(path: Path, first: int, count: int) -> None:
    """Random bytes over pages ``first .. first+count-1`` (1-based, as SQLite numbers them)."""
    rng = random.Random(first)
    with open(path, "r+b") as f:
        for page in range(first, first + count):
            f.seek((page - 1) * PAGE)
            f.write(rng.randbytes(PAGE))


def _overwrite_middle_pages(path: Path) -> None:
    _overwrite_pages(path, path.stat().st_size // PAGE // 3, 3)


def _overwrite_root_page(path: Path) -> None:
    """Damage the table's root, which every lookup reads."""
    conn = sqlite3.connect(path)
    (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name='entries'").fetchone()
    conn.close()
    _overwrite_pages(path, root, 1)


CORRUPTIONS: dict[str, Callable[[Path], None]] = {
    "truncated": _truncate_to_half,
    "garbage": _garbage,
    "middle": _overwrite_middle_pages,
}


def _aside(path: Path) -> list[Path]:
    """Moved-aside main files (without their sidecars)."""
    return sorted(p for p in path.parent.glob(f"{path.name}.corrupt-*") if not p.name.endswith(("-wal", "-shm")))


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "viddiff.cache" and r.levelno == logging.WARNING]


@pytest.mark.parametrize("check_on_open", [True, False], ids=["checked-on-open", "detected-during-use"])
@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_corrupted_file_is_moved_aside_and_the_run_continues(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    corruption: str,
    check_on_open: bool,
) -> None:
    path = tmp_path / "cache.sqlite"
    items = _fill(path)
    CORRUPTIONS[corruption](path)
    damaged = path.read_bytes()
    if not check_on_open:  # as for a cache too big to check on open
        monkeypatch.setattr(cache_module, "_OPEN_CHECK_MAX_BYTES", 0)
    caplog.set_level(logging.WARNING, logger="viddiff.cache")

    with Cache(path) as cache:
        for key, value in items.items():
            assert cache.get("chat", key) in (None, value)
        assert all(items[k] == v for k, v in cache.get_many("chat", list(items)).items())
        cache.put_many("chat", {"new": b"fresh", "k0000": b"recomputed"})
        assert cache.get("chat", "new") == b"fresh"
        assert cache.get("chat", "k0000") == b"recomputed"
        assert cache.integrity_check() == ["ok"]

    (aside,) = _aside(path)
    assert aside.read_bytes() == damaged
    (warning,) = _warnings(caplog)
    assert str(path) in warning and str(aside) in warning and "recomputed" in warning
    with Cache(path) as reopened:
        assert reopened.get("chat", "new") == b"fresh"
    assert len(_warnings(caplog)) == 1 and _aside(path) == [aside]


def test_empty_file_is_a_valid_cache_but_a_stub_is_not(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="viddiff.cache")
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    with Cache(empty) as cache:
        cache.put("chat", "k", b"v")
        assert cache.get("chat", "k") == b"v"
    assert _warnings(caplog) == []

    stub = tmp_path / "stub.sqlite"
    stub.write_bytes(b"SQLite format 3\x00" + b"\x01" * 20)
    with Cache(stub) as cache:
        assert cache.get("chat", "k") is None
    assert [p.read_bytes()[:4] for p in _aside(stub)] == [b"SQLi"]
    assert len(_warnings(caplog)) == 1


def test_foreign_database_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "mine.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE photos (id INTEGER)")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(CacheError, match=r"not a viddiff cache \(tables: photos\).*cache\.path"):
        Cache(path)
    assert path.read_bytes() == before and _aside(path) == []


def test_directory_in_the_way_is_reported_not_moved(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="viddiff.cache")
    path = tmp_path / "cache.sqlite"
    path.mkdir()
    with pytest.raises(CacheError, match=r"cannot open cache .*cache\.path"):
        Cache(path)
    assert path.is_dir() and _aside(path) == [] and _warnings(caplog) == []


def test_wrong_entries_table_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE entries (id INTEGER, payload TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(CacheError, match=r"columns \['id', 'payload'\]"):
        Cache(path)


def test_corrupted_file_that_cannot_be_moved_aside(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cache.sqlite"
    items = _fill(path)
    _overwrite_middle_pages(path)

    def refuse(self: Cache, reason: str) -> None:
        raise PermissionError(f"cannot rename {self.path}")

    monkeypatch.setattr(Cache, "_move_aside", refuse)
    with pytest.raises(CacheError, match=r"cannot open cache .*cannot rename"):
        Cache(path)  # on open: the user asked for a cache there, so say why there is none

    monkeypatch.setattr(cache_module, "_OPEN_CHECK_MAX_BYTES", 0)
    caplog.set_level(logging.WARNING, logger="viddiff.cache")
    with Cache(path) as cache:  # during use: carry on without a cache
        for key, value in items.items():
            assert cache.get("chat", key) in (None, value)
        cache.put("chat", "new", b"x")
        assert cache.get("chat", "new") is None
        with pytest.raises(CacheError, match="unavailable"):
            cache.stats()
    assert any("could not be reopened" in w and "continuing without a cache" in w for w in _warnings(caplog))


def test_failing_writes_are_skipped_with_one_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="viddiff.cache")
    with Cache(tmp_path / "cache.sqlite") as cache:
        cache.put("chat", "small", b"ok")
        conn = cache._connection()
        conn.execute(f"PRAGMA max_page_count={conn.execute('PRAGMA page_count').fetchone()[0]}")  # disk full
        cache.put("chat", "big", b"x" * 100_000)
        cache.put_many("chat", {"big2": b"y" * 100_000, "big3": b"z" * 100_000})
        assert cache.get("chat", "big") is None and cache.get_many("chat", ["big2", "big3"]) == {}
        assert cache.get("chat", "small") == b"ok"
        assert cache.integrity_check() == ["ok"]
        conn.execute("PRAGMA query_only=ON")  # a read-only database, even for root
        cache.put("chat", "small", b"changed")
        assert cache.get("chat", "small") == b"ok"
    warnings = _warnings(caplog)
    assert len(warnings) == 2, warnings
    assert "full" in warnings[0] and "readonly" in warnings[1]


def _chmod_protects(tmp_path: Path) -> bool:
    """Whether a 0444 file really refuses writes here (not for root with CAP_DAC_OVERRIDE)."""
    probe = tmp_path / "probe"
    probe.touch(mode=0o444)
    try:
        probe.open("ab").close()
    except PermissionError:
        return True
    return False


def test_read_only_file_serves_reads_and_skips_writes(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    if not _chmod_protects(tmp_path):
        pytest.skip("this user can write a 0444 file (root); disk-full and query_only cover failing writes")
    path = tmp_path / "cache.sqlite"
    with Cache(path) as cache:
        cache.put("chat", "k", b"v")
    path.chmod(0o444)
    caplog.set_level(logging.WARNING, logger="viddiff.cache")
    with Cache(path) as cache:
        assert cache.get("chat", "k") == b"v"
        cache.put("chat", "k2", b"w")
        assert cache.get("chat", "k2") is None
    assert any("readonly" in w for w in _warnings(caplog))


@pytest.fixture
def short_lock_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_module, "_BUSY_TIMEOUT_MS", 20)
    monkeypatch.setattr(cache_module, "_LOCK_WAIT_S", 0.3)


def _hold_write_lock(path: Path) -> sqlite3.Connection:
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    return other


@pytest.mark.timeout(30)
def test_write_blocked_by_a_stuck_writer_gives_up_after_a_bounded_wait(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, short_lock_waits: None
) -> None:
    path = tmp_path / "cache.sqlite"
    caplog.set_level(logging.WARNING, logger="viddiff.cache")
    with Cache(path) as cache:
        cache.put("chat", "k", b"old")
        other = _hold_write_lock(path)
        cache.put("chat", "k", b"new")
        assert cache.get("chat", "k") == b"old"  # WAL: reads go on while another process writes
        other.execute("ROLLBACK")
        other.close()
        cache.put("chat", "k", b"new")
        assert cache.get("chat", "k") == b"new"
    (warning,) = _warnings(caplog)
    assert "locked" in warning


@pytest.mark.timeout(30)
def test_write_retries_until_the_lock_is_released(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, short_lock_waits: None
) -> None:
    monkeypatch.setattr(cache_module, "_LOCK_WAIT_S", 20.0)  # SQLite's own wait stays 20 ms
    path = tmp_path / "cache.sqlite"
    with Cache(path) as cache:
        other = _hold_write_lock(path)
        release = threading.Timer(0.3, lambda: other.execute("COMMIT"))
        release.start()
        cache.put("chat", "k", b"v")
        release.join()
        other.close()
        assert cache.get("chat", "k") == b"v"


_STRESS_WORKER = textwrap.dedent(
    """
    import random, sys
    from viddiff.cache import Cache

    path, tag, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    KEYS = [f"k{i}" for i in range(40)]

    def value(key, who):
        return f"{key}:{who}|".encode() * (1 + int(key[1:]) * 7)

    def check(key, got):
        assert got in (None, value(key, "p1"), value(key, "p2")), (key, got[:40])

    rng = random.Random(seed)
    cache = Cache(path)
    for i in range(800):
        if i % 200 == 199:  # reopen now and then: opening races with the other process's writes
            cache.close()
            cache = Cache(path)
        key = rng.choice(KEYS)
        op = rng.random()
        if op < 0.35:
            cache.put("chat", key, value(key, tag))
        elif op < 0.5:
            cache.put_many("chat", {k: value(k, tag) for k in rng.sample(KEYS, 6)})
        elif op < 0.8:
            check(key, cache.get("chat", key))
        else:
            wanted = rng.sample(KEYS, 8)
            for k, v in cache.get_many("chat", wanted).items():
                check(k, v)
    cache.put_many("chat", {k: value(k, tag) for k in KEYS})
    cache.close()
    """
)


def _spawn(script: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", script, *args], stderr=subprocess.PIPE, text=True)


@pytest.mark.timeout(90)
def test_two_processes_hammering_the_same_keys(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"  # does not exist yet: both processes race to create it
    procs = [_spawn(_STRESS_WORKER, str(path), tag, str(seed)) for seed, tag in enumerate(("p1", "p2"))]
    errors = [p.communicate(timeout=80)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errors
    assert errors == ["", ""]  # not even a warning: no write was skipped, no lock wait ran out
    with Cache(path) as cache:
        assert cache.integrity_check() == ["ok"]
        values = cache.get_many("chat", [f"k{i}" for i in range(40)])
    assert len(values) == 40
    for key, got in values.items():
        n = 1 + int(key[1:]) * 7
        assert got in (f"{key}:p1|".encode() * n, f"{key}:p2|".encode() * n)
    assert _aside(path) == []


_OPEN_CORRUPT_WORKER = textwrap.dedent(
    """
    import sys
    import viddiff.cache
    from viddiff.cache import Cache

    path, tag, check_on_open = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
    if not check_on_open:
        viddiff.cache._OPEN_CHECK_MAX_BYTES = 0
    with Cache(path) as cache:
        keys = [f"k{i:04d}" for i in range(600)]
        assert all(v == (f"v{int(k[1:])}-".encode() * 40)[:200] for k, v in cache.get_many("chat", keys).items())
        for i in range(50):
            cache.put("chat", f"{tag}-{i}", tag.encode())
    """
)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("check_on_open", [True, False], ids=["checked-on-open", "detected-during-use"])
def test_processes_meeting_one_corrupted_file_replace_it_once(tmp_path: Path, check_on_open: bool) -> None:
    path = tmp_path / "cache.sqlite"
    _fill(path)
    _overwrite_middle_pages(path)
    damaged = path.read_bytes()
    procs = [_spawn(_OPEN_CORRUPT_WORKER, str(path), tag, str(int(check_on_open))) for tag in ("p1", "p2", "p3")]
    errors = [p.communicate(timeout=50)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], errors
    assert "is corrupted" in "".join(errors)
    (aside,) = _aside(path)  # moved aside once, by whichever process got there first
    assert aside.read_bytes() == damaged
    with Cache(path) as cache:
        assert cache.integrity_check() == ["ok"]
        assert cache.stats() == {"chat": {"entries": 150, "bytes": 150 * 2}}  # every process wrote to the new file


class Verdict(BaseModel):
    answer: str


@pytest.mark.parametrize("check_on_open", [True, False], ids=["checked-on-open", "detected-during-use"])
def test_chat_client_answers_with_a_corrupted_cache_and_caches_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, check_on_open: bool
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    if not check_on_open:
        monkeypatch.setattr(cache_module, "_OPEN_CHECK_MAX_BYTES", 0)
    caplog.set_level(logging.WARNING, logger="viddiff.cache")
    path = tmp_path / "cache.sqlite"
    _fill(path)
    _overwrite_root_page(path)

    def responder(req: ChatRequest) -> str:
        return json.dumps({"answer": "a"})

    call = ModelCallConfig(model="fake-model")
    messages = [user_message("which video is faster?")]
    with FakeOpenAIServer(responder) as server, Cache(path) as cache:
        endpoints = EndpointsConfig(default=EndpointConfig(base_url=server.base_url), max_retries=0)
        client = ChatClient(endpoints, cache=cache)
        first = client.complete_json_sync(call, messages, Verdict, stage="diff")
        second = client.complete_json_sync(call, messages, Verdict, stage="diff")
    assert first == second == Verdict(answer="a")
    assert len(server.requests) == 1
    usage = client.usage.by_stage()["diff"]
    assert usage.calls == 1 and usage.cache_hits == 1
    assert len(_aside(path)) == 1 and len(_warnings(caplog)) == 1
