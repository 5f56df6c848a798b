"""The HTTP edge over raw sockets: huge and slow headers, dribbled bodies, clients gone mid-upload, and a
non-video refused on its first bytes (docs/serve.md#bounded-requests). One server, with tiny timeouts."""

from __future__ import annotations

import contextlib
import logging
import select
import socket
import threading
import time
from pathlib import Path
from typing import Iterator

import httpx
import pytest
from serve_helpers import LIMITS, serve_config, wait_until

from viddiff.serve.http_limits import LINGER_S, MIN_BODY_BYTES
from viddiff.testing.service import ServerThread

HEADER_TIMEOUT_S = 1.0
BODY_IDLE_S = 0.5
MAX_HEADER = 16 * 1024
MP4_HEAD = b"\0\0\0\x18ftypisom\0\0\0\0isom"


@pytest.fixture(scope="module")
def edge(tmp_path_factory: pytest.TempPathFactory, serve_model) -> Iterator[ServerThread]:
    data_dir = tmp_path_factory.mktemp("edge-data")
    bounds = [f"serve.header_timeout_s={HEADER_TIMEOUT_S}", f"serve.body_idle_timeout_s={BODY_IDLE_S}",
              f"serve.max_header_bytes={MAX_HEADER}"]
    with ServerThread(data_dir, serve_config(serve_model, data_dir, [*LIMITS, *bounds])) as server:
        yield server


@pytest.fixture(scope="module")
def key(edge: ServerThread) -> str:
    from viddiff.testing.service import create_key

    return create_key(edge.data_dir, "edge")


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def text(self) -> list[str]:
        """The lines besides the access lines (one per request, whatever happened to it)."""
        return [self.format(r) for r in self.records if r.name != "viddiff.serve.access"]


@contextlib.contextmanager
def server_log() -> Iterator[_Lines]:
    """What the server logs meanwhile: its own lines and uvicorn's (which does not propagate to the root)."""
    lines = _Lines()
    loggers = [logging.getLogger(name) for name in ("viddiff", "uvicorn.error")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.addHandler(lines)
        lg.setLevel(logging.INFO)
    try:
        yield lines
    finally:
        for lg, level in zip(loggers, levels):
            lg.removeHandler(lines)
            lg.setLevel(level)


def connect(server: ServerThread) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=30)


def read_until_closed(sock: socket.socket, timeout_s: float) -> tuple[bytes, bool]:
    """Everything the server sends until it closes (``True``) or ``timeout_s`` passes (``False``)."""
    got, deadline = b"", time.monotonic() + timeout_s
    while True:
        if select.select([sock], [], [], max(0.0, deadline - time.monotonic()))[0]:
            try:
                data = sock.recv(65536)
            except ConnectionResetError:
                return got, True
            if not data:
                return got, True
            got += data
        elif time.monotonic() >= deadline:
            return got, False


def partial_uploads(server: ServerThread) -> list[Path]:
    return list((server.data_dir / "tmp").glob("*.part"))


def healthz_seconds(server: ServerThread) -> float:
    start = time.monotonic()
    assert httpx.get(server.url + "/healthz", timeout=30).status_code == 200
    return time.monotonic() - start


def test_a_header_past_max_header_bytes_is_answered_431_before_the_rest_is_read(edge):
    sock = connect(edge)
    answers: list[bytes] = []
    reader = threading.Thread(target=lambda: answers.append(read_until_closed(sock, 20)[0]))
    reader.start()
    started = time.monotonic()
    try:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ")
        for i in range(8 * 16):  # 8 MiB in 64 KiB pieces, as long as the server takes them
            sock.sendall(b"a" * 65536)
            if i % 16 == 0:
                assert healthz_seconds(edge) < 1.0  # another client is served meanwhile
    except (BrokenPipeError, ConnectionResetError):
        pass
    reader.join(30)
    sock.close()
    (answer,) = answers
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert b"serve.max_header_bytes = 16384" in answer
    assert time.monotonic() - started < LINGER_S + 5  # refused and closed, not read to its end
    # A header within the cap is served as ever.
    pad = "x" * (MAX_HEADER - 1024)
    assert httpx.get(edge.url + "/healthz", headers={"X-Pad": pad}).status_code == 200


def test_headers_sent_a_byte_at_a_time_are_closed_after_header_timeout_s(edge):
    slow = [connect(edge) for _ in range(5)]
    request = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"s" * 100
    opened = time.monotonic()
    closed: dict[int, bytes] = {}
    at = 0
    while len(closed) < len(slow) and time.monotonic() - opened < HEADER_TIMEOUT_S + 5:
        for i, sock in enumerate(slow):
            if i in closed:
                continue
            with contextlib.suppress(OSError):
                sock.sendall(request[at:at + 1])
            answer, gone = read_until_closed(sock, 0.0)
            if gone:
                closed[i] = answer
        at += 1
        assert healthz_seconds(edge) < 1.0  # the others are served meanwhile
        time.sleep(0.1)
    took = time.monotonic() - opened
    for sock in slow:
        sock.close()
    assert len(closed) == len(slow), f"{len(slow) - len(closed)} slow-header connections still open after {took:.1f} s"
    assert HEADER_TIMEOUT_S * 0.9 <= took < HEADER_TIMEOUT_S + 2
    assert all(a.startswith(b"HTTP/1.1 408 ") and b"serve.header_timeout_s" in a for a in closed.values())


def _upload_head(key: str, length: int) -> bytes:
    part = b'--XyZ\r\nContent-Disposition: form-data; name="video"; filename="v.mp4"\r\n\r\n'
    return (f"POST /v1/videos HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n"
            f"Content-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: {length}\r\n\r\n").encode() + part


def test_dribbled_bodies_are_closed_and_their_partial_files_removed(edge, key):
    with server_log() as log:
        dribblers = [connect(edge) for _ in range(4)]
        for sock in dribblers:
            sock.sendall(_upload_head(key, 100_000) + MP4_HEAD)
        opened = time.monotonic()
        wait_until(lambda: len(partial_uploads(edge)) == len(dribblers), 10, "the uploads to begin")
        open_ = set(range(len(dribblers)))
        while open_ and time.monotonic() - opened < BODY_IDLE_S * 2 + 5:
            for i in list(open_):
                try:
                    dribblers[i].sendall(b"\0")  # a byte every 0.1 s: far below MIN_BODY_BYTES per window
                except OSError:
                    open_.discard(i)
                    continue
                if read_until_closed(dribblers[i], 0.0)[1]:
                    open_.discard(i)
            time.sleep(0.1)
        took = time.monotonic() - opened
        for sock in dribblers:
            sock.close()
        assert not open_, f"{len(open_)} dribbled bodies still open after {took:.1f} s"
        assert took < BODY_IDLE_S * 2 + 2
        wait_until(lambda: not partial_uploads(edge), 10, "the partial uploads to be removed")
        time.sleep(0.3)  # anything logged after the removal would show here
    text = log.text()
    assert not [line for line in text if "Traceback" in line or "Exception in ASGI" in line], text
    assert sum("request body brought" in line for line in text) == len(dribblers), text
    assert len(text) == len(dribblers), text  # one line each


def test_a_slow_but_steady_upload_is_not_cut(edge, key, clips):
    data = clips["avi"].read_bytes()  # the largest clip, 7 kB
    body = (b'--XyZ\r\nContent-Disposition: form-data; name="video"; filename="a.avi"\r\n\r\n'
            + data + b"\r\n--XyZ--\r\n")
    sock = connect(edge)
    head = (f"POST /v1/videos HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n"
            f"Content-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    sock.sendall(head)
    piece = 2 * MIN_BODY_BYTES // round(BODY_IDLE_S / 0.1)  # per 0.1 s: twice the floor per window, for several windows
    started = time.monotonic()
    for at in range(0, len(body), piece):
        sock.sendall(body[at:at + piece])
        time.sleep(0.1)
    answer, _ = read_until_closed(sock, 0.5)
    sock.close()
    assert time.monotonic() - started > 2 * BODY_IDLE_S
    assert answer.startswith(b"HTTP/1.1 201 "), answer[:300]


def test_a_client_gone_mid_upload_is_one_log_line_and_leaves_no_file(edge, key):
    with server_log() as log:
        sock = connect(edge)
        sock.sendall(_upload_head(key, 500_000) + MP4_HEAD + b"\0" * 50_000)
        wait_until(lambda: partial_uploads(edge), 10, "the upload to begin")
        sock.close()
        wait_until(lambda: not partial_uploads(edge), 10, "the partial upload to be removed")
        wait_until(lambda: any("went away" in line for line in log.text()), 10, "the log line")
        time.sleep(0.3)  # anything logged after it would show here
    text = log.text()
    assert len(text) == 1, text
    assert "went away during POST /v1/videos" in text[0]


def test_a_non_video_is_answered_415_on_its_first_bytes_not_after_its_body(edge, key):
    sock = connect(edge)
    sock.sendall(_upload_head(key, 900_000))
    sent, answer = 0, b""
    for _ in range(900_000 // 8192):
        if select.select([sock], [], [], 0.02)[0]:
            break
        try:
            sock.sendall(b"this is text, not a video\n" * 315)
        except OSError:
            break
        sent += 8190
    answer, closed = read_until_closed(sock, LINGER_S + 3)
    sock.close()
    assert answer.startswith(b"HTTP/1.1 415 "), answer[:200]
    assert b"not a video file (text)" in answer
    assert sent < 100_000, sent  # answered on the first bytes
    assert closed  # and the rest is not read


def test_a_client_that_sends_its_whole_body_still_reads_the_early_415(edge, key):
    """httpx sends the whole body before it reads: the lingering close lets it read the answer."""
    text = b"plain text, named like a video\n" * 30_000  # 930 kB, under serve.max_upload_bytes
    with httpx.Client(base_url=edge.url, headers={"Authorization": f"Bearer {key}"}, timeout=30) as client:
        response = client.post("/v1/videos", files={"video": ("v.mp4", text, "video/mp4")})
    assert response.status_code == 415, response.text
    assert "not a video file (text)" in response.json()["detail"]
