"""``viddiff data download`` against a local server speaking the Hub's HTTP API: fetch, resume, verify, unpack.

Every test talks to ``viddiff.testing.fake_hf`` over real sockets through the
real ``huggingface_hub`` client; faults (dropped connections, a damaged
mirror, a denied CDN link) are injected on the server.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from viddiff.cli import main
from viddiff.data.download import STAGING_DIR, _ensure_space, unpack
from viddiff.errors import DownloadError
from viddiff.testing.fake_hf import FakeHubServer
from viddiff.testing.hub_layouts import EGOEXO_UIDS, FIRST_REVISION, FIXTURE, LAYOUTS

FITNESS_ZIP = "data/videos_fitness.zip"


def hub_args(repo: str, env: dict[str, str]) -> list[str]:
    return ["--set", f"data.hf_repo={repo}", "--set", f"data.hf_cache_dir={env['HF_HUB_CACHE']}"]


def video_root(repo: str, env: dict[str, str]) -> Path:
    return Path(env["XDG_DATA_HOME"]) / "viddiff" / "videos" / repo.replace("/", "--")


def expected_videos(root: Path, domains: tuple[str, ...]) -> list[Path]:
    return [root / s.video_path(w) for s in FIXTURE if s.domain in domains for w in ("a", "b")]


@pytest.mark.parametrize("repo", LAYOUTS)
def test_download_unpacks_the_archives_and_check_confirms(
    repo: str, fake_hub: FakeHubServer, hub_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    root = video_root(repo, hub_env)
    assert main(["data", "download", *hub_args(repo, hub_env)]) == 0
    out = capsys.readouterr().out
    assert f"fitness: unpacked 6 files from videos_fitness.zip into {root}" in out
    assert f"surgery: unpacked 2 files from videos_surgery.zip into {root}" in out
    assert all(p.is_file() and p.stat().st_size > 0 for p in expected_videos(root, ("fitness", "surgery")))
    assert not (root / STAGING_DIR / "videos_fitness.zip").exists()  # archives are removed once unpacked
    marker = json.loads((root / STAGING_DIR / "videos_fitness.zip.done.json").read_text())
    assert marker["repo"] == repo and marker["commit"] == fake_hub.commit(repo) and len(marker["members"]) == 6
    # the other owners' domains: steps, and the Ego-Exo4D take uids where this revision lists them
    assert "Ego-Exo4D" in out and "egoexo -o EGOEXO_DIR --parts takes --uids" in out and "FineDiving" in out
    assert (" ".join(EGOEXO_UIDS) in out) == (repo == FIRST_REVISION)
    assert f"8 of 12 videos present under {root}" in out

    assert main(["data", "check", *hub_args(repo, hub_env), "--split", "easy"]) == 0
    assert "all 4 videos readable" in capsys.readouterr().out
    assert main(["data", "check", *hub_args(repo, hub_env)]) == 1
    report = capsys.readouterr().out
    assert "4 of 12 videos cannot be used" in report
    lines = [line for line in report.splitlines() if ": missing: " in line]
    assert [line.split(" video")[0] for line in lines] == ["b2-0001", "b2-0001", "d0-0001", "d0-0001"]
    assert all("Ego-Exo4D" in line for line in lines[:2]) and all("FineDiving" in line for line in lines[2:])


def test_a_second_run_skips_what_is_unpacked(fake_hub: FakeHubServer, hub_env: dict[str, str], capsys) -> None:
    args = ["data", "download", *hub_args(FIRST_REVISION, hub_env), "--domain", "fitness"]
    assert main(args) == 0
    assert main(args) == 0
    assert "fitness: 6 files from videos_fitness.zip already unpacked" in capsys.readouterr().out
    assert len(fake_hub.file_requests(FITNESS_ZIP)) == 1
    # a deleted video makes the next run fetch the archive again
    expected_videos(video_root(FIRST_REVISION, hub_env), ("fitness",))[0].unlink()
    assert main(args) == 0
    assert len(fake_hub.file_requests(FITNESS_ZIP)) == 2
    assert all(p.is_file() for p in expected_videos(video_root(FIRST_REVISION, hub_env), ("fitness",)))


def _place_partial(hub_env: dict[str, str], layout_dirs: dict[str, Path], fraction: float = 0.5) -> tuple[Path, int]:
    """Leave the first part of the fitness archive where an interrupted run leaves it; returns (file, bytes)."""
    data = (layout_dirs[FIRST_REVISION] / FITNESS_ZIP).read_bytes()
    part = video_root(FIRST_REVISION, hub_env) / STAGING_DIR / "videos_fitness.zip.part"
    part.parent.mkdir(parents=True)
    kept = int(len(data) * fraction)
    part.write_bytes(data[:kept])
    return part, kept


def test_an_interrupted_download_continues_with_a_range_request(
    fake_hub: FakeHubServer, hub_env: dict[str, str], layout_dirs: dict[str, Path], capsys
) -> None:
    _, kept = _place_partial(hub_env, layout_dirs)
    assert main(["data", "download", *hub_args(FIRST_REVISION, hub_env), "--domain", "fitness"]) == 0
    assert "continuing at" in capsys.readouterr().out
    (request,) = fake_hub.file_requests(FITNESS_ZIP)
    assert request.cdn and request.range == f"bytes={kept}-"
    assert all(p.is_file() for p in expected_videos(video_root(FIRST_REVISION, hub_env), ("fitness",)))


def test_a_server_ignoring_the_range_still_gives_a_verified_file(
    fake_hub: FakeHubServer, hub_env: dict[str, str], layout_dirs: dict[str, Path]
) -> None:
    _place_partial(hub_env, layout_dirs)
    fake_hub.faults.ignore_range.add(FITNESS_ZIP)
    assert main(["data", "download", *hub_args(FIRST_REVISION, hub_env), "--domain", "fitness"]) == 0
    assert all(p.is_file() for p in expected_videos(video_root(FIRST_REVISION, hub_env), ("fitness",)))


def test_a_dropped_connection_is_retried(fake_hub: FakeHubServer, hub_env: dict[str, str]) -> None:
    fake_hub.faults.cut_after[FITNESS_ZIP] = 10_000
    fake_hub.faults.cut_times[FITNESS_ZIP] = 1
    assert main(["data", "download", *hub_args(FIRST_REVISION, hub_env), "--domain", "fitness"]) == 0
    assert len(fake_hub.file_requests(FITNESS_ZIP)) == 2
    assert all(p.is_file() for p in expected_videos(video_root(FIRST_REVISION, hub_env), ("fitness",)))


def test_a_failed_download_keeps_its_bytes_and_says_how_to_continue(
    fake_hub: FakeHubServer, hub_env: dict[str, str], layout_dirs: dict[str, Path], capsys
) -> None:
    part, kept = _place_partial(hub_env, layout_dirs, 0.3)
    fake_hub.faults.deny.add(FITNESS_ZIP)
    assert main(["data", "download", *hub_args(FIRST_REVISION, hub_env), "--domain", "fitness"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]  # progress bars before it, then one error line
    assert err.startswith("viddiff: error: downloading data/videos_fitness.zip from viddiff/VidDiffBench stopped")
    assert "HfHubHTTPError: 403" in err, err
    assert str(part) in err and "run the same command again to continue" in err
    assert part.stat().st_size == kept
    fake_hub.faults.deny.clear()
    assert main(["data", "download", *hub_args(FIRST_REVISION, hub_env), "--domain", "fitness"]) == 0
    assert fake_hub.file_requests(FITNESS_ZIP)[-1].range == f"bytes={kept}-"


def test_a_damaged_download_is_deleted_and_nothing_is_unpacked(
    fake_hub: FakeHubServer, hub_env: dict[str, str], capsys
) -> None:
    root = video_root(FIRST_REVISION, hub_env)
    fake_hub.faults.corrupt.add(FITNESS_ZIP)
    assert main(["data", "download", *hub_args(FIRST_REVISION, hub_env), "--domain", "fitness"]) == 2
    err = capsys.readouterr().err
    assert "failed verification (its sha256 differs from the repo's); the damaged download was deleted" in err
    assert [p.name for p in (root / STAGING_DIR).iterdir() if not p.name.endswith(".lock")] == []
    assert not (root / "videos").exists()
    fake_hub.faults.corrupt.clear()
    assert main(["data", "download", *hub_args(FIRST_REVISION, hub_env), "--domain", "fitness"]) == 0


def test_a_repo_without_the_archive_is_a_clear_error(
    layout_dirs: dict[str, Path], tmp_path: Path, hub_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    repo = shutil.copytree(layout_dirs["jmhb/VidDiffBench"], tmp_path / "no-surgery")
    (repo / "data" / "videos_surgery.zip").unlink()
    with FakeHubServer({"org/Bench": {"main": repo}}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        assert main(["data", "download", *hub_args("org/Bench", hub_env), "--domain", "surgery"]) == 2
    err = capsys.readouterr().err
    assert "ships no video archive for surgery (archives: fitness (data/videos_fitness.zip))" in err


def test_a_local_copy_gets_its_videos_in_its_own_folder(
    fake_hub: FakeHubServer, hub_env: dict[str, str], layout_dirs: dict[str, Path], tmp_path: Path, capsys
) -> None:
    copy = shutil.copytree(layout_dirs[FIRST_REVISION], tmp_path / "local")
    args = ["--dataset", str(copy), "--set", f"data.hf_repo={FIRST_REVISION}"]
    assert main(["data", "download", *args, "--split", "easy"]) == 0
    assert f"fitness: unpacked 6 files from videos_fitness.zip into {copy}" in capsys.readouterr().out
    assert main(["data", "check", *args, "--split", "easy"]) == 0


def test_concurrent_downloads_of_one_archive_are_refused(fake_hub: FakeHubServer, hub_env: dict[str, str], capsys) -> None:
    staging = video_root(FIRST_REVISION, hub_env) / STAGING_DIR
    staging.mkdir(parents=True)
    with (staging / "videos_fitness.zip.lock").open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert main(["data", "download", *hub_args(FIRST_REVISION, hub_env), "--domain", "fitness"]) == 2
    assert "another `viddiff data download` is fetching videos_fitness.zip" in capsys.readouterr().err
    assert fake_hub.file_requests(FITNESS_ZIP) == []


def test_vidic_videos_are_not_a_download_target(tmp_path: Path, capsys) -> None:
    assert main(["data", "download", "--benchmark", "vidic", "--dataset", str(tmp_path)]) == 2
    assert "fetched on demand" in capsys.readouterr().err


# --------------------------------------------------------------------------- unpacking untrusted archives


def _zip(path: Path, members: dict[str, bytes], symlink: str = "") -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = (0o120777 << 16)
            zf.writestr(info, "/etc/passwd")
    return path


@pytest.mark.parametrize(
    ("members", "symlink"),
    [({"ok.mp4": b"1", "../evil.mp4": b"2"}, ""), ({"/abs/evil.mp4": b"2"}, ""), ({"ok.mp4": b"1"}, "link.mp4")],
    ids=["dotdot", "absolute", "symlink"],
)
def test_members_that_would_escape_are_refused_before_writing(
    tmp_path: Path, members: dict[str, bytes], symlink: str
) -> None:
    dest = tmp_path / "dest"
    with pytest.raises(DownloadError, match="refused"):
        unpack(_zip(tmp_path / "a.zip", members, symlink), dest)
    assert not dest.exists() or list(dest.rglob("*")) == []
    assert not (tmp_path / "evil.mp4").exists()


def test_unpack_writes_members_and_reports_them(tmp_path: Path) -> None:
    archive = _zip(tmp_path / "a.zip", {"videos/x/1.mp4": b"one", "videos/2.mp4": b"two" * 1000})
    assert unpack(archive, tmp_path / "dest") == ["videos/x/1.mp4", "videos/2.mp4"]
    assert (tmp_path / "dest" / "videos" / "2.mp4").read_bytes() == b"two" * 1000
    assert not list((tmp_path / "dest").rglob("*.viddiff-partial"))


def test_a_damaged_archive_is_reported(tmp_path: Path) -> None:
    archive = _zip(tmp_path / "a.zip", {"v.mp4": b"x" * 5000})
    data = bytearray(archive.read_bytes())
    data[40:60] = b"\x00" * 20  # inside the stored member's bytes: the CRC check fails
    archive.write_bytes(bytes(data))
    with pytest.raises(DownloadError, match="not a readable zip archive"):
        unpack(archive, tmp_path / "dest")


def test_not_enough_disk_space_is_said_before_writing(tmp_path: Path) -> None:
    with pytest.raises(DownloadError, match=r"not enough disk space to unpack x: needs 1000000.0 GB"):
        _ensure_space(tmp_path, 10**15, "unpack x")


def test_sha256_of_the_fixture_archive_is_what_the_hub_lists(fake_hub: FakeHubServer, layout_dirs) -> None:
    """The listing the download verifies against comes from the server, computed from the bytes it serves."""
    from huggingface_hub import HfApi

    api = HfApi(endpoint=fake_hub.url)
    listed = {f.path: f for f in api.list_repo_tree(FIRST_REVISION, recursive=True, repo_type="dataset") if hasattr(f, "lfs")}
    data = (layout_dirs[FIRST_REVISION] / FITNESS_ZIP).read_bytes()
    assert listed[FITNESS_ZIP].lfs.sha256 == hashlib.sha256(data).hexdigest()


def test_an_unwritable_video_folder_is_one_clear_error(
    fake_hub: FakeHubServer, hub_env: dict[str, str], tmp_path: Path, capsys
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the video folder should be")
    args = ["data", "download", *hub_args(FIRST_REVISION, hub_env), "--domain", "fitness"]
    assert main([*args, "--set", f"data.video_root={blocker}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"viddiff: error: fitness: cannot write under {blocker}") and "data.video_root=DIR" in err


def test_files_kept_in_git_are_verified_by_their_git_sha1(tmp_path: Path) -> None:
    from viddiff.data.download import _matches
    from viddiff.data.hub import HubFile
    from viddiff.testing.fake_hf import git_blob_oid

    path = tmp_path / "videos_x.zip"
    path.write_bytes(b"small archive kept in git")
    listed = HubFile(path="data/videos_x.zip", size=25, git_oid=git_blob_oid(b"small archive kept in git"), sha256=None)
    assert _matches(path, listed)
    path.write_bytes(b"small archive kept in giT")
    assert not _matches(path, listed)
