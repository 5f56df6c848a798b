"""A local server that speaks the Hugging Face Hub's HTTP API for dataset repos, for tests and demos.

Real sockets on 127.0.0.1, so ``huggingface_hub`` (pointed at it through
``HF_ENDPOINT`` or an ``endpoint`` argument) is exercised end to end. It
serves what ``huggingface_hub`` 2.4 asks for when it snapshots a repo or
fetches one file:

* ``GET /api/datasets/{repo}[/revision/{rev}]``: repo info with the commit ``sha``;
* ``GET /api/datasets/{repo}/tree/{rev}[/{path}]?recursive=...``: the file listing
  (git ``oid`` and size, ``lfs.oid`` = sha256 for LFS files), paginated with a
  ``Link: <...>; rel="next"`` header like the Hub;
* ``HEAD|GET /datasets/{repo}/resolve/{rev}/{path}``: files kept in git are
  answered directly (``ETag`` = git blob sha1, ``X-Repo-Commit``); LFS files
  redirect with ``302`` to a second port standing in for the CDN, carrying
  ``X-Linked-Etag`` (sha256) and ``X-Linked-Size`` like the Hub does;
* ``HEAD|GET /{repo}/resolve/{rev}/{path}``: the same for a file of a model repo (one file fetched by
  ``hf_hub_download``, such as a tokenizer model);
* byte ranges (``Range: bytes=N-`` -> ``206``), so interrupted downloads resume;
* 404s with the Hub's ``X-Error-Code`` (``RepoNotFound``, ``RevisionNotFound``,
  ``EntryNotFound``).

A repo is a mapping revision name -> local folder; ``main`` is the default
branch. Each revision gets a deterministic commit sha. Faults can be
injected per file (:class:`HubFaults`) and every request is recorded.

Example::

    with FakeHubServer({"org/Bench": {"main": Path("repo_dir")}}) as hub:
        os.environ["HF_ENDPOINT"] = hub.url
        ...
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from types import TracebackType
from typing import Mapping, Optional
from urllib.parse import parse_qs, quote, unquote, urlsplit

from viddiff.testing.http_server import LocalHTTPServer

LFS_SUFFIXES = (".parquet", ".zip", ".mp4", ".tar", ".bin")
"""Files served as LFS objects (as a typical dataset repo's ``.gitattributes`` would declare)."""
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class ServedFile:
    path: str
    size: int
    git_oid: str
    sha256: str
    lfs: bool
    local: Path


@dataclass(frozen=True)
class Revision:
    name: str
    commit: str
    files: dict[str, ServedFile]

    def folders(self) -> list[str]:
        out = {str(Path(p).parent) for p in self.files} - {"."}
        for folder in list(out):
            out.update(str(parent) for parent in Path(folder).parents if str(parent) != ".")
        return sorted(out)


@dataclass
class HubFaults:
    """Failures injected into file downloads (by repo file path)."""

    cut_after: dict[str, int] = field(default_factory=dict)
    """Send only this many body bytes of the file, then drop the connection (each GET, until removed)."""
    cut_times: dict[str, int] = field(default_factory=dict)
    """How many GETs ``cut_after`` applies to (default: every one)."""
    corrupt: set[str] = field(default_factory=set)
    """Serve the file with one byte changed (same size), as a damaged mirror would."""
    ignore_range: set[str] = field(default_factory=set)
    """Answer ``200`` with the whole file even when a byte range was asked for."""
    deny: set[str] = field(default_factory=set)
    """Answer GETs of the file's bytes with ``403`` (an expired CDN link, a storage outage)."""
    throttle_bytes_per_s: Optional[float] = None
    """Slow every file body down to about this rate."""


@dataclass(frozen=True)
class HubRequest:
    method: str
    path: str
    """Unquoted request path without the query."""
    query: str
    range: Optional[str]
    cdn: bool
    """Served by the CDN stand-in (the second port)."""


def git_blob_oid(data: bytes) -> str:
    """The git sha1 of a file's content, as the Hub reports for files kept in git."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


def scan_revision(name: str, folder: Path, repo_id: str) -> Revision:
    """Every non-hidden file under ``folder`` with its checksums, and a commit sha derived from them."""
    files: dict[str, ServedFile] = {}
    for local in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = local.relative_to(folder).as_posix()
        if any(part.startswith(".") and part != ".gitattributes" for part in rel.split("/")):
            continue
        data = local.read_bytes()
        files[rel] = ServedFile(
            path=rel,
            size=len(data),
            git_oid=git_blob_oid(data),
            sha256=hashlib.sha256(data).hexdigest(),
            lfs=local.suffix.lower() in LFS_SUFFIXES,
            local=local,
        )
    digest = hashlib.sha1(repo_id.encode() + name.encode())
    for f in files.values():
        digest.update(f"{f.path}\0{f.git_oid}\n".encode())
    return Revision(name=name, commit=digest.hexdigest(), files=files)


class FakeHubServer:
    """The Hub API for the given dataset repos; ``url`` is the endpoint to use (``HF_ENDPOINT``)."""

    def __init__(
        self, repos: Mapping[str, Mapping[str, Path]], *, page_size: int = 1000, faults: Optional[HubFaults] = None
    ):
        self.repos: dict[str, dict[str, Revision]] = {
            repo: {name: scan_revision(name, Path(folder), repo) for name, folder in revisions.items()}
            for repo, revisions in repos.items()
        }
        self.page_size = page_size
        self.faults = faults or HubFaults()
        self.requests: list[HubRequest] = []
        self._lock = threading.Lock()
        self._cuts_done: dict[str, int] = {}
        self._api = LocalHTTPServer(("127.0.0.1", 0), _handler(self, cdn=False))
        self._cdn = LocalHTTPServer(("127.0.0.1", 0), _handler(self, cdn=True))
        self._threads = [
            threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
            for server in (self._api, self._cdn)
        ]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._api.server_address[1]}"

    @property
    def cdn_url(self) -> str:
        return f"http://127.0.0.1:{self._cdn.server_address[1]}"

    def commit(self, repo: str, revision: str = "main") -> str:
        return self.repos[repo][revision].commit

    def file_requests(self, path: str) -> list[HubRequest]:
        """GETs that transferred the bytes of repo file ``path`` (from git or the CDN)."""
        with self._lock:
            requests = list(self.requests)
        objects = {
            f"/lfs/{rev.files[path].sha256}" for revs in self.repos.values() for rev in revs.values() if path in rev.files
        }

        def fetches(r: HubRequest) -> bool:
            return r.path in objects if r.cdn else ("/resolve/" in r.path and r.path.endswith("/" + path))

        return [r for r in requests if r.method == "GET" and fetches(r)]

    def start(self) -> "FakeHubServer":
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        for server in (self._api, self._cdn):
            server.shutdown()
            server.server_close()

    def __enter__(self) -> "FakeHubServer":
        return self.start()

    def __exit__(self, exc_type: Optional[type], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        self.stop()

    # ------------------------------------------------------------------ lookups used by the handler

    def _revision(self, repo: str, rev: str) -> Optional[Revision]:
        for revision in self.repos[repo].values():
            if rev in (revision.name, revision.commit):
                return revision
        return None

    def _lfs_file(self, sha256: str) -> Optional[ServedFile]:
        for revisions in self.repos.values():
            for revision in revisions.values():
                for f in revision.files.values():
                    if f.lfs and f.sha256 == sha256:
                        return f
        return None

    def _take_cut(self, path: str) -> Optional[int]:
        """Bytes to send before dropping the connection for this GET of ``path``, if a cut applies."""
        with self._lock:
            if path not in self.faults.cut_after:
                return None
            done = self._cuts_done.get(path, 0)
            limit = self.faults.cut_times.get(path)
            if limit is not None and done >= limit:
                return None
            self._cuts_done[path] = done + 1
            return self.faults.cut_after[path]

    def _record(self, request: HubRequest) -> None:
        with self._lock:
            self.requests.append(request)


class _HubHandler(BaseHTTPRequestHandler):
    """One request to the fake Hub; ``hub`` and ``cdn`` (which of its two servers) are set by :func:`_handler`."""

    hub: FakeHubServer
    cdn: bool
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet test output
        pass

    def do_HEAD(self) -> None:
        self._dispatch(head=True)

    def do_GET(self) -> None:
        self._dispatch(head=False)

    # -------------------------------------------------------------- routing

    def _dispatch(self, head: bool) -> None:
        split = urlsplit(self.path)
        segments = [unquote(s) for s in split.path.split("/")[1:]]
        self.hub._record(
            HubRequest(
                method=self.command,
                path="/" + "/".join(segments),
                query=split.query,
                range=self.headers.get("Range"),
                cdn=self.cdn,
            )
        )
        if self.cdn:
            if len(segments) == 2 and segments[0] == "lfs":
                f = self.hub._lfs_file(segments[1])
                if f is not None:
                    return self._send_file(f, head, extra={"ETag": f'"{f.sha256}"'})
            return self._error(404, "EntryNotFound", "no such object")
        if len(segments) >= 3 and segments[:1] == ["api"] and segments[1] == "datasets":
            return self._api(segments[2:], parse_qs(split.query), head)
        if len(segments) >= 6 and segments[0] == "datasets" and segments[3] == "resolve":
            return self._resolve("/".join(segments[1:3]), segments[4], "/".join(segments[5:]), head)
        if len(segments) >= 5 and segments[2] == "resolve":  # a model repo's file (e.g. a tokenizer's model)
            return self._resolve("/".join(segments[:2]), segments[3], "/".join(segments[4:]), head)
        self._error(404, None, f"not a Hub route: {split.path}")

    def _api(self, rest: list[str], query: dict[str, list[str]], head: bool) -> None:
        repo = "/".join(rest[:2])
        if repo not in self.hub.repos:
            return self._error(404, "RepoNotFound", f"Repository not found: {repo}")
        tail = rest[2:]
        if not tail or tail[0] == "revision":
            revision = self.hub._revision(repo, tail[1] if len(tail) > 1 else "main")
            if revision is None:
                return self._error(404, "RevisionNotFound", f"Invalid rev id: {tail[1]}")
            info = {
                "id": repo,
                "sha": revision.commit,
                "private": False,
                "siblings": [{"rfilename": p} for p in revision.files],
            }
            return self._json(info, head)
        if tail[0] == "tree" and len(tail) >= 2:
            revision = self.hub._revision(repo, tail[1])
            if revision is None:
                return self._error(404, "RevisionNotFound", f"Invalid rev id: {tail[1]}")
            return self._tree(repo, revision, "/".join(tail[2:]), query, head)
        self._error(404, None, f"unsupported API route for {repo}: {'/'.join(tail)}")

    def _tree(self, repo: str, revision: Revision, under: str, query: dict[str, list[str]], head: bool) -> None:
        recursive = query.get("recursive", ["false"])[0].lower() == "true"
        prefix = f"{under}/" if under else ""
        if under and under not in revision.folders():
            return self._error(404, "EntryNotFound", f"{under} does not exist on {revision.name}")
        entries = []
        for folder in revision.folders():
            if folder.startswith(prefix) and (recursive or "/" not in folder[len(prefix) :]):
                oid = hashlib.sha1(folder.encode()).hexdigest()
                entries.append({"type": "directory", "oid": oid, "size": 0, "path": folder})
        for f in revision.files.values():
            if f.path.startswith(prefix) and (recursive or "/" not in f.path[len(prefix) :]):
                entry = {"type": "file", "oid": f.git_oid, "size": f.size, "path": f.path}
                if f.lfs:
                    entry["lfs"] = {"oid": f.sha256, "size": f.size, "pointerSize": 134}
                entries.append(entry)
        entries.sort(key=lambda e: e["path"])
        start = int(query.get("cursor", ["0"])[0])
        page = entries[start : start + self.hub.page_size]
        headers = {}
        if start + self.hub.page_size < len(entries):
            path = f"/api/datasets/{repo}/tree/{quote(revision.commit, safe='')}"
            path += f"/{quote(under, safe='')}" if under else ""
            nxt = f"{self.hub.url}{path}?recursive={str(recursive).lower()}&cursor={start + self.hub.page_size}"
            headers["Link"] = f'<{nxt}>; rel="next"'
        self._json(page, head, extra=headers)

    def _resolve(self, repo: str, rev: str, path: str, head: bool) -> None:
        if repo not in self.hub.repos:
            return self._error(404, "RepoNotFound", f"Repository not found: {repo}")
        revision = self.hub._revision(repo, rev)
        if revision is None:
            return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        f = revision.files.get(path)
        if f is None:
            missing = f"{path} does not exist on {rev}"
            return self._error(404, "EntryNotFound", missing, {"X-Repo-Commit": revision.commit})
        common = {"X-Repo-Commit": revision.commit}
        if f.lfs:
            self.send_response(302)
            for name, value in {
                **common,
                "Location": f"{self.hub.cdn_url}/lfs/{f.sha256}",
                "X-Linked-Etag": f'"{f.sha256}"',
                "X-Linked-Size": str(f.size),
                "ETag": f'"{f.git_oid}"',
                "Content-Length": "0",
            }.items():
                self.send_header(name, value)
            self.end_headers()
            return
        self._send_file(f, head, extra={**common, "ETag": f'"{f.git_oid}"'})

    # -------------------------------------------------------------- responses

    def _send_file(self, f: ServedFile, head: bool, extra: dict[str, str]) -> None:
        if not head and f.path in self.hub.faults.deny:
            return self._error(403, None, f"access to {f.path} denied")
        data = f.local.read_bytes()
        if f.path in self.hub.faults.corrupt and data:
            data = bytes([data[0] ^ 0xFF]) + data[1:]
        start = 0
        asked = self.headers.get("Range")
        if asked and f.path not in self.hub.faults.ignore_range and asked.startswith("bytes=") and asked.endswith("-"):
            start = int(asked[len("bytes=") : -1])
        if start > len(data):
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{len(data)}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = data[start:]
        self.send_response(206 if start else 200)
        headers = {
            **extra,
            "Content-Length": str(len(body)),
            "Accept-Ranges": "bytes",
            "Content-Type": "application/octet-stream",
        }
        if start:
            headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if head:
            return
        cut = self.hub._take_cut(f.path)
        limit = len(body) if cut is None else max(0, min(cut - start, len(body)))
        rate = self.hub.faults.throttle_bytes_per_s
        sent = 0
        try:
            while sent < limit:
                chunk = body[sent : min(limit, sent + _CHUNK)]
                self.wfile.write(chunk)
                self.wfile.flush()
                sent += len(chunk)
                if rate:
                    time.sleep(len(chunk) / rate)
        except (BrokenPipeError, ConnectionResetError):
            return
        if cut is not None:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)

    def _json(self, payload: object, head: bool, extra: Optional[dict[str, str]] = None) -> None:
        body = json.dumps(payload).encode()
        self.send_response(200)
        headers = {**(extra or {}), "Content-Type": "application/json", "Content-Length": str(len(body))}
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _error(self, status: int, code: Optional[str], message: str, extra: Optional[dict[str, str]] = None) -> None:
        body = json.dumps({"error": message}).encode()
        self.send_response(status)
        headers = {**(extra or {}), "Content-Type": "application/json", "Content-Length": str(len(body))}
        if code:
            headers["X-Error-Code"] = code
            headers["X-Error-Message"] = message
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


def _handler(hub: FakeHubServer, *, cdn: bool) -> type[BaseHTTPRequestHandler]:
    return type("Handler", (_HubHandler,), {"hub": hub, "cdn": cdn})
