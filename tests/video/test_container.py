"""Container header claims (viddiff.video.container) of real files, and of files whose headers lie."""

from __future__ import annotations

import struct
import zipfile

import pytest

from viddiff.data.synth_clips import Clip, render
from viddiff.errors import VideoError
from viddiff.video.container import NotAVideoError, read_claims, sniff_kind
from viddiff.video.write import write_video


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("containers")
    frames = render(Clip("red", "left to right", n_frames=20))
    return {
        suffix: write_video(out / f"clip{suffix}", frames, 10.0, codec=codec)
        for suffix, codec in ((".mp4", "libx264"), (".mov", "libx264"), (".webm", "libvpx-vp9"), (".mkv", "libx264"),
                              (".avi", "mpeg4"))
    }


@pytest.mark.parametrize("suffix,kind", [(".mp4", "mp4"), (".mov", "mp4"), (".webm", "matroska"), (".mkv", "matroska"), (".avi", "avi")])
def test_real_files_state_their_size_length_and_frames(written, suffix, kind):
    claims = read_claims(written[suffix])
    assert (claims.kind, claims.width, claims.height, claims.n_frames) == (kind, 96, 64, 20)
    assert claims.duration_s == pytest.approx(2.0, abs=0.11)


def test_a_fragmented_mp4_counts_the_frames_of_its_fragments(written, tmp_path):
    out = tmp_path / "fragmented.mp4"
    write_video(out, render(Clip("blue", "right to left", n_frames=20)), 10.0,
                options={"movflags": "frag_keyframe+empty_moov", "g": "5"})
    claims = read_claims(out)
    assert (claims.kind, claims.width, claims.height, claims.n_frames) == ("mp4", 96, 64, 20)


def test_the_largest_claim_counts_when_headers_disagree(written, tmp_path):
    data = bytearray(written[".mp4"].read_bytes())
    tkhd = data.find(b"tkhd") + 4
    data[tkhd + 76: tkhd + 84] = struct.pack(">II", 50000 << 16, 40000 << 16)
    (tmp_path / "lying.mp4").write_bytes(data)
    claims = read_claims(tmp_path / "lying.mp4")
    assert (claims.width, claims.height) == (50000, 40000)


@pytest.mark.parametrize("content,what", [
    (b"hello, this is text\n" * 10, "text"), (b"%PDF-1.7\n" + bytes(100), "a PDF document"),
    (b"\x89PNG\r\n\x1a\n" + bytes(100), "an image"), (bytes(range(256)), "unknown content"),
])
def test_content_that_is_no_video_is_named(tmp_path, content, what):
    path = tmp_path / "video.mp4"
    path.write_bytes(content)
    with pytest.raises(NotAVideoError, match=f"not a video file \\({what}\\)"):
        read_claims(path)


def test_a_zip_named_mp4_is_no_video(written, tmp_path):
    path = tmp_path / "archive.mp4"
    with zipfile.ZipFile(path, "w") as archive:
        archive.write(written[".mp4"], "clip.mp4")
    assert sniff_kind(path.read_bytes()[:16]) is None
    with pytest.raises(NotAVideoError, match="a zip archive"):
        read_claims(path)


@pytest.mark.parametrize("suffix", [".mp4", ".webm", ".mkv"])
def test_a_truncated_file_is_one_clear_error(written, tmp_path, suffix):
    data = written[suffix].read_bytes()
    for keep in (len(data) // 3, len(data) * 2 // 3, len(data) - 1):
        path = tmp_path / f"cut{suffix}"
        path.write_bytes(data[:keep])
        with pytest.raises(VideoError, match="truncated|damaged|ends inside"):
            read_claims(path)


def test_a_box_claiming_more_bytes_than_the_file_has_is_refused(written, tmp_path):
    data = bytearray(written[".mp4"].read_bytes())
    moov = data.find(b"moov") - 4
    data[moov: moov + 4] = struct.pack(">I", 2**31)
    (tmp_path / "big-box.mp4").write_bytes(data)
    with pytest.raises(VideoError, match="truncated"):
        read_claims(tmp_path / "big-box.mp4")
