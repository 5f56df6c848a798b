"""The HTTP edge of ``viddiff serve`` under hostile clients, on this checkout and (``--baseline-src``) another.

Measures, over real sockets against a real uvicorn server on 127.0.0.1 (issue 37, bugs 3, 8 and 12):

- the time to refuse an 8 MiB and a 32 MiB ``Authorization`` header, and the slowest ``/healthz`` of another
  client meanwhile;
- stalled connections still open after the timeouts: slow headers and dribbled bodies, a byte every 0.5 s
  (``serve.header_timeout_s`` and ``serve.body_idle_timeout_s`` set to 2 s here, where the code has them);
- the seconds and body bytes a 40 MB text file sent as a video takes to be answered 415;
- the seconds a 40 MB upload takes to be read (the h11 parser against the httptools one it replaces);
- the log lines one client that disconnects mid-upload leaves.

    PYTHONPATH=$PWD python bench/serve_http_edge.py --baseline-src /tmp/before   # git worktree add /tmp/before main

The baseline runs in a child process with ``PYTHONPATH`` set to that checkout; each prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from viddiff.config import Config, ServeConfig
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel
from viddiff.testing.service import ServerThread, create_key

N_SLOW_HEADERS = 100
N_DRIBBLED = 20
TIMEOUT_S = 2.0
HOLD_S = 8.0
"""How long the stalling clients keep going: several timeouts."""


def _answer(sock: socket.socket, timeout_s: float) -> bytes:
    sock.settimeout(timeout_s)
    got = b""
    try:
        while b"\r\n" not in got:
            data = sock.recv(65536)
            if not data:
                break
            got += data
    except OSError:
        pass
    return got


def header_refusal(server: ServerThread, mib: int) -> dict:
    latencies: list[float] = []
    done = threading.Event()

    def probe() -> None:
        while not done.is_set():
            start = time.monotonic()
            httpx.get(server.url + "/healthz", timeout=60)
            latencies.append(time.monotonic() - start)
            time.sleep(0.05)

    prober = threading.Thread(target=probe)
    prober.start()
    sock = socket.create_connection(("127.0.0.1", server.port))
    answer: list[bytes] = []
    reader = threading.Thread(target=lambda: answer.append(_answer(sock, 120)))
    started = time.monotonic()
    reader.start()
    try:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + b"a" * (mib * 2**20) + b"\r\n\r\n")
    except OSError:
        pass
    reader.join()
    took = time.monotonic() - started
    done.set()
    prober.join()
    sock.close()
    return {f"header_{mib}mib_answer": answer[0].split(b"\r\n")[0].decode(errors="replace"),
            f"header_{mib}mib_s": round(took, 3), f"header_{mib}mib_healthz_max_s": round(max(latencies), 3)}


TAIL = b"\r\n--XyZ--\r\n"


def _upload_head(key: str, file_bytes: int) -> bytes:
    """A ``POST /v1/videos`` up to its file part's first byte; the body then is ``file_bytes`` and :data:`TAIL`."""
    part = b'--XyZ\r\nContent-Disposition: form-data; name="video"; filename="v.mp4"\r\n\r\n'
    return (f"POST /v1/videos HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n"
            f"Content-Type: multipart/form-data; boundary=XyZ\r\n"
            f"Content-Length: {len(part) + file_bytes + len(TAIL)}\r\n\r\n").encode() + part


def stalled(server: ServerThread, key: str) -> dict:
    slow = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(N_SLOW_HEADERS)]
    dribbled = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(N_DRIBBLED)]
    for sock in dribbled:
        sock.sendall(_upload_head(key, 10**6) + b"\0\0\0\x18ftypisom\0\0\0\0isom")
    request = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"s" * 1000
    open_ = {id(s): s for s in [*slow, *dribbled]}
    started, at = time.monotonic(), 0
    while time.monotonic() - started < HOLD_S:
        for sock in list(open_.values()):
            try:
                sock.sendall(request[at:at + 1] if sock in slow else b"\0")
                if select.select([sock], [], [], 0)[0] and not sock.recv(65536, socket.MSG_PEEK):
                    del open_[id(sock)]
            except OSError:
                del open_[id(sock)]
        at += 1
        time.sleep(0.5)
    for sock in [*slow, *dribbled]:
        sock.close()
    return {"slow_headers_open_after": sum(1 for s in slow if id(s) in open_),
            "dribbled_bodies_open_after": sum(1 for s in dribbled if id(s) in open_)}


def non_video(server: ServerThread, key: str) -> dict:
    total = 40 * 10**6
    sock = socket.create_connection(("127.0.0.1", server.port))
    sock.sendall(_upload_head(key, total))
    line = b"this is a text file, not a video\n" * 1985  # 65 505 bytes
    sent, started = 0, time.monotonic()
    while sent < total:
        if select.select([sock], [], [], 0)[0]:
            break
        try:
            sock.sendall(line[: total - sent])
        except OSError:
            break
        sent += min(len(line), total - sent)
    else:
        sock.sendall(TAIL)
    answer = _answer(sock, 60)
    took = time.monotonic() - started
    sock.close()
    return {"non_video_answer": answer.split(b"\r\n")[0].decode(errors="replace"), "non_video_s": round(took, 3),
            "non_video_body_bytes_sent": sent}


def upload_throughput(server: ServerThread, key: str) -> dict:
    """Seconds to read a 40 MB body that starts like an MP4 (read to its end, then refused as damaged): what
    the h11 parser in Python costs against httptools."""
    body = b"\0\0\0\x18ftypisom\0\0\0\0isom" + b"\0" * (40 * 10**6 - 24)
    times, statuses = [], set()
    for _ in range(5):  # the best of 5: the client shares this process (and the machine) with the server
        started = time.monotonic()
        response = httpx.post(server.url + "/v1/videos", headers={"Authorization": f"Bearer {key}"},
                              files={"video": ("v.mp4", body, "video/mp4")}, timeout=120)
        times.append(time.monotonic() - started)
        statuses.add(response.status_code)
    return {"upload_40mb_status": sorted(statuses), "upload_40mb_s": round(min(times), 3)}


class _Count(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.lines += len(self.format(record).splitlines())


def disconnect_log_lines(server: ServerThread, key: str) -> dict:
    counter = _Count()
    loggers = [logging.getLogger(n) for n in ("viddiff", "uvicorn.error")]
    for lg in loggers:
        lg.addHandler(counter)
        lg.setLevel(logging.INFO)
    sock = socket.create_connection(("127.0.0.1", server.port))
    sock.sendall(_upload_head(key, 10**6) + b"\0\0\0\x18ftypisom\0\0\0\0isom" + b"\0" * 100_000)
    time.sleep(0.5)
    sock.close()
    time.sleep(1.5)
    for lg in loggers:
        lg.removeHandler(counter)
    left = list((server.data_dir / "tmp").glob("*.part"))
    return {"disconnect_log_lines": counter.lines, "disconnect_partial_files_left": len(left)}


def measure() -> dict:
    bounds = ["serve.max_upload_bytes=64000000", "serve.requests_per_minute=100000"]
    if "header_timeout_s" in ServeConfig.model_fields:
        bounds += [f"serve.header_timeout_s={TIMEOUT_S}", f"serve.body_idle_timeout_s={TIMEOUT_S}"]
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(ScriptedModel()) as model:
        data_dir = Path(tmp)
        os.environ["VIDDIFF_BENCH_MODEL_KEY"] = "dummy"
        cfg = Config().with_overrides([*offline_overrides(model.base_url, str(data_dir / "cache.sqlite")),
                                       "endpoints.default.api_key_env=VIDDIFF_BENCH_MODEL_KEY", *bounds])
        with ServerThread(data_dir, cfg) as server:
            key = create_key(data_dir, "bench")
            return {**header_refusal(server, 8), **header_refusal(server, 32), **stalled(server, key),
                    **non_video(server, key),
                    **upload_throughput(server, key), **disconnect_log_lines(server, key)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline-src", type=Path, metavar="PATH", help="another checkout, measured the same way")
    parser.add_argument("--json", action="store_true", help="print one JSON line (what the baseline child does)")
    args = parser.parse_args()
    if args.json:
        print(json.dumps(measure()), flush=True)
        return
    rows = {"this checkout": measure()}
    if args.baseline_src is not None:
        env = {**os.environ, "PYTHONPATH": str(args.baseline_src.resolve())}
        out = subprocess.run([sys.executable, __file__, "--json"], env=env, check=True, capture_output=True, text=True)
        rows["baseline"] = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"{N_SLOW_HEADERS} slow headers and {N_DRIBBLED} dribbled bodies, a byte per 0.5 s for {HOLD_S:g} s; "
          f"timeouts {TIMEOUT_S:g} s where the code has them")
    for name, row in rows.items():
        print(f"\n{name}:")
        for k, v in row.items():
            print(f"  {k:32} {v}")
    if "baseline" in rows:
        now, before = rows["this checkout"], rows["baseline"]
        print(f"\n8 MiB header refused {before['header_8mib_s'] / now['header_8mib_s']:.1f}x sooner, "
              f"32 MiB {before['header_32mib_s'] / now['header_32mib_s']:.1f}x; "
              f"non-video answered {before['non_video_s'] / now['non_video_s']:.1f}x sooner; "
              f"a 40 MB upload read in {now['upload_40mb_s'] / before['upload_40mb_s']:.2f}x the time")


if __name__ == "__main__":
    main()
