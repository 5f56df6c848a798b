"""What a video file claims about itself, read from its container's structure alone: no decoder runs.

A service must refuse a file claiming 100 000 x 100 000 pixels or ten hours *before* handing it to FFmpeg,
whose probing already decodes frames. So the kind of file is judged from its first bytes (never its name)
and the header is walked by hand, seeking past the media data:

- ISO base media (MP4, MOV, M4V, 3GP): ``mvhd``/``mdhd`` durations, ``tkhd`` and sample-entry sizes, ``stsz``
  sample counts (``trun`` counts in fragmented files);
- Matroska / WebM: EBML elements; frames are the video track's blocks, counted from their headers only;
- AVI: the ``avih`` main header.

Every claim is kept (a track header and a sample entry may disagree); a limit holds the largest.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterator, Optional

from viddiff.errors import VideoError

MAX_HEADER_BYTES = 64 * 2**20
"""Largest header structure read into memory (an MP4 ``moov``, a Matroska ``Tracks``); real ones are far smaller."""
MAX_ELEMENTS = 2_000_000
"""Most boxes or elements walked in one file: a crafted file of endless tiny elements stops here."""
_ISO_TOP_LEVEL = {b"ftyp", b"moov", b"mdat", b"free", b"skip", b"wide", b"pnot", b"uuid", b"moof", b"styp", b"sidx"}
_CONTAINERS = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"moof", b"traf", b"mvex", b"edts"}


class NotAVideoError(VideoError):
    """The file's content is no video container at all (whatever its name says)."""


@dataclass(frozen=True)
class ContainerClaims:
    """A file's kind and what its header says; ``None`` where the header does not say."""

    kind: str
    """``mp4`` (the ISO family, MOV included), ``matroska`` (WebM included) or ``avi``."""
    duration_s: Optional[float]
    width: Optional[int]
    height: Optional[int]
    n_frames: Optional[int]

    @property
    def pixels(self) -> Optional[int]:
        return self.width * self.height if self.width is not None and self.height is not None else None


def sniff_kind(head: bytes) -> Optional[str]:
    """The container a file's first bytes (16 or more) announce, or ``None`` for anything else."""
    if head[:4] == b"\x1a\x45\xdf\xa3":
        return "matroska"
    if head[:4] == b"RIFF" and head[8:12] == b"AVI ":
        return "avi"
    if len(head) >= 8 and head[4:8] in _ISO_TOP_LEVEL and head[4:8] != b"uuid":
        return "mp4"
    return None


def read_claims(path: Path) -> ContainerClaims:
    """The claims in ``path``'s header; a file that is no video container, or whose header is cut short or
    inconsistent, is one :class:`VideoError` naming what is wrong."""
    with open(path, "rb") as f:
        head = f.read(16)
        kind = sniff_kind(head)
        if kind is None:
            raise NotAVideoError(f"{path.name}: not a video file ({describe_content(head)}); send an MP4, MOV, WebM, MKV or AVI")
        size = f.seek(0, 2)
        f.seek(0)
        try:
            if kind == "mp4":
                return _iso_claims(f, size, path.name)
            if kind == "matroska":
                return _matroska_claims(f, size, path.name)
            return _avi_claims(f, path.name)
        except (struct.error, IndexError, ValueError) as exc:
            raise VideoError(f"{path.name}: its {kind} header is damaged ({exc}); re-export or replace the file") from None


def describe_content(head: bytes) -> str:
    """What a file's first bytes look like, in words, for the error that refuses it."""
    if head[:4] == b"PK\x03\x04":
        return "a zip archive"
    if head[:5] == b"%PDF-":
        return "a PDF document"
    if head[:3] == b"\xff\xd8\xff" or head[:8] == b"\x89PNG\r\n\x1a\n":
        return "an image"
    if head and all(32 <= b < 127 or b in (9, 10, 13) for b in head):
        return "text"
    return "unknown content"


# ---- ISO base media (MP4, MOV) ---------------------------------------------------------------------------


def _boxes(data: bytes, start: int, end: int, name: str) -> Iterator[tuple[bytes, int, int]]:
    """``(type, payload_start, payload_end)`` of each box in ``data[start:end]``."""
    pos = start
    while pos + 8 <= end:
        size, kind = struct.unpack_from(">I4s", data, pos)
        header = 8
        if size == 1:
            size = struct.unpack_from(">Q", data, pos + 8)[0]
            header = 16
        elif size == 0:
            size = end - pos
        if size < header or pos + size > end:
            raise VideoError(f"{name}: its {kind.decode('latin-1')!r} box runs past its parent; the file is damaged or truncated")
        yield kind, pos + header, pos + size
        pos += size


@dataclass
class _IsoFacts:
    duration_s: Optional[float] = None
    widths: tuple[int, ...] = ()
    heights: tuple[int, ...] = ()
    frames: Optional[int] = None
    fragment_frames: int = 0
    video_track_ids: tuple[int, ...] = ()


def _iso_claims(f: BinaryIO, size: int, name: str) -> ContainerClaims:
    facts = _IsoFacts()
    found_moov = False
    pos = walked = 0
    while pos < size:
        walked += 1
        if walked > MAX_ELEMENTS:
            raise VideoError(f"{name}: more than {MAX_ELEMENTS} top-level boxes; not a plausible video")
        f.seek(pos)
        header = f.read(16)
        if len(header) < 8:
            raise VideoError(f"{name}: the file ends inside a box header: it is truncated; re-export or replace it")
        box_size, kind = struct.unpack_from(">I4s", header)
        header_len = 8
        if box_size == 1:
            if len(header) < 16:
                raise VideoError(f"{name}: the file ends inside a box header: it is truncated")
            box_size, header_len = struct.unpack_from(">Q", header, 8)[0], 16
        elif box_size == 0:
            box_size = size - pos
        if box_size < header_len:
            raise VideoError(f"{name}: a box of {box_size} bytes at offset {pos}; the file is damaged")
        if pos + box_size > size:
            raise VideoError(
                f"{name}: the file ends inside its {kind.decode('latin-1')!r} box ({size} of {pos + box_size} bytes): "
                "it is truncated (an interrupted upload or recording); re-export or replace it"
            )
        if kind in (b"moov", b"moof"):
            if box_size > MAX_HEADER_BYTES:
                raise VideoError(f"{name}: a {kind.decode()!r} header of {box_size} bytes; not a plausible video")
            f.seek(pos)
            data = f.read(box_size)
            if kind == b"moov":
                found_moov = True
                _read_moov(data, header_len, len(data), facts, name)
            else:
                _read_moof(data, header_len, len(data), facts, name)
        pos += box_size
    if not found_moov:
        raise VideoError(
            f"{name}: no 'moov' header box: an unfinished recording or a truncated file; re-export or replace it"
        )
    frames = facts.frames or facts.fragment_frames or None  # a fragmented file's moov lists no samples
    return ContainerClaims(
        kind="mp4",
        duration_s=facts.duration_s,
        width=max(facts.widths) if facts.widths else None,
        height=max(facts.heights) if facts.heights else None,
        n_frames=frames,
    )


def _read_moov(data: bytes, start: int, end: int, facts: _IsoFacts, name: str) -> None:
    for kind, a, b in _boxes(data, start, end, name):
        if kind == b"mvhd":
            facts.duration_s = _max_opt(facts.duration_s, _header_duration(data, a, timescale_at=(12, 20)))
        elif kind == b"trak":
            _read_trak(data, a, b, facts, name)
        elif kind == b"mvex":
            for sub, c, _ in _boxes(data, a, b, name):
                if sub == b"mehd":
                    version = data[c]
                    units = struct.unpack_from(">Q" if version else ">I", data, c + 4)[0]
                    facts.duration_s = _max_opt(facts.duration_s, _mehd_seconds(data, start, end, units, name))


def _mehd_seconds(data: bytes, start: int, end: int, units: int, name: str) -> Optional[float]:
    for kind, a, _ in _boxes(data, start, end, name):
        if kind == b"mvhd":
            timescale = struct.unpack_from(">I", data, a + (20 if data[a] else 12))[0]
            return units / timescale if timescale else None
    return None


def _header_duration(data: bytes, at: int, timescale_at: tuple[int, int]) -> Optional[float]:
    """``mvhd``/``mdhd``: version 0 has 32-bit times, version 1 64-bit; ``duration`` follows ``timescale``."""
    version = data[at]
    offset = timescale_at[1] if version else timescale_at[0]
    timescale = struct.unpack_from(">I", data, at + offset)[0]
    duration = struct.unpack_from(">Q" if version else ">I", data, at + offset + 4)[0]
    if duration in (0, 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF) or not timescale:
        return None  # all ones: "unknown" by the standard; 0: a fragmented file's (its fragments hold the time)
    return duration / timescale


def _read_trak(data: bytes, start: int, end: int, facts: _IsoFacts, name: str) -> None:
    found: dict[bytes, tuple[int, int]] = {}
    _collect(data, start, end, found, name)
    handler = data[found[b"hdlr"][0] + 8: found[b"hdlr"][0] + 12] if b"hdlr" in found else b""
    if handler != b"vide":
        return
    if b"tkhd" in found:
        a = found[b"tkhd"][0]
        at = a + (88 if data[a] else 76)
        width, height = struct.unpack_from(">II", data, at)
        facts.widths += (width >> 16,)
        facts.heights += (height >> 16,)
        track_id = struct.unpack_from(">I", data, a + (20 if data[a] else 12))[0]
        facts.video_track_ids += (track_id,)
    if b"mdhd" in found:
        facts.duration_s = _max_opt(facts.duration_s, _header_duration(data, found[b"mdhd"][0], timescale_at=(12, 20)))
    if b"stsd" in found:
        a, b = found[b"stsd"]
        count = struct.unpack_from(">I", data, a + 4)[0]
        pos = a + 8
        for _ in range(min(count, 16)):
            if pos + 36 > b:
                break
            entry_size = struct.unpack_from(">I", data, pos)[0]
            width, height = struct.unpack_from(">HH", data, pos + 32)
            facts.widths += (width,)
            facts.heights += (height,)
            pos += max(entry_size, 36)
    if b"stsz" in found:
        count = struct.unpack_from(">I", data, found[b"stsz"][0] + 8)[0]
        facts.frames = max(facts.frames or 0, count)
    elif b"stz2" in found:
        count = struct.unpack_from(">I", data, found[b"stz2"][0] + 8)[0]
        facts.frames = max(facts.frames or 0, count)


def _collect(data: bytes, start: int, end: int, found: dict[bytes, tuple[int, int]], name: str) -> None:
    """The first box of each type anywhere under ``data[start:end]`` (descending into container boxes)."""
    for kind, a, b in _boxes(data, start, end, name):
        if kind in _CONTAINERS:
            _collect(data, a, b, found, name)
        elif kind not in found:
            found[kind] = (a, b)


def _read_moof(data: bytes, start: int, end: int, facts: _IsoFacts, name: str) -> None:
    """A movie fragment: add the ``trun`` sample counts of its video tracks (all tracks', where the ``moov``
    named no video track: a count too high only makes a limit stricter)."""
    for kind, a, b in _boxes(data, start, end, name):
        if kind != b"traf":
            continue
        track_id = None
        for sub, c, _ in _boxes(data, a, b, name):
            if sub == b"tfhd":
                track_id = struct.unpack_from(">I", data, c + 4)[0]
            elif sub == b"trun" and (not facts.video_track_ids or track_id in facts.video_track_ids):
                facts.fragment_frames += struct.unpack_from(">I", data, c + 4)[0]


def _max_opt(a: Optional[float], b: Optional[float]) -> Optional[float]:
    if a is None:
        return b
    return a if b is None else max(a, b)


# ---- Matroska / WebM -------------------------------------------------------------------------------------

_EBML, _SEGMENT, _INFO, _TRACKS, _CLUSTER = 0x1A45DFA3, 0x18538067, 0x1549A966, 0x1654AE6B, 0x1F43B675
_TIMECODE_SCALE, _DURATION, _TRACK_ENTRY, _TRACK_NUMBER, _TRACK_TYPE = 0x2AD7B1, 0x4489, 0xAE, 0xD7, 0x83
_VIDEO, _PIXEL_WIDTH, _PIXEL_HEIGHT, _DEFAULT_DURATION = 0xE0, 0xB0, 0xBA, 0x23E383
_CLUSTER_TIMECODE, _SIMPLE_BLOCK, _BLOCK_GROUP, _BLOCK = 0xE7, 0xA3, 0xA0, 0xA1
_UNKNOWN = -1


def _vint(f: BinaryIO, keep_marker: bool) -> tuple[int, int]:
    """One EBML variable-length integer: ``(value, bytes read)``; ``_UNKNOWN`` for the all-ones size."""
    first = f.read(1)
    if not first:
        raise EOFError
    b0 = first[0]
    length = 1
    while length <= 8 and not b0 & (0x80 >> (length - 1)):
        length += 1
    if length > 8:
        raise ValueError("an EBML number longer than 8 bytes")
    rest = f.read(length - 1)
    if len(rest) < length - 1:
        raise EOFError
    value = b0 if keep_marker else b0 & (0xFF >> length)
    for byte in rest:
        value = (value << 8) | byte
    if not keep_marker and value == (1 << (7 * length)) - 1:
        return _UNKNOWN, length
    return value, length


@dataclass
class _MkvFacts:
    timecode_scale: int = 1_000_000
    duration: Optional[float] = None
    widths: tuple[int, ...] = ()
    heights: tuple[int, ...] = ()
    video_tracks: tuple[int, ...] = ()
    blocks: int = 0
    last_block_ns: int = 0
    """In timecode units, like ``duration``."""
    cluster_time: int = 0


def _matroska_claims(f: BinaryIO, size: int, name: str) -> ContainerClaims:
    facts = _MkvFacts()
    walked = [0]
    try:
        _walk_ebml(f, 0, size, facts, name, walked, depth=0)
    except EOFError:
        raise VideoError(f"{name}: the file ends inside a Matroska element: it is truncated; re-export or replace it") from None
    if not facts.video_tracks:
        raise VideoError(f"{name}: contains no video track (audio only, or not a video); send a video file")
    scale_s = facts.timecode_scale / 1e9
    duration = facts.duration * scale_s if facts.duration is not None else None
    if facts.blocks:
        duration = max(duration or 0.0, facts.last_block_ns * scale_s)
    return ContainerClaims(
        kind="matroska",
        duration_s=duration,
        width=max(facts.widths) if facts.widths else None,
        height=max(facts.heights) if facts.heights else None,
        n_frames=facts.blocks,
    )


_MASTERS = {_EBML, _SEGMENT, _INFO, _TRACKS, _TRACK_ENTRY, _VIDEO, _CLUSTER, _BLOCK_GROUP}


def _walk_ebml(f: BinaryIO, start: int, end: int, facts: _MkvFacts, name: str, walked: list[int], depth: int) -> None:
    """The elements in ``[start, end)``: descend into masters, read the values that matter, skip the rest."""
    pos = start
    while pos < end:
        walked[0] += 1
        if walked[0] > MAX_ELEMENTS:
            raise VideoError(f"{name}: more than {MAX_ELEMENTS} Matroska elements; not a plausible video")
        f.seek(pos)
        element, id_len = _vint(f, keep_marker=True)
        length, size_len = _vint(f, keep_marker=False)
        body = pos + id_len + size_len
        stop = end if length == _UNKNOWN else body + length
        if stop > end:
            raise VideoError(
                f"{name}: the file ends inside a Matroska element ({end} of {stop} bytes): it is truncated; "
                "re-export or replace it"
            )
        if element == _TRACK_ENTRY:
            _track_entry(f, body, stop, facts, name, walked)
        elif element in _MASTERS and depth < 8:
            if element == _CLUSTER:
                facts.cluster_time = 0
            _walk_ebml(f, body, stop, facts, name, walked, depth + 1)
        elif element == _TIMECODE_SCALE:
            facts.timecode_scale = _uint(f, length) or 1_000_000
        elif element == _CLUSTER_TIMECODE:
            facts.cluster_time = _uint(f, length)
        elif element == _PIXEL_WIDTH:
            facts.widths += (_uint(f, length),)
        elif element == _PIXEL_HEIGHT:
            facts.heights += (_uint(f, length),)
        elif element == _DURATION and length in (4, 8):
            facts.duration = struct.unpack(">f" if length == 4 else ">d", f.read(length))[0]
        elif element in (_SIMPLE_BLOCK, _BLOCK):
            track, _ = _vint(f, keep_marker=False)
            relative = struct.unpack(">h", f.read(2))[0]
            if track in facts.video_tracks:
                facts.blocks += 1
                facts.last_block_ns = max(facts.last_block_ns, facts.cluster_time + relative)
        if length == _UNKNOWN:
            return  # an element of unknown size runs to the end of its parent
        pos = stop


def _track_entry(f: BinaryIO, start: int, end: int, facts: _MkvFacts, name: str, walked: list[int]) -> None:
    """A ``TrackEntry``: its number, and (for a video track) its pixel size."""
    entry = _MkvFacts()
    number = kind = None
    pos = start
    while pos < end:
        walked[0] += 1
        f.seek(pos)
        element, id_len = _vint(f, keep_marker=True)
        length, size_len = _vint(f, keep_marker=False)
        if length == _UNKNOWN:
            raise ValueError("a TrackEntry child of unknown size")
        body = pos + id_len + size_len
        if element == _TRACK_NUMBER:
            number = _uint(f, length)
        elif element == _TRACK_TYPE:
            kind = _uint(f, length)
        elif element == _VIDEO:
            _walk_ebml(f, body, body + length, entry, name, walked, depth=8)
        pos = body + length
    if kind == 1 and number is not None:
        facts.video_tracks += (number,)
        facts.widths += entry.widths
        facts.heights += entry.heights


def _uint(f: BinaryIO, length: int) -> int:
    if length > 8:
        raise ValueError(f"an integer element of {length} bytes")
    data = f.read(length)
    if len(data) < length:
        raise EOFError
    return int.from_bytes(data, "big")


# ---- AVI -------------------------------------------------------------------------------------------------


def _avi_claims(f: BinaryIO, name: str) -> ContainerClaims:
    head = f.read(4096)
    at = head.find(b"avih")
    if at < 0 or at + 48 > len(head):
        raise VideoError(f"{name}: an AVI file without its main header ('avih'); re-export or replace the file")
    micro_per_frame, _, _, _, frames, _, _, _, width, height = struct.unpack_from("<10I", head, at + 8)
    return ContainerClaims(
        kind="avi",
        duration_s=frames * micro_per_frame / 1e6 if micro_per_frame else None,
        width=width,
        height=height,
        n_frames=frames,
    )
