"""Every limit of ``viddiff serve`` over real HTTP, hostile files and malformed bodies: each its own clear 4xx,
nothing kept, and the server goes on serving."""

from __future__ import annotations

import re
import select
import socket
import time
from pathlib import Path

import pytest
from serve_helpers import (
    avi_claiming, claims_frames, claims_hours, claims_pixels, text_as_mp4, truncated, wait_finished, wait_until,
    zip_as_mp4,
)

LIMIT = 1_000_000  # serve.max_upload_bytes of the package's server (serve_helpers.LIMITS)


def stored_files(served) -> set[Path]:
    return {p for folder in ("videos", "tmp") if (served.data_dir / folder).exists() for p in (served.data_dir / folder).iterdir()}


def upload(client, path: Path, name: str = "clip.mp4"):
    return client.post("/v1/videos", files={"video": (name, path.read_bytes(), "video/mp4")})


HOSTILE = {
    "ten hours": (lambda clips, out: claims_hours(clips["a"], out), 422, r"lasts 36000 s \(serve.max_duration_s = 30\)"),
    "60000x60000 pixels": (
        lambda clips, out: claims_pixels(clips["a"], out), 422, r"60000x60000 = 3600000000 pixels per frame \(serve.max_pixels"
    ),
    "ten million frames": (lambda clips, out: claims_frames(clips["a"], out), 422, r"10000000 frames \(serve.max_frames = 600\)"),
    "AVI claiming 100000x100000": (
        lambda clips, out: avi_claiming(clips["avi"], out, 100_000, 100_000), 422, r"100000x100000 = 10000000000 pixels"
    ),
    "truncated mp4": (lambda clips, out: truncated(clips["a"], out), 422, r"truncated"),
    "text renamed .mp4": (lambda clips, out: text_as_mp4(out), 415, r"not a video file \(text\)"),
    "zip renamed .mp4": (lambda clips, out: zip_as_mp4(clips["a"], out), 415, r"not a video file \(a zip archive\)"),
}


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_a_hostile_file_is_refused_from_its_header_and_nothing_is_kept(served, clips, tmp_path, kind):
    make, status, message = HOSTILE[kind]
    hostile = make(clips, tmp_path / "hostile.mp4")
    before = stored_files(served)
    with served.client(served.new_key(f"hostile-{kind.replace(' ', '-')}")) as client:
        for answer in (
            upload(client, hostile),
            client.post(
                "/v1/comparisons", data={"action": "squat", "differences": ["deeper"]},
                files={"video_a": ("a.mp4", hostile.read_bytes()), "video_b": ("b.mp4", clips["b"].read_bytes())},
            ),
        ):
            assert answer.status_code == status, answer.text
            detail = answer.json()["detail"]
            assert re.search(message, detail), detail
            assert detail.startswith("video"), detail  # names the field, not a temporary file
        assert client.get("/v1/comparisons").json() == {"comparisons": [], "next": None}
    assert stored_files(served) == before
    assert upload(served.client(served.new_key(f"after-{kind.replace(' ', '-')}")), clips["a"]).status_code == 201


def test_a_header_claiming_too_much_never_reaches_the_decoder(clips, tmp_path, monkeypatch):
    """The limits are decided from the container's header: PyAV is not even opened for a file over a limit."""
    import av

    from viddiff.config import ServeConfig
    from viddiff.serve.errors import ApiError
    from viddiff.serve.limits import check_video

    opened = []
    monkeypatch.setattr(av, "open", lambda *a, **k: opened.append(a) or (_ for _ in ()).throw(AssertionError("decoder")))
    cfg = ServeConfig(max_duration_s=30, max_pixels=500_000, max_frames=600)
    for path in (claims_hours(clips["a"], tmp_path / "h.mp4"), claims_pixels(clips["a"], tmp_path / "p.mp4"),
                 avi_claiming(clips["avi"], tmp_path / "p.avi", 100_000, 100_000)):
        with pytest.raises(ApiError) as refused:
            check_video(path, "video_a", cfg)
        assert refused.value.status == 422
    assert opened == []


def _raw_post(served, key: str, head_extra: str, body_chunks, read_after_each: bool) -> tuple[bytes, int]:
    """POST over a plain socket, sending ``body_chunks`` one by one; stop sending as soon as the server
    answers. Returns the answer and the body bytes sent."""
    sock = socket.create_connection(("127.0.0.1", served.server.port), timeout=30)
    sent = 0
    try:
        sock.sendall(
            (f"POST /v1/videos HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
             f"Content-Type: multipart/form-data; boundary=XyZ\r\n{head_extra}\r\n").encode()
        )
        answer = b""
        for chunk in body_chunks:
            if select.select([sock], [], [], 0.05 if read_after_each else 0)[0]:
                break  # answered before the body ended
            try:
                sock.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(chunk)
        sock.settimeout(30)
        while b"\r\n\r\n" not in answer:
            data = sock.recv(65536)
            if not data:
                break
            answer += data
        return answer, sent
    finally:
        sock.close()


def test_an_upload_past_max_upload_bytes_is_cut_off_at_the_limit_with_413(served):
    key = served.new_key("big-upload")
    before = stored_files(served)
    part = (b"--XyZ\r\nContent-Disposition: form-data; name=\"video\"; filename=\"big.mp4\"\r\n\r\n"
            b"\0\0\0\x18ftypisom")  # an MP4's first bytes: the kind is judged on them, the size after

    def chunked(total: int, size: int = 64 * 1024):
        yield f"{len(part):x}\r\n".encode() + part + b"\r\n"
        for _ in range(total // size):
            yield f"{size:x}\r\n".encode() + b"\0" * size + b"\r\n"

    answer, sent = _raw_post(served, key, "Transfer-Encoding: chunked\r\n", chunked(20 * LIMIT), read_after_each=True)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"serve.max_upload_bytes = 1000000" in answer or b"max_upload_bytes" in answer
    assert sent < 3 * LIMIT  # the server stopped reading near the limit, not after 20 MB
    # A Content-Length over the limit is refused before a byte of the body is read.
    answer, sent = _raw_post(served, key, f"Content-Length: {50 * 2**30}\r\n", [], read_after_each=False)
    assert answer.startswith(b"HTTP/1.1 413") and sent == 0
    wait_until(lambda: stored_files(served) == before, 10, "the partial upload to be deleted")


MALFORMED = {
    "no boundary": ({"Content-Type": "multipart/form-data"}, b"whatever", 400, "no boundary"),
    "not a form": ({"Content-Type": "application/json"}, b"{}", 415, "multipart/form-data"),
    "garbage": ({"Content-Type": "multipart/form-data; boundary=XyZ"}, b"\x00\x01garbage without parts", 400, "malformed"),
    "ends inside a part": (
        {"Content-Type": "multipart/form-data; boundary=XyZ"},
        b'--XyZ\r\nContent-Disposition: form-data; name="video"; filename="a.mp4"\r\n\r\n\x00\x00\x00 ftyp', 400, "ends inside",
    ),
    "part without a name": (
        {"Content-Type": "multipart/form-data; boundary=XyZ"}, b"--XyZ\r\nContent-Type: text/plain\r\n\r\nhello\r\n--XyZ--\r\n",
        400, "Content-Disposition",
    ),
    "a file in a text field": (
        {"Content-Type": "multipart/form-data; boundary=XyZ"},
        b'--XyZ\r\nContent-Disposition: form-data; name="action"; filename="x.txt"\r\n\r\nsquat\r\n--XyZ--\r\n', 400, "unexpected file",
    ),
}


@pytest.mark.parametrize("kind", list(MALFORMED))
def test_a_malformed_body_gets_a_clear_4xx(served, kind):
    headers, body, status, words = MALFORMED[kind]
    with served.client(served.new_key(f"malformed-{kind.replace(' ', '-')}")) as client:
        for path, file_field in (("/v1/comparisons", b'name="video_a"'), ("/v1/videos", b'name="video"')):
            answer = client.post(path, content=body.replace(b'name="video"', file_field), headers=headers)
            assert answer.status_code == status, answer.text
            assert words in answer.json()["detail"]


def test_more_statements_than_serve_max_statements_are_refused(served, clips):
    with served.client(served.new_key("statements")) as client:
        files = {"video_a": ("a.mp4", clips["a"].read_bytes()), "video_b": ("b.mp4", clips["b"].read_bytes())}
        closed = client.post("/v1/comparisons", files=files, data={"action": "squat", "differences": [f"s{i}" for i in range(5)]})
        opened = client.post("/v1/comparisons", files=files, data={"action": "squat", "n_differences": "5"})
        for answer in (closed, opened):
            assert answer.status_code == 422
            assert "5 statements asked for; at most serve.max_statements = 4" in answer.json()["detail"]
        both = client.post("/v1/comparisons", files=files, data={"action": "squat", "differences": ["x"], "n_differences": "2"})
        assert both.status_code == 422 and "not both" in both.json()["detail"]  # the Python API's wording
        nothing = client.post("/v1/comparisons", files=files, data={"action": " "})
        assert nothing.status_code == 422 and "action description is empty" in nothing.json()["detail"]
        assert client.get("/v1/comparisons").json() == {"comparisons": [], "next": None}


def test_queued_jobs_per_key_and_in_total_get_429_with_retry_after(served, clips):
    served.model.latency_s = 0.3
    files = {"video_a": ("a.mp4", clips["a"].read_bytes()), "video_b": ("b.mp4", clips["b"].read_bytes())}
    statements = iter(f"the squat is deeper in queued take {i}" for i in range(10))  # no job a cache hit of another

    def data():
        return {"action": "squat", "differences": [next(statements)]}

    clients = {name: served.client(served.new_key(f"queue-{name}")) for name in ("first", "second", "third")}
    made = []
    try:
        first = clients["first"]
        made.append((first, first.post("/v1/comparisons", files=files, data=data()).json()["id"]))
        wait_until(lambda: first.get(f"/v1/comparisons/{made[0][1]}").json()["status"] == "running", what="running")
        for _ in range(2):  # serve.max_queued_per_key = 2
            answer = first.post("/v1/comparisons", files=files, data=data())
            assert answer.status_code == 202
            made.append((first, answer.json()["id"]))
        refused = first.post("/v1/comparisons", files=files, data=data())
        assert refused.status_code == 429
        assert "this key has 2 comparisons queued (serve.max_queued_per_key = 2)" in refused.json()["detail"]
        assert int(refused.headers["retry-after"]) >= 1
        second = clients["second"]
        made.append((second, second.post("/v1/comparisons", files=files, data=data()).json()["id"]))
        refused = clients["third"].post("/v1/comparisons", files=files, data=data())  # serve.max_queued_total = 3
        assert refused.status_code == 429
        assert "3 comparisons are queued (serve.max_queued_total = 3)" in refused.json()["detail"]
        assert int(refused.headers["retry-after"]) >= 1
    finally:
        served.model.latency_s = 0.0
        for client, job_id in made:
            wait_finished(client, job_id)
        for client in clients.values():
            client.close()
