"""Untrusted dataset guards: the text cap and video-path containment, on their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from viddiff.data.safety import VideoPaths, check_text_size, hf_storage_folder
from viddiff.errors import DatasetError


def test_text_cap() -> None:
    check_text_size("x" * 10, 10)
    check_text_size("x" * 10_000_000, None)
    with pytest.raises(DatasetError, match=r"11 characters, more than data.max_text_chars=10"):
        check_text_size("x" * 11, 10)


def test_relative_paths_resolve_under_the_root(tmp_path: Path) -> None:
    paths = VideoPaths.under(tmp_path)
    assert paths.resolve("videos/a.mp4") == str(tmp_path / "videos" / "a.mp4")
    assert paths.resolve("videos/../b.mp4") == str(tmp_path / "b.mp4")  # .. that stays inside is fine
    assert paths.resolve(str(tmp_path / "c.mp4")) == str(tmp_path / "c.mp4")


@pytest.mark.parametrize("raw", ["../../etc/passwd", "/etc/passwd", "a/../../x.mp4", "bad\x00name.mp4"])
def test_escaping_paths_are_refused(tmp_path: Path, raw: str) -> None:
    with pytest.raises(DatasetError):
        VideoPaths.under(tmp_path / "root").resolve(raw)


def test_every_allowed_folder_counts_and_none_is_skipped(tmp_path: Path) -> None:
    paths = VideoPaths.under(tmp_path / "videos", tmp_path / "dataset", None)
    assert paths.allowed == (tmp_path / "videos", tmp_path / "dataset")
    assert paths.resolve(str(tmp_path / "dataset" / "x.mp4")) == str(tmp_path / "dataset" / "x.mp4")
    with pytest.raises(DatasetError, match="outside the dataset's folders"):
        paths.resolve(str(tmp_path / "other" / "x.mp4"))


def test_symlinks_inside_the_folder_are_fine_escaping_ones_are_not(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "real").mkdir(parents=True)
    (root / "inner").symlink_to(root / "real")
    (tmp_path / "outside").mkdir()
    (root / "escape").symlink_to(tmp_path / "outside")
    paths = VideoPaths.under(root)
    assert paths.resolve("inner/a.mp4") == str(root / "inner" / "a.mp4")
    with pytest.raises(DatasetError, match="a symlink leads to"):
        paths.resolve("escape/a.mp4")
    assert VideoPaths.under(root, allow_outside=True).resolve("escape/a.mp4") == str(root / "escape" / "a.mp4")


def test_a_root_that_is_itself_a_symlink_works(tmp_path: Path) -> None:
    (tmp_path / "disk").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "disk")
    assert VideoPaths.under(tmp_path / "link").resolve("a.mp4") == str(tmp_path / "link" / "a.mp4")


def test_hf_snapshot_folders_map_to_the_repo_folder(tmp_path: Path) -> None:
    snapshot = tmp_path / "datasets--o--n" / "snapshots" / "abc123"
    assert hf_storage_folder(snapshot) == tmp_path / "datasets--o--n"
    assert hf_storage_folder(tmp_path / "plain") == tmp_path / "plain"
