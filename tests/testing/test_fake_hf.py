"""The local Hub server speaks the parts of the Hub's HTTP API that ``huggingface_hub`` 2.4 uses."""

from __future__ import annotations

import hashlib
import http.client
from pathlib import Path
from typing import Iterator
from urllib.parse import urlsplit

import pytest
from huggingface_hub import HfApi, hf_hub_download
from huggingface_hub.errors import RemoteEntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError
from huggingface_hub.hf_api import RepoFile

from viddiff.testing.fake_hf import FakeHubServer, git_blob_oid

BIG = bytes(range(256)) * 400


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    (folder / "data" / "sub").mkdir(parents=True)
    (folder / "README.md").write_text("hello\n")
    (folder / "data" / "videos_x.zip").write_bytes(BIG)
    (folder / "data" / "sub" / "rows.json").write_text("[]")
    (folder / ".hidden").write_text("never served")
    return folder


@pytest.fixture
def hub(repo: Path) -> Iterator[FakeHubServer]:
    with FakeHubServer({"org/Data": {"main": repo, "v1": repo}}, page_size=2) as server:
        yield server


def raw(url: str, method: str = "GET", headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    conn.request(method, parts.path + (f"?{parts.query}" if parts.query else ""), headers=headers or {})
    return conn.getresponse()


def test_tree_listing_is_paginated_and_complete(hub: FakeHubServer) -> None:
    entries = list(HfApi(endpoint=hub.url).list_repo_tree("org/Data", recursive=True, repo_type="dataset"))
    files = {e.path: e for e in entries if isinstance(e, RepoFile)}
    assert set(files) == {"README.md", "data/videos_x.zip", "data/sub/rows.json"}  # hidden files are not served
    assert files["data/videos_x.zip"].lfs.sha256 == hashlib.sha256(BIG).hexdigest()
    assert files["README.md"].lfs is None and files["README.md"].blob_id == git_blob_oid(b"hello\n")
    tree_calls = [r for r in hub.requests if "/tree/" in r.path]
    assert len(tree_calls) == 3  # 5 entries (2 folders, 3 files), 2 per page


def test_revisions_resolve_to_commits(hub: FakeHubServer) -> None:
    info = HfApi(endpoint=hub.url).dataset_info("org/Data", revision="v1")
    assert info.sha == hub.commit("org/Data", "v1") and len(info.sha) == 40


def test_hub_error_codes(hub: FakeHubServer, tmp_path: Path) -> None:
    api = HfApi(endpoint=hub.url)
    with pytest.raises(RepositoryNotFoundError):
        api.dataset_info("org/Nothing")
    with pytest.raises(RevisionNotFoundError):
        api.dataset_info("org/Data", revision="v9")
    with pytest.raises(RemoteEntryNotFoundError):
        hf_hub_download("org/Data", "missing.txt", repo_type="dataset", cache_dir=tmp_path, endpoint=hub.url)


def test_lfs_files_redirect_to_the_cdn_with_their_checksum(hub: FakeHubServer) -> None:
    commit = hub.commit("org/Data")
    head = raw(f"{hub.url}/datasets/org/Data/resolve/main/data/videos_x.zip", "HEAD")
    assert head.status == 302 and head.getheader("X-Repo-Commit") == commit
    assert head.getheader("X-Linked-Etag") == f'"{hashlib.sha256(BIG).hexdigest()}"'
    assert head.getheader("X-Linked-Size") == str(len(BIG))
    location = head.getheader("Location")
    assert location.startswith(hub.cdn_url)
    part = raw(location, headers={"Range": "bytes=1000-"})
    assert part.status == 206 and part.getheader("Content-Range") == f"bytes 1000-{len(BIG) - 1}/{len(BIG)}"
    assert part.read() == BIG[1000:]


def test_git_files_are_served_directly(hub: FakeHubServer, tmp_path: Path) -> None:
    path = hf_hub_download("org/Data", "README.md", repo_type="dataset", cache_dir=tmp_path, endpoint=hub.url)
    assert Path(path).read_text() == "hello\n"
    head = raw(f"{hub.url}/datasets/org/Data/resolve/main/README.md", "HEAD")
    oid = git_blob_oid(b"hello\n")
    assert head.status == 200 and head.getheader("ETag") == f'"{oid}"'


def test_faults(hub: FakeHubServer) -> None:
    url = raw(f"{hub.url}/datasets/org/Data/resolve/main/data/videos_x.zip", "HEAD").getheader("Location")
    hub.faults.cut_after["data/videos_x.zip"] = 5000
    with pytest.raises(http.client.IncompleteRead):
        raw(url).read()
    hub.faults.cut_after.clear()
    hub.faults.corrupt.add("data/videos_x.zip")
    body = raw(url).read()
    assert len(body) == len(BIG) and body != BIG
    hub.faults.corrupt.clear()
    hub.faults.deny.add("data/videos_x.zip")
    assert raw(url).status == 403
    hub.faults.deny.clear()
    hub.faults.ignore_range.add("data/videos_x.zip")
    assert raw(url, headers={"Range": "bytes=10-"}).status == 200
