"""``viddiff data download``: fetch the video archives the benchmark repo ships and unpack them where the loader looks.

For each requested domain whose videos the repo ships (``videos_<domain>.zip``:
fitness, surgery) the archive is

* downloaded with progress into ``<video root>/.viddiff-downloads/`` as a
  ``.part`` file that a later run continues with an HTTP range request
  (a killed or failed download never starts over);
* verified against the checksum the Hub lists for that file (LFS sha256, or
  the git blob sha1), and deleted if it does not match;
* unpacked into the video root (the folder relative video paths resolve
  against: ``data.video_root``, the ``--dataset`` folder, or the stable
  per-repo folder for ``--dataset hf``), refusing members that would land
  outside it; a marker records what was unpacked, so a re-run skips it.

For domains owned by others (Ego-Exo4D ballsports and music, FineDiving
diving) it prints the exact steps and the Ego-Exo4D take uids the repo
lists in ``egoexo4d_uids.json``. ``viddiff data check`` then confirms.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import stat
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Iterator, Optional, Sequence
from urllib.parse import urlsplit

from viddiff.config import Config
from viddiff.data import hub, sources
from viddiff.data.hub import HubFile
from viddiff.data.side_files import EGOEXO_UIDS_FILE, SideFiles, egoexo_uids
from viddiff.data.dataset import Dataset
from viddiff.errors import DownloadError
from viddiff.console import count_of

logger = logging.getLogger(__name__)

STAGING_DIR = ".viddiff-downloads"
_HASH_CHUNK = 8 * 1024 * 1024
_ARCHIVE = re.compile(r"videos_(?P<domain>[A-Za-z0-9_-]+)\.zip")


@dataclass(frozen=True)
class ArchiveSource:
    """Where the archives come from: a repo at a fixed commit."""

    repo: str
    commit: str
    files: dict[str, HubFile]
    """Archive file per domain."""


def find_archives(files: Sequence[HubFile]) -> dict[str, HubFile]:
    """Domain -> ``videos_<domain>.zip`` file of a repo listing (the shallowest one if several)."""
    out: dict[str, HubFile] = {}
    for f in sorted(files, key=lambda f: (f.path.count("/"), f.path)):
        match = _ARCHIVE.fullmatch(PurePosixPath(f.path).name)
        if match and match["domain"] not in out:
            out[match["domain"]] = f
    return out


# --------------------------------------------------------------------------- fetch and verify


def staging_dir(root: Path) -> Path:
    return root / STAGING_DIR


def fetch_archive(source: ArchiveSource, file: HubFile, staging: Path) -> Path:
    """The verified archive in ``staging``, downloading (or continuing to download) it as needed."""
    name = PurePosixPath(file.path).name
    final, part = staging / name, staging / f"{name}.part"
    if final.exists():
        if _matches(final, file):
            return final
        logger.warning("%s does not match the repo's checksum; downloading it again", final)
        final.unlink()
    remaining = file.size - (part.stat().st_size if part.exists() else 0)
    _ensure_space(staging, remaining + file.size, f"download and unpack {name}")  # the download, then its contents
    _download(source, file, part)
    if not _matches(part, file):
        part.unlink()
        raise DownloadError(
            f"{file.path} from {source.repo} failed verification (its {_checksum_kind(file)} differs from the "
            "repo's); the damaged download was deleted, run the command again"
        )
    os.replace(part, final)
    return final


def _download(source: ArchiveSource, file: HubFile, part: Path) -> None:
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.file_download import http_get
    from huggingface_hub.utils import build_hf_headers
    from tqdm.auto import tqdm

    endpoint = hub.hub_endpoint()
    have = part.stat().st_size if part.exists() else 0
    if have > file.size:
        have = 0
    print(
        f"downloading {file.path} ({_size(file.size)}) from {source.repo}@{source.commit[:8]}"
        + (f", continuing at {_size(have)}" if have else "")
    )
    try:
        url = hf_hub_url(source.repo, file.path, repo_type="dataset", revision=source.commit, endpoint=endpoint)
        location = get_hf_file_metadata(url, endpoint=endpoint).location
        headers = build_hf_headers()
        if urlsplit(location).netloc != urlsplit(url).netloc:  # a CDN: the Hub token stays on the Hub
            headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
        with part.open("r+b" if part.exists() else "wb") as f:
            f.seek(have)
            f.truncate()
            http_get(
                location, f, resume_size=have, headers=headers, expected_size=file.size,
                displayed_filename=file.path, tqdm_class=tqdm,
            )
    except Exception as exc:  # HTTP, network, disk: the .part file is kept for the next run
        kept = part.stat().st_size if part.exists() else 0
        raise DownloadError(
            f"downloading {file.path} from {source.repo} stopped ({type(exc).__name__}: {_first_line(exc)}); "
            f"{_size(kept)} of {_size(file.size)} kept in {part}: run the same command again to continue"
        ) from None


def _matches(path: Path, file: HubFile) -> bool:
    """Whether ``path`` has the size and checksum the Hub lists for ``file``."""
    if path.stat().st_size != file.size:
        return False
    digest = hashlib.sha256() if file.sha256 else hashlib.sha1(b"blob %d\x00" % file.size)
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(_HASH_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest() == (file.sha256 or file.git_oid)


def _checksum_kind(file: HubFile) -> str:
    return "sha256" if file.sha256 else "git sha1"


# --------------------------------------------------------------------------- unpack


def unpack(archive: Path, dest: Path) -> list[str]:
    """Extract every member of ``archive`` under ``dest``; returns the member files' relative paths.

    Members that would land outside ``dest`` (absolute names, ``..``) or are
    symlinks are refused before anything is written. Each file is written
    under a temporary name and renamed, so an interruption never leaves a
    truncated video under its real name.
    """
    from tqdm import tqdm

    try:
        with zipfile.ZipFile(archive) as zf:
            members = [(info, _member_path(info, archive)) for info in zf.infolist()]
            files = [(info, rel) for info, rel in members if not info.is_dir()]
            total = sum(info.file_size for info, _ in files)
            _ensure_space(dest, total, f"unpack {archive.name}")
            with tqdm(total=total, unit="B", unit_scale=True, desc=f"unpacking {archive.name}") as bar:
                for info, rel in files:
                    target = dest / rel
                    target.parent.mkdir(parents=True, exist_ok=True)
                    partial = target.with_name(target.name + ".viddiff-partial")
                    with zf.open(info) as src, partial.open("wb") as out:
                        for chunk in iter(lambda: src.read(1024 * 1024), b""):
                            out.write(chunk)
                            bar.update(len(chunk))
                    os.replace(partial, target)
    except zipfile.BadZipFile as exc:
        raise DownloadError(
            f"{archive} is not a readable zip archive ({exc}); delete it and run the command again"
        ) from None
    except OSError as exc:
        raise DownloadError(f"unpacking {archive} into {dest} failed: {exc}") from None
    return [rel for _, rel in files]


def _member_path(info: zipfile.ZipInfo, archive: Path) -> str:
    """The member's safe relative path, or ``DownloadError`` when it would escape the destination."""
    name = info.filename.replace("\\", "/")
    parts = PurePosixPath(name).parts
    mode = info.external_attr >> 16
    if name.startswith("/") or re.match(r"[A-Za-z]:", name) or ".." in parts or not parts:
        raise DownloadError(f"{archive}: member {info.filename!r} would be written outside the video folder; refused")
    if stat.S_ISLNK(mode):
        raise DownloadError(f"{archive}: member {info.filename!r} is a symbolic link; refused")
    return PurePosixPath(*parts).as_posix()


# --------------------------------------------------------------------------- one archive, end to end


def install_archive(source: ArchiveSource, domain: str, root: Path, *, keep_archive: bool = False) -> str:
    """Make ``domain``'s videos present under ``root``; returns a one-line account of what was done."""
    file = source.files[domain]
    staging = staging_dir(root)
    staging.mkdir(parents=True, exist_ok=True)
    name = PurePosixPath(file.path).name
    marker = staging / f"{name}.done.json"
    with _lock(staging / f"{name}.lock", name):
        done = _read_marker(marker)
        unchanged = done is not None and done.get("checksum") == (file.sha256 or file.git_oid)
        if done and unchanged and all((root / m).exists() for m in done["members"]):
            return f"{domain}: {count_of(len(done['members']), 'file')} from {name} already unpacked in {root}"
        archive = fetch_archive(source, file, staging)
        members = unpack(archive, root)
        marker.write_text(
            json.dumps(
                {"repo": source.repo, "commit": source.commit, "path": file.path,
                 "checksum": file.sha256 or file.git_oid, "members": members},
                indent=1,
            )
        )
        if not keep_archive:
            archive.unlink()
    return f"{domain}: unpacked {count_of(len(members), 'file')} from {name} into {root}"


@contextmanager
def _lock(path: Path, name: str) -> Iterator[None]:
    """One process per archive: two downloads appending to the same ``.part`` would corrupt it."""
    import fcntl

    with path.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise DownloadError(f"another `viddiff data download` is fetching {name} (lock {path}); wait for it") from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _read_marker(path: Path) -> Optional[dict]:
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) and isinstance(value.get("members"), list) else None


def _ensure_space(folder: Path, needed: int, purpose: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(folder).free
    if needed > free:
        raise DownloadError(f"not enough disk space to {purpose}: needs {_size(needed)}, {folder} has {_size(free)} free")


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else "no details"


# --------------------------------------------------------------------------- the command


def archive_source(dataset: Dataset, repo: str, revision: Optional[str]) -> ArchiveSource:
    """The repo and commit to fetch archives from: the rows' own commit for ``--dataset hf``, else ``data.hf_revision``."""
    pinned = dataset.revision if dataset.source.startswith(f"hf:{repo}@") else revision
    commit, files = hub.list_files(repo, pinned)
    return ArchiveSource(repo=repo, commit=commit, files=find_archives(files))


def uids_file(dataset: Dataset) -> Optional[Path]:
    """The dataset's ``egoexo4d_uids.json``: beside the rows (HF snapshot or local copy), if it has one."""
    if dataset.data_dir is None:
        return None
    return SideFiles([dataset.data_dir, dataset.data_dir.parent]).path(EGOEXO_UIDS_FILE)


def missing_videos(dataset: Dataset, domain: str) -> list[str]:
    paths = {ref.path for s in dataset if s.domain == domain for ref in s.videos}
    return sorted(p for p in paths if not Path(p).exists())


def download_videos(cfg: Config, dataset: Dataset, domains: Sequence[str], keep_archives: bool = False) -> int:
    """``viddiff data download`` for VidDiffBench: archives for the shipped domains (all of the selection's
    unless ``domains`` names some), the owners' steps for the others; returns the exit code."""
    present = sorted({s.domain for s in dataset})
    domains = list(dict.fromkeys(domains or present))
    absent = [d for d in domains if d not in present]
    if absent:
        print(f"note: the selected samples have no {', '.join(absent)} videos; nothing to do there")
    wanted = [d for d in domains if d in present]
    archived = [d for d in wanted if d not in sources.EGOEXO_DOMAINS + sources.FINEDIVING_DOMAINS]
    if archived:
        source = archive_source(dataset, cfg.data.hf_repo, cfg.data.hf_revision)
        unknown = [d for d in archived if d not in source.files]
        if unknown:
            shipped = ", ".join(f"{d} ({f.path})" for d, f in sorted(source.files.items())) or "none"
            raise DownloadError(
                f"{source.repo}@{source.commit[:8]} ships no video archive for {', '.join(unknown)} "
                f"(archives: {shipped}); "
                "point data.hf_repo at a revision that has them, or place the videos under "
                f"{dataset.root} yourself"
            )
        for domain in archived:
            try:
                print(install_archive(source, domain, dataset.root, keep_archive=keep_archives))
            except OSError as exc:  # the video folder cannot be created or written
                raise DownloadError(
                    f"{domain}: cannot write under {dataset.root} ({exc}); choose a writable folder with "
                    "--set data.video_root=DIR"
                ) from None
    egoexo = [d for d in wanted if d in sources.EGOEXO_DOMAINS]
    if egoexo:
        path = uids_file(dataset)
        print("\n".join(sources.egoexo_steps(egoexo, egoexo_uids(path) if path else [], path, dataset.root)))
    if any(d in sources.FINEDIVING_DOMAINS for d in wanted):
        print("\n".join(sources.finediving_steps(dataset.root)))
    for domain in wanted:
        missing = missing_videos(dataset, domain)
        if missing and domain in archived:
            print(
                f"warning: {len(missing)} {domain} video(s) the dataset references are still missing after unpacking "
                f"(first: {missing[0]}); the archive's layout may not match the rows' paths"
            )
    total = len({ref.path for s in dataset for ref in s.videos})
    have = total - sum(len(missing_videos(dataset, d)) for d in present)
    print(f"{have} of {total} videos present under {dataset.root}; `viddiff data check` lists anything missing")
    return 0


__all__ = ["download_videos", "fetch_archive", "find_archives", "install_archive", "unpack"]
