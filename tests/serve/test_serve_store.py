"""The job store and the data dir under real traffic: one live server per ``--data-dir``, queue limits that
hold under concurrent POSTs, a store that never stalls the event loop (a write lock held by another process),
500s answered as JSON, a damaged ``serve.sqlite`` named with what to do, and videos in use kept."""

from __future__ import annotations

import logging
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from serve_helpers import wait_finished, wait_until

from viddiff.cli import main as viddiff_main
from viddiff.testing.service import create_key, free_port

PER_KEY = 2  # serve.max_queued_per_key of the package server (serve_helpers.LIMITS)


def serve_args(data_dir: Path, port: int) -> list[str]:
    return [sys.executable, "-m", "viddiff.cli", "-q", "serve", "--data-dir", str(data_dir), "--port", str(port)]


def upload(client: httpx.Client, clip: Path) -> str:
    answer = client.post("/v1/videos", files={"video": (clip.name, clip.read_bytes())})
    assert answer.status_code == 201, answer.text
    return answer.json()["id"]


def compare_by_id(client: httpx.Client, a: str, b: str, statement: str) -> httpx.Response:
    return client.post(
        "/v1/comparisons", data={"action": "a square crossing", "differences": [statement], "video_a_id": a,
                                 "video_b_id": b},
    )


class BusyWorker:
    """The package server's one worker held by a comparison whose model calls take ``latency_s`` each, so
    the comparisons posted meanwhile stay queued; on exit everything made is deleted and the model is fast."""

    def __init__(self, served, client: httpx.Client, videos: tuple[str, str], latency_s: float = 3.0):
        self.served, self.client, self.videos, self.latency_s = served, client, videos, latency_s
        self.made: list[str] = []

    def __enter__(self) -> BusyWorker:
        self.served.model.latency_s = self.latency_s
        answer = compare_by_id(self.client, *self.videos, f"the square is busier {time.monotonic_ns()}")
        assert answer.status_code == 202, answer.text
        self.made.append(answer.json()["id"])
        wait_until(lambda: self.client.get(f"/v1/comparisons/{self.made[0]}").json()["status"] == "running",
                   what="the blocking comparison to run")
        return self

    def __exit__(self, *exc) -> None:
        self.served.model.latency_s = 0.0
        for job_id in self.made:
            self.client.delete(f"/v1/comparisons/{job_id}")
        wait_until(lambda: self.served.client(None).get("/healthz").json()["queued"] == 0, what="an empty queue")
        wait_until(lambda: self.served.client(None).get("/healthz").json()["running"] == 0, what="no job running")


# ---- one owner per data dir


def test_a_second_server_on_a_held_data_dir_is_refused_naming_the_holder_and_keys_stay_usable(served):
    """Two servers on one --data-dir both ran every job (issue 37, bug 1)."""
    second = subprocess.Popen(serve_args(served.data_dir, free_port()), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        _, err = second.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        second.kill()
        second.communicate()
        pytest.fail("a second viddiff serve started on a data dir a live server holds")
    assert second.returncode == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert f"pid {os.getpid()}" in lines[0] and f"127.0.0.1:{served.server.port}" in lines[0]
    assert str(served.data_dir) in lines[0] and "--data-dir" in lines[0]
    # keys commands work beside the running server
    served.new_key("beside-the-server")
    listed = subprocess.run([sys.executable, "-m", "viddiff.cli", "serve", "keys", "list", "--data-dir",
                             str(served.data_dir)], capture_output=True, text=True, timeout=60, check=False)
    assert listed.returncode == 0, listed.stderr
    assert "beside-the-server\tactive" in listed.stdout


_HOLD_AND_WAIT = """
import sys, time
from viddiff.serve.ownership import DataDirOwner
DataDirOwner(sys.argv[1], "127.0.0.1", 1234).acquire()
print("held", flush=True)
time.sleep(600)
"""


def test_an_owner_whose_process_is_gone_is_taken_over_and_that_is_said(tmp_path, serve_model):
    from serve_helpers import MODEL_KEY_ENV

    from viddiff.testing import offline_overrides

    owner = subprocess.Popen([sys.executable, "-c", _HOLD_AND_WAIT, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout.readline().strip() == "held"
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait(30)
    port = free_port()
    args = serve_args(tmp_path, port)
    for item in [*offline_overrides(serve_model.base_url, str(tmp_path / "cache.sqlite")),
                 f"endpoints.default.api_key_env={MODEL_KEY_ENV}"]:
        args += ["--set", item]
    server = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, MODEL_KEY_ENV: "dummy"})
    try:
        line = server.stderr.readline()
        assert f"pid {owner.pid}" in line and "127.0.0.1:1234" in line and "taking it over" in line, line
        assert f"viddiff serve: http://127.0.0.1:{port}/" in server.stdout.readline()  # it goes on to serve
    finally:
        server.kill()
        server.communicate(timeout=60)


# ---- queue limits under concurrency


def test_concurrent_posts_from_one_key_never_queue_more_than_max_queued_per_key(served, clips):
    """20 concurrent POSTs with max_queued_per_key=3 all got 202 (issue 37, bug 2)."""
    key = served.new_key("concurrent")
    with served.client(key) as client:
        videos = upload(client, clips["a"]), upload(client, clips["b"])
        with BusyWorker(served, client, videos) as busy:
            barrier = threading.Barrier(50)
            files = {"video_a": ("a.mp4", clips["a"].read_bytes()), "video_b": ("b.mp4", clips["b"].read_bytes())}

            def post(i: int) -> httpx.Response:
                with served.client(key) as own:
                    barrier.wait()
                    return own.post("/v1/comparisons", files=files,
                                    data={"action": "a square crossing", "differences": [f"the square is taller {i}"]})

            with ThreadPoolExecutor(50) as pool:
                answers = list(pool.map(post, range(50)))
            accepted = [a.json()["id"] for a in answers if a.status_code == 202]
            busy.made += accepted
            refused = [a for a in answers if a.status_code != 202]
            queued = served.client(None).get("/healthz").json()["queued"]
            print(f"50 concurrent POSTs, max_queued_per_key={PER_KEY}: {len(accepted)} accepted, queued {queued}")
            assert len(accepted) == PER_KEY and queued == PER_KEY
            assert {a.status_code for a in refused} == {429}
            assert all(int(a.headers["retry-after"]) >= 1 and "max_queued_per_key" in a.json()["detail"]
                       for a in refused)


# ---- a write lock held by another process

_HOLD_WRITE_LOCK = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("ROLLBACK")
"""


def test_a_write_lock_held_by_another_process_stalls_no_request_and_a_blocked_write_gets_503(served, clips):
    """With serve.sqlite write-locked from outside, /healthz waited 18.3 s and an upload got a plain-text 500
    that left its file in videos/ (issue 37, bug 7)."""
    key = served.new_key("locked-out")
    with served.client(key) as client:
        kept = set((served.data_dir / "videos").iterdir()) if (served.data_dir / "videos").exists() else set()
        latencies: list[float] = []
        stop = threading.Event()

        def poll_health() -> None:
            with served.client(None) as probe:
                while not stop.is_set():
                    start = time.perf_counter()
                    assert probe.get("/healthz").status_code == 200
                    latencies.append(time.perf_counter() - start)
                    time.sleep(0.02)

        holder = subprocess.Popen([sys.executable, "-c", _HOLD_WRITE_LOCK, str(served.data_dir / "serve.sqlite"), "4"],
                                  stdout=subprocess.PIPE, text=True)
        poller = threading.Thread(target=poll_health)
        try:
            assert holder.stdout.readline().strip() == "locked"
            poller.start()
            blocked = client.post("/v1/videos", files={"video": ("a.mp4", clips["a"].read_bytes())})
            blocked_job = client.post(
                "/v1/comparisons", data={"action": "a square crossing", "differences": ["the square is locked out"]},
                files={"video_a": ("a.mp4", clips["a"].read_bytes()), "video_b": ("b.mp4", clips["b"].read_bytes())},
            )
            listed = client.get("/v1/comparisons")  # a read is not blocked by a writer (WAL)
            holder.wait(30)
        finally:
            holder.kill()
            stop.set()
            poller.join(30)
        latencies.sort()
        print(f"/healthz under a held write lock: {len(latencies)} requests, median "
              f"{latencies[len(latencies) // 2] * 1000:.1f} ms, slowest {latencies[-1] * 1000:.1f} ms")
        assert blocked.status_code == 503, blocked.text
        assert "locked" in blocked.json()["detail"] and int(blocked.headers["retry-after"]) >= 1
        assert blocked_job.status_code == 503 and "locked" in blocked_job.json()["detail"]
        assert listed.status_code == 200
        assert set((served.data_dir / "videos").iterdir()) == kept  # no file without a row
        assert listed.json()["comparisons"] == []
        # Within 100 ms when the machine has CPU to spare (20-46 ms measured; bench/serve_store.py: 99 ms at most
        # with the lock held 20 s); with 12 processes on 2 cores one answer took 0.5 s. Before, every request
        # waited for the lock (the 4 s it is held), so 1 s still tells the two apart on a crowded CI machine.
        assert len(latencies) > 20 and latencies[len(latencies) // 2] < 0.1 and latencies[-1] < 1.0
        upload(client, clips["a"])  # and once the lock is gone, writes go through


# ---- errors


def test_a_500_is_json_holds_no_server_path_and_is_logged_once_with_its_traceback(served, clips):
    with served.client(served.new_key("report-gone")) as client:
        created = client.post(
            "/v1/comparisons", data={"action": "a square crossing", "differences": ["the square is bigger"],
                                     "report": "true"},
            files={"video_a": ("a.mp4", clips["a"].read_bytes()), "video_b": ("b.mp4", clips["b"].read_bytes())},
        ).json()
        assert wait_finished(client, created["id"])["status"] == "done"
        (served.data_dir / "reports" / f"{created['id']}.html").unlink()  # an operator removed the report file
        records: list[logging.LogRecord] = []
        handler = logging.Handler()
        handler.emit = records.append
        logging.getLogger("uvicorn.error").addHandler(handler)
        logging.getLogger("viddiff.serve").addHandler(handler)
        try:
            answer = client.get(f"/v1/comparisons/{created['id']}/report")
        finally:
            logging.getLogger("uvicorn.error").removeHandler(handler)
            logging.getLogger("viddiff.serve").removeHandler(handler)
    assert answer.status_code == 500
    assert answer.headers["content-type"] == "application/json"
    assert "server log" in answer.json()["detail"] and str(served.data_dir) not in answer.text
    assert len([r for r in records if r.exc_info]) == 1


# ---- a damaged serve.sqlite


def _damaged_pages(path: Path) -> None:
    """A real store with keys and events, then its table pages overwritten."""
    for i in range(40):
        create_key(path.parent, f"key-{i}")
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    page = 4096
    data[page: 3 * page] = os.urandom(2 * page)
    path.write_bytes(data)


@pytest.mark.parametrize("damage", ["random bytes", "damaged pages"])
def test_a_damaged_store_is_named_with_what_to_do_and_left_in_place(tmp_path, capsys, damage):
    store = tmp_path / "serve.sqlite"
    if damage == "random bytes":
        store.write_bytes(os.urandom(64 * 1024))
    else:
        _damaged_pages(store)
    damaged = store.read_bytes()
    for argv in (["serve", "keys", "list", "--data-dir", str(tmp_path)],
                 ["serve", "--data-dir", str(tmp_path), "--port", str(free_port())]):
        assert viddiff_main(argv) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        assert str(store) in err and "damaged" in err and "backup" in err
    assert store.read_bytes() == damaged  # the keys are the operator's: nothing was moved or rewritten


# ---- videos in use


def test_deleting_a_video_a_queued_comparison_uses_is_refused_naming_the_comparison(served, clips):
    """DELETE of a video a queued comparison used succeeded; the job then failed with an error holding the
    server's file path (issue 37, bug 11)."""
    with served.client(served.new_key("in-use")) as client:
        videos = upload(client, clips["a"]), upload(client, clips["b"])
        with BusyWorker(served, client, videos) as busy:
            waiting = compare_by_id(client, *videos, "the square is rounder").json()["id"]
            busy.made.append(waiting)
            refused = client.delete(f"/v1/videos/{videos[0]}")
            assert refused.status_code == 409, refused.text
            assert waiting in refused.json()["detail"]
            assert client.get(f"/v1/videos/{videos[0]}").status_code == 200
            assert client.delete(f"/v1/comparisons/{waiting}").status_code == 204
        assert client.delete(f"/v1/videos/{videos[0]}").status_code == 204  # no comparison uses it now


def test_a_comparison_whose_video_file_vanished_fails_without_showing_a_server_path(served, clips):
    with served.client(served.new_key("vanished")) as client:
        videos = upload(client, clips["a"]), upload(client, clips["b"])
        with BusyWorker(served, client, videos, latency_s=1.0) as busy:
            waiting = compare_by_id(client, *videos, "the square is greener").json()["id"]
            busy.made.append(waiting)
            next((served.data_dir / "videos").glob(f"{videos[1]}.*")).unlink()  # lost on the server's disk
            client.delete(f"/v1/comparisons/{busy.made[0]}")  # the worker takes the waiting one now
            body = wait_finished(client, waiting)
        events = client.get(f"/v1/comparisons/{waiting}/events").text
    assert body["status"] == "failed"
    assert "video_b" in body["error"]
    assert str(served.data_dir) not in body["error"] and str(served.data_dir) not in events
