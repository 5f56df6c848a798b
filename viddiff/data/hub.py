"""Hugging Face Hub access for VidDiffBench: row snapshots, the file listing with checksums, where videos go.

``huggingface_hub`` reads ``HF_ENDPOINT`` once, when it is imported; every
call here passes the endpoint read at call time instead, so a mirror (or
the local test server) set after import is honoured too.
"""

from __future__ import annotations

import glob
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Sequence

from viddiff.backends.network import unreachable_reason
from viddiff.errors import DatasetError

log = logging.getLogger(__name__)

DEFAULT_ENDPOINT = "https://huggingface.co"
"""huggingface_hub's endpoint when ``HF_ENDPOINT`` is not set."""
ROW_PATTERNS = ("*.jsonl", "*.json", "*.parquet")
"""What a snapshot fetches: row files and the JSON side files beside them, never the video archives."""
ROWS_HINT = "pass --dataset PATH (a directory holding dataset.jsonl, or a .json/.jsonl/.parquet file) to use a local copy"


def hub_endpoint() -> Optional[str]:
    """``HF_ENDPOINT`` as set now (``None`` = huggingface_hub's default)."""
    value = os.environ.get("HF_ENDPOINT", "").strip().rstrip("/")
    return value or None


def hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def default_video_root(repo: str) -> Path:
    """Where the videos of an HF-hosted VidDiffBench live unless ``data.video_root`` says otherwise.

    A stable folder per repo (not the HF cache snapshot, which changes with
    every revision and may be pruned): ``$XDG_DATA_HOME/viddiff/videos/<owner>--<name>``.
    """
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser().absolute() / "viddiff" / "videos" / repo.replace("/", "--")


def download_files(repo: str, revision: Optional[str], cache_dir: Optional[str], patterns: Sequence[str]) -> Path:
    """The raw snapshot download of the files matching ``patterns`` (errors as huggingface_hub raises them)."""
    from huggingface_hub import snapshot_download

    folder = snapshot_download(
        repo_id=repo,
        repo_type="dataset",
        revision=revision,
        cache_dir=cache_dir,
        allow_patterns=list(patterns),
        local_files_only=hub_offline(),
        endpoint=hub_endpoint(),
    )
    return Path(str(folder))


def snapshot(
    repo: str,
    revision: Optional[str],
    cache_dir: Optional[str],
    patterns: Sequence[str] = ROW_PATTERNS,
    *,
    what: Optional[str] = None,
    hint: str = ROWS_HINT,
) -> Path:
    """Download (or reuse from the HF cache) the repo files matching ``patterns``; returns the snapshot folder.

    A failure is a ``DatasetError`` naming ``what`` was wanted (e.g. "the ViDiC-1K checklist"; default: the
    dataset) and ending with ``hint``, how to use a local copy instead.
    """
    offline = hub_offline()
    try:
        return download_files(repo, revision, cache_dir, patterns)
    except Exception as exc:  # the hub raises many types (HTTP, offline, missing cache, bad revision)
        if not offline:
            unreachable(exc, repo, revision)
        at = f"{repo!r} (revision {revision or 'main'})"
        head = f"could not get {what} from Hugging Face dataset {at}" if what else f"could not get dataset {at} from the Hugging Face hub"
        mode = " (HF_HUB_OFFLINE is set and the local cache has no copy)" if offline else ""
        raise DatasetError(f"{head}{mode}: {type(exc).__name__}: {_short(str(exc))}; {hint}") from None


def fetch_missing(
    repo: str, folder: Path, cache_dir: Optional[str], paths: Iterable[str], *, what: str, benchmark: str
) -> None:
    """Download, from the revision of the snapshot ``folder``, those of ``paths`` (absolute) that lie under it
    and are missing; a failure is logged, not raised (a partial download is usable, ``viddiff data check`` lists
    what is still missing)."""
    wanted = sorted(
        {Path(p).relative_to(folder).as_posix() for p in paths if Path(p).is_relative_to(folder) and not Path(p).exists()}
    )
    if not wanted:
        return
    log.info("downloading %d %s videos from %s", len(wanted), what, repo)
    try:
        download_files(repo, folder.name, cache_dir, [glob.escape(p) for p in wanted])
    except Exception as exc:  # HTTP, offline, missing cache
        log.warning(
            "could not download %d %s videos from %s: %s: %s; `viddiff data check --benchmark %s` lists the missing ones",
            len(wanted), what, repo, type(exc).__name__, exc, benchmark,
        )


def download_file(repo: str, filename: str, cache_dir: Optional[str], *, what: str) -> Path:
    """One file of a model repo (a tokenizer model), from the Hugging Face cache or the Hub.

    ``hf_hub_download`` alone retries a hub it cannot reach for about 25 s, then fails with a message about the
    cache; here a cache miss is followed by one request without retries, so an unreachable hub (or
    ``HF_HUB_OFFLINE`` without a cached copy) fails at once with a ``DatasetError`` of one complete line naming
    ``what`` was wanted. The caller adds what to do instead.
    """
    from huggingface_hub import get_hf_file_metadata, hf_hub_download, hf_hub_url
    from huggingface_hub.errors import LocalEntryNotFoundError

    def fetch(cached_only: bool) -> Path:
        return Path(
            hf_hub_download(
                repo_id=repo, filename=filename, cache_dir=cache_dir, local_files_only=cached_only, endpoint=hub_endpoint()
            )
        )

    try:
        return fetch(cached_only=True)
    except LocalEntryNotFoundError:
        if hub_offline():
            raise DatasetError(f"HF_HUB_OFFLINE is set and the Hugging Face cache has no copy of {what}") from None
    try:
        get_hf_file_metadata(hf_hub_url(repo, filename, endpoint=hub_endpoint()), retry_on_errors=False)
        return fetch(cached_only=False)
    except Exception as exc:  # the hub raises many types (HTTP, connection, missing repo or file)
        reason = unreachable_reason(exc)
        if reason is not None:
            raise DatasetError(
                f"could not reach the Hugging Face hub at {hub_endpoint() or DEFAULT_ENDPOINT} for {what}: {reason}"
            ) from None
        raise DatasetError(f"could not get {what} from the Hugging Face hub: {type(exc).__name__}: {_short(str(exc))}") from None


def unreachable(exc: BaseException, repo: str, revision: Optional[str]) -> None:
    """Raise the plain "could not reach the hub" error, with how to work offline, if ``exc`` says so."""
    reason = unreachable_reason(exc)
    if reason is None:
        return
    raise DatasetError(
        f"could not reach the Hugging Face hub at {hub_endpoint() or DEFAULT_ENDPOINT} for dataset {repo!r} "
        f"(revision {revision or 'main'}): {reason}; to work offline, download the dataset where there is a "
        f"network (hf download {repo} --repo-type dataset --local-dir DIR) and pass --dataset DIR, or set "
        "HF_HUB_OFFLINE=1 to use the copy already in the Hugging Face cache"
    ) from None


@dataclass(frozen=True)
class HubFile:
    """One file of a repo revision, with what is needed to fetch and verify it."""

    path: str
    size: int
    git_oid: str
    """Git blob sha1 (what a non-LFS file is verified against)."""
    sha256: Optional[str]
    """Content sha256 of an LFS file (``None`` for files stored in git)."""


def list_files(repo: str, revision: Optional[str]) -> tuple[str, list[HubFile]]:
    """The commit a revision points at, and every file of the repo at that commit."""
    from huggingface_hub import HfApi
    from huggingface_hub.hf_api import RepoFile

    api = HfApi(endpoint=hub_endpoint())
    try:
        commit = api.dataset_info(repo, revision=revision).sha
        if commit is None:
            raise DatasetError(f"the hub gave no commit for {repo!r} revision {revision or 'main'}")
        files = [
            HubFile(path=f.path, size=f.size, git_oid=f.blob_id, sha256=f.lfs.sha256 if f.lfs else None)
            for f in api.list_repo_tree(repo, recursive=True, revision=commit, repo_type="dataset")
            if isinstance(f, RepoFile)
        ]
    except DatasetError:
        raise
    except Exception as exc:  # HTTP errors, unknown repo or revision, unreachable endpoint
        unreachable(exc, repo, revision)
        raise DatasetError(
            f"could not list the files of Hugging Face dataset {repo!r} (revision {revision or 'main'}): "
            f"{type(exc).__name__}: {_short(str(exc))}"
        ) from None
    return commit, files


def _short(text: str, limit: int = 300) -> str:
    """The library's message on one line, cut at a word (never inside one) when it is long."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + " [...]"
