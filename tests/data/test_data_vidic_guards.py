"""ViDiC-1K loader under the untrusted-dataset guards: text caps, video paths, and HF cache symlinks."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from viddiff.config import DataConfig, VidicConfig
from viddiff.benchmarks.vidic.data import load_vidic
from viddiff.benchmarks.vidic.synthetic import write_synthetic_vidic
from viddiff.errors import DatasetError
from viddiff.testing.fake_hf import FakeHubServer


@pytest.fixture(scope="module")
def vidic_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_synthetic_vidic(tmp_path_factory.mktemp("vidic"), pairs=2, seed=2).parent


def _items(repo: Path) -> list[dict[str, Any]]:
    return json.loads((repo / "checklist.json").read_text())


def _checklist(tmp_path: Path, items: list[dict[str, Any]]) -> Path:
    path = tmp_path / "checklist.json"
    path.write_text(json.dumps(items))
    return path


def _load(path: Path, **data: Any):
    return load_vidic(DataConfig(benchmark="vidic", dataset=str(path), **data), VidicConfig())


def test_a_10_mb_question_is_refused_naming_item_and_field(tmp_path: Path, vidic_repo: Path) -> None:
    items = _items(vidic_repo)
    items[1]["structured_analysis"]["Differences"][0]["question"] = "Is it " + "x" * 10_000_000 + "?"
    path = _checklist(tmp_path, items)
    with pytest.raises(DatasetError) as err:
        _load(path)
    msg = str(err.value)
    assert "item 1" in msg and "structured_analysis.Differences[0].question" in msg and "data.max_text_chars" in msg
    assert len(msg) < 600


@pytest.mark.parametrize("video_path", ["../../etc/passwd", "/etc/hostname"])
def test_video_paths_outside_the_dataset_are_refused(tmp_path: Path, vidic_repo: Path, video_path: str) -> None:
    items = _items(vidic_repo)
    items[1]["video2_path"] = video_path
    path = _checklist(tmp_path, items)
    with pytest.raises(DatasetError, match=r"item 1 .*'video2_path': video path .* resolves outside"):
        _load(path)
    assert _load(path, allow_paths_outside_root=True)[1].videos[1].path == os.path.normpath(path.parent / video_path)


def test_hub_videos_symlinked_into_the_cache_blobs_are_inside(
    tmp_path: Path, vidic_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files of an HF snapshot are symlinks into the repo folder's blobs/: that folder is the dataset's own."""
    with FakeHubServer({"org/ViDiC": {"main": vidic_repo}}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        cfg = DataConfig(benchmark="vidic", dataset="hf", hf_cache_dir=str(tmp_path / "hf"))
        first = load_vidic(cfg, VidicConfig(hf_repo="org/ViDiC"))  # downloads the videos after parsing
        video = Path(first[0].videos[0].path)
        assert video.is_symlink() and "blobs" in os.path.realpath(video)
        again = load_vidic(cfg, VidicConfig(hf_repo="org/ViDiC"))  # now they exist, as symlinks into blobs/
    assert [s.videos for s in again] == [s.videos for s in first]
