"""SQLite cache: storage semantics, WAL, multi-process writers, hashing, CLI."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viddiff.cache import CACHE_SCHEMA_VERSION, Cache, CacheError, hash_key, open_cache
from viddiff.cli import main
from viddiff.config import CacheConfig


@pytest.fixture
def cache(tmp_path: Path) -> Cache:
    with Cache(tmp_path / "sub" / "dir" / "cache.sqlite") as c:
        yield c


def test_creates_parent_dirs_and_uses_wal(cache: Cache) -> None:
    assert cache.path.exists()
    conn = sqlite3.connect(cache.path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


def test_get_put_replace_and_namespaces_are_separate(cache: Cache) -> None:
    assert cache.get("chat", "k") is None
    cache.put("chat", "k", b"one")
    cache.put("clip_text", "k", b"\x00\xff binary")
    assert cache.get("chat", "k") == b"one"
    cache.put("chat", "k", b"two")
    assert cache.get("chat", "k") == b"two"
    assert cache.get("clip_text", "k") == b"\x00\xff binary"


def test_many_roundtrip_across_sql_chunks(cache: Cache) -> None:
    items = {f"key{i}": i.to_bytes(4, "little") for i in range(1234)}
    cache.put_many("clip_image", items)
    got = cache.get_many("clip_image", [*items, "missing", "key0"])
    assert got == items
    assert cache.get_many("clip_image", []) == {}
    cache.put_many("clip_image", {})


def test_stats_and_clear(cache: Cache) -> None:
    cache.put_many("chat", {"a": b"12345", "b": b"678"})
    cache.put("clip_text", "x", b"1")
    assert cache.stats() == {"chat": {"entries": 2, "bytes": 8}, "clip_text": {"entries": 1, "bytes": 1}}
    assert cache.clear("chat") == 2
    assert cache.stats() == {"clip_text": {"entries": 1, "bytes": 1}}
    assert cache.clear() == 1
    assert cache.stats() == {}


def test_writes_are_visible_to_a_new_connection_at_once(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with Cache(path) as writer:
        writer.put("chat", "k", b"v")
        with Cache(path) as reader:
            assert reader.get("chat", "k") == b"v"


def test_closed_cache_raises_clear_error(tmp_path: Path) -> None:
    c = Cache(tmp_path / "c.sqlite")
    c.close()
    c.close()
    with pytest.raises(CacheError, match="closed"):
        c.get("chat", "k")


def test_unopenable_path_names_the_file_and_setting(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a dir")
    with pytest.raises(CacheError, match=r"cache\.path"):
        Cache(blocker / "cache.sqlite")


def test_many_asyncio_tasks_share_one_cache(cache: Cache) -> None:
    async def worker(i: int) -> bytes | None:
        await asyncio.sleep(0)
        cache.put("chat", f"k{i}", str(i).encode())
        await asyncio.sleep(0)
        return cache.get("chat", f"k{i}")

    async def run() -> list[bytes | None]:
        return await asyncio.gather(*(worker(i) for i in range(50)))

    assert asyncio.run(run()) == [str(i).encode() for i in range(50)]


_WRITER = textwrap.dedent(
    """
    import sys
    from viddiff.cache import Cache
    path, tag = sys.argv[1], sys.argv[2]
    with Cache(path) as c:
        for i in range(150):
            c.put("chat", f"{tag}-{i}", tag.encode() * 10)
            if i % 10 == 0:
                c.put_many("chat", {f"{tag}-batch{i}-{j}": b"x" for j in range(5)})
    """
)


def test_concurrent_writers_from_two_processes(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    Cache(path).close()
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(path), tag], stderr=subprocess.PIPE, text=True)
        for tag in ("p1", "p2")
    ]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errors
    with Cache(path) as c:
        assert c.stats()["chat"]["entries"] == 2 * (150 + 15 * 5)
        assert c.get("chat", "p1-149") == b"p1" * 10
        assert c.get("chat", "p2-0") == b"p2" * 10


def test_hash_key_is_canonical_and_versioned() -> None:
    a = hash_key({"model": "m", "params": {"t": 0, "seed": 1}})
    b = hash_key({"params": {"seed": 1, "t": 0}, "model": "m"})
    assert a == b and len(a) == 64 and int(a, 16) >= 0
    assert hash_key({"model": "m", "params": {"t": 0, "seed": 2}}) != a
    assert hash_key([1, 2]) != hash_key([2, 1])
    assert isinstance(CACHE_SCHEMA_VERSION, int)


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=6))
def test_hash_key_ignores_insertion_order(d: dict) -> None:
    assert hash_key(d) == hash_key(dict(reversed(list(d.items()))))


def test_open_cache_respects_enabled(tmp_path: Path) -> None:
    assert open_cache(CacheConfig(enabled=False, path=str(tmp_path / "x.sqlite"))) is None
    assert not (tmp_path / "x.sqlite").exists()
    c = open_cache(CacheConfig(path=str(tmp_path / "y.sqlite")))
    assert c is not None
    c.close()
    assert (tmp_path / "y.sqlite").exists()


def test_cli_stats_and_clear(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.sqlite"
    with Cache(path) as c:
        c.put_many("chat", {"a": b"x" * 2048, "b": b"y"})
        c.put("clip_image", "i", b"z")
    opt = ["--set", f"cache.path={path}"]
    assert main(["cache", "stats", *opt]) == 0
    out = capsys.readouterr().out
    assert str(path) in out and "size on disk" in out
    assert any(line.split()[:2] == ["chat", "2"] for line in out.splitlines())
    assert any(line.split()[:2] == ["clip_image", "1"] for line in out.splitlines())
    assert main(["cache", "clear", *opt]) == 0
    assert "deleted 3 entries" in capsys.readouterr().out
    with Cache(path) as c:
        assert c.stats() == {}


def test_cli_stats_without_file_does_not_create_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "none.sqlite"
    assert main(["cache", "stats", "--set", f"cache.path={path}"]) == 0
    assert "no cache file" in capsys.readouterr().out
    assert not path.exists()
