"""A multipart request body read as it arrives: files straight to disk, and the whole body cut off at a limit.

FastAPI's form parsing reads the entire body (spooling files) before a handler sees it, so a 4 GB upload is
stored before anything can refuse it. Here the body is fed chunk by chunk to ``python-multipart``'s parser
and the byte count checked on every chunk: past ``max_bytes`` reading stops, the partial files are deleted
and the request ends in 413.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import AsyncIterator, BinaryIO, Optional
from urllib.parse import parse_qs

from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header

from viddiff.serve.calibrations import looks_like_text, not_text
from viddiff.serve.errors import ApiError
from viddiff.video.container import describe_content, sniff_kind

MAX_FIELD_BYTES = 64 * 1024
"""Longest text field (an action, one statement)."""
MAX_PARTS = 200
SNIFF_BYTES = 16
"""A file part's kind is judged on this many first bytes (what :func:`sniff_kind` reads)."""


@dataclass
class UploadedFile:
    field: str
    filename: str
    path: Path
    bytes: int = 0
    kept: bool = False
    """Moved out of the temporary folder to be kept (``discard_files`` leaves it)."""


@dataclass
class Form:
    fields: dict[str, list[str]] = field(default_factory=dict)
    files: dict[str, UploadedFile] = field(default_factory=dict)

    def text(self, name: str) -> Optional[str]:
        values = self.fields.get(name)
        return values[-1] if values else None

    def discard_files(self) -> None:
        for upload in self.files.values():
            if not upload.kept:
                upload.path.unlink(missing_ok=True)


def too_large(max_bytes: int) -> ApiError:
    """413, naming the limit."""
    return ApiError(
        413, f"the request body is larger than serve.max_upload_bytes = {max_bytes} bytes; send smaller videos"
    )


class _Reader:
    """Parser callbacks: collect text fields, write file parts to ``tmp_dir``."""

    def __init__(self, tmp_dir: Path, file_fields: frozenset[str], text_file_fields: frozenset[str], max_text_bytes: int):
        self.tmp_dir = tmp_dir
        self.file_fields = file_fields | text_file_fields
        self.text_file_fields = text_file_fields
        self.max_text_bytes = max_text_bytes
        self.form = Form()
        self._header_name = b""
        self._header_value = b""
        self._headers: dict[bytes, bytes] = {}
        self._name = ""
        self._text = bytearray()
        self._file: Optional[BinaryIO] = None
        self._upload: Optional[UploadedFile] = None
        self._head = bytearray()
        """The first bytes of the file part being read, judged once there are :data:`SNIFF_BYTES`."""
        self._parts = 0

    def callbacks(self) -> dict:
        return {
            "on_part_begin": self._part_begin,
            "on_header_field": lambda d, s, e: self._add(d, s, e, "_header_name"),
            "on_header_value": lambda d, s, e: self._add(d, s, e, "_header_value"),
            "on_header_end": self._header_end,
            "on_headers_finished": self._headers_finished,
            "on_part_data": self._part_data,
            "on_part_end": self._part_end,
        }

    def _add(self, data: bytes, start: int, end: int, attr: str) -> None:
        setattr(self, attr, getattr(self, attr) + data[start:end])

    def _part_begin(self) -> None:
        self._parts += 1
        if self._parts > MAX_PARTS:
            raise ApiError(400, f"the form has more than {MAX_PARTS} parts")
        self._headers = {}

    def _header_end(self) -> None:
        self._headers[self._header_name.lower()] = self._header_value
        self._header_name = self._header_value = b""

    def _headers_finished(self) -> None:
        disposition, options = parse_options_header(self._headers.get(b"content-disposition", b""))
        if disposition != b"form-data" or b"name" not in options:
            raise ApiError(400, "malformed multipart body: a part has no Content-Disposition: form-data; name=...")
        self._name = options[b"name"].decode("utf-8", "replace")
        filename = options.get(b"filename")
        if filename is None:
            self._text = bytearray()
            return
        if self._name not in self.file_fields:
            raise ApiError(400, f"unexpected file in field {self._name!r}; files go in {', '.join(sorted(self.file_fields))}")
        if self._name in self.form.files:
            raise ApiError(400, f"field {self._name!r} holds more than one file")
        path = self.tmp_dir / f"upload-{secrets.token_hex(8)}.part"
        self._upload = UploadedFile(self._name, Path(filename.decode("utf-8", "replace")).name, path)
        self.form.files[self._name] = self._upload
        self._file = open(path, "wb")
        self._head = bytearray()

    def _part_data(self, data: bytes, start: int, end: int) -> None:
        if self._file is not None and self._upload is not None:
            if self._upload.bytes < SNIFF_BYTES:
                self._head += data[start:min(end, start + SNIFF_BYTES - len(self._head))]
                if len(self._head) >= SNIFF_BYTES:
                    self._judge_head()
            self._file.write(data[start:end])
            self._upload.bytes += end - start
            if self._name in self.text_file_fields and self._upload.bytes > self.max_text_bytes:
                raise ApiError(413, f"{self._name}: more than serve.max_calibration_bytes = {self.max_text_bytes} bytes")
            return
        self._text += data[start:end]
        if len(self._text) > MAX_FIELD_BYTES:
            raise ApiError(413, f"field {self._name!r} is longer than {MAX_FIELD_BYTES} bytes")

    def _judge_head(self) -> None:
        """415 on a file part's first bytes, before the rest of the body is read."""
        if self._name in self.text_file_fields:
            if not looks_like_text(bytes(self._head)):
                raise not_text(self._name)
            return
        if sniff_kind(bytes(self._head)) is None:
            raise ApiError(415, f"{self._name}: not a video file ({describe_content(bytes(self._head))}); "
                           "send an MP4, MOV, WebM, MKV or AVI")

    def _part_end(self) -> None:
        if self._file is not None:
            if len(self._head) < SNIFF_BYTES:
                self._judge_head()
            self._file.close()
            self._file = None
            self._upload = None
            return
        try:
            value = self._text.decode("utf-8")
        except UnicodeDecodeError:
            raise ApiError(400, f"field {self._name!r} is not UTF-8 text") from None
        self.form.fields.setdefault(self._name, []).append(value)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


async def read_form(
    headers: dict[str, str], body: AsyncIterator[bytes], tmp_dir: Path, *, max_bytes: int,
    file_fields: frozenset[str] = frozenset(), text_file_fields: frozenset[str] = frozenset(), max_text_bytes: int = 0,
) -> Form:
    """Parse a ``multipart/form-data`` body; the caller owns (and must discard) the files of the returned form.
    Files are accepted in ``file_fields`` (videos: judged by their first bytes) and ``text_file_fields`` (text
    files, calibrations: judged so, and cut off past ``max_text_bytes``).

    Raises :class:`ApiError`: 413 as soon as the body passes ``max_bytes`` (or its ``Content-Length`` says it
    will), 415 for another content type, 400 for a malformed body.
    """
    content_type, options = parse_options_header(headers.get("content-type", ""))
    if content_type == b"application/x-www-form-urlencoded":  # fields only: videos referenced by id
        return await _read_urlencoded(body, max_bytes)
    if content_type != b"multipart/form-data":
        raise ApiError(415, "send the request as multipart/form-data (fields and files), e.g. curl -F video_a=@a.mp4")
    boundary = options.get(b"boundary")
    if not boundary:
        raise ApiError(400, "malformed multipart body: the Content-Type header has no boundary")
    length = headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > max_bytes:
        raise too_large(max_bytes)
    tmp_dir.mkdir(parents=True, exist_ok=True)
    reader = _Reader(tmp_dir, file_fields, text_file_fields, max_text_bytes)
    parser = MultipartParser(boundary, reader.callbacks())
    received = 0
    try:
        async for chunk in body:
            received += len(chunk)
            if received > max_bytes:
                raise too_large(max_bytes)
            parser.write(chunk)
        parser.finalize()
        if not reader.form.fields and not reader.form.files:
            raise ApiError(400, "malformed multipart body: no parts (is the boundary right?)")
        if reader._file is not None:
            raise ApiError(400, "malformed multipart body: it ends inside a part")
    except MultipartParseError as exc:
        reader.close()
        reader.form.discard_files()
        raise ApiError(400, f"malformed multipart body: {exc}") from None
    except BaseException:
        reader.close()
        reader.form.discard_files()
        raise
    return reader.form


async def _read_urlencoded(body: AsyncIterator[bytes], max_bytes: int) -> Form:
    limit = min(max_bytes, MAX_PARTS * MAX_FIELD_BYTES)
    data = bytearray()
    async for chunk in body:
        data += chunk
        if len(data) > limit:
            raise too_large(limit)
    try:
        fields = parse_qs(data.decode("utf-8"), keep_blank_values=True, strict_parsing=bool(data), errors="strict")
    except (UnicodeDecodeError, ValueError) as exc:
        raise ApiError(400, f"malformed form body: {exc}") from None
    return Form(fields=fields)


def move_into(upload: UploadedFile, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(upload.path, target)
    upload.kept = True
    return target
