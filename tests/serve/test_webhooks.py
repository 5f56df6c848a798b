"""Webhooks against a real receiver on loopback: signed with the key's secret, retried with backoff and
recorded on the job, sent for done, failed and cancelled comparisons, and refused for a loopback target
that ``serve.webhook_allow`` does not name."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest
from serve_helpers import BROKEN, LIMITS, Served, serve_config, wait_until

from viddiff.cli import main as viddiff_main
from viddiff.testing.service import ServerThread

STATEMENTS = ["the square moves faster", "the square is brighter"]


@dataclass
class Delivery:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float


class Receiver:
    """An HTTP server on 127.0.0.1 that records every POST; ``fail_first[path] = n`` answers the first n POSTs
    to ``path`` with 503."""

    def __init__(self) -> None:
        self.deliveries: list[Delivery] = []
        self.fail_first: dict[str, int] = {}
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.deliveries.append(Delivery(self.path, dict(self.headers), body, time.time()))
                failing = receiver.fail_first.get(self.path, 0)
                receiver.fail_first[self.path] = failing - 1
                self.send_response(503 if failing > 0 else 204)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def to(self, path: str) -> list[Delivery]:
        return [d for d in self.deliveries if d.path == path]

    def __enter__(self) -> "Receiver":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    with Receiver() as server:
        yield server


@pytest.fixture(scope="module")
def allowing(tmp_path_factory: pytest.TempPathFactory, serve_model) -> Iterator[Served]:
    """A server that may call loopback (``serve.webhook_allow``), retrying quickly: 3 tries, 0.3 s then 0.6 s."""
    data_dir = tmp_path_factory.mktemp("webhook-data")
    extra = [*LIMITS, "serve.webhook_allow=[127.0.0.0/8, '::1']", "serve.webhook_attempts=3", "serve.webhook_backoff_s=0.3"]
    with ServerThread(data_dir, serve_config(serve_model, data_dir, extra)) as server:
        yield Served(server, serve_model)


def create_key(data_dir: Path, name: str, capsys, *extra: str) -> tuple[str, str]:
    """``viddiff serve keys create``, as a user runs it: the key and the webhook secret it prints once."""
    assert viddiff_main(["serve", "keys", "create", name, "--data-dir", str(data_dir), *extra]) == 0
    key, secret = capsys.readouterr().out.split()
    return key, secret


def post(client, clips, differences=STATEMENTS, **data):
    files = {side: (f"{side}.mp4", clips[side[-1]].read_bytes(), "video/mp4") for side in ("video_a", "video_b")}
    created = client.post("/v1/comparisons", data={"action": "a square crossing the frame",
                                                    "differences": list(differences), **data}, files=files)
    assert created.status_code == 202, created.text
    return created.json()["id"]


def webhook_settled(client, job_id: str) -> dict:
    def settled():
        job = client.get(f"/v1/comparisons/{job_id}").json()
        return job if job["webhook"] and job["webhook"]["state"] != "pending" else None

    return wait_until(settled, 30, f"the webhook of {job_id}")


def _documented_verify():
    """The receiver's check, run as docs/serve.md shows it (its Python block under "Webhooks")."""
    text = (Path(__file__).parents[2] / "docs" / "serve.md").read_text()
    section = text[text.index("## Webhooks"):]
    code = section[section.index("```python") + len("```python"):]
    namespace: dict = {}
    exec(code[:code.index("```")], namespace)
    return namespace["verify"]


_verify = _documented_verify()


def verify(secret: str, headers: dict[str, str], body: bytes) -> dict:
    return _verify(secret, headers["Viddiff-Signature"], body)


def test_a_done_comparison_is_posted_to_the_keys_callback_url_signed_with_its_secret(allowing, clips, receiver, capsys):
    url = receiver.url("/key-hook", host="localhost")  # a name: resolved once, connected to by address
    key, secret = create_key(allowing.data_dir, "hooked", capsys, "--callback-url", url)
    with allowing.client(key) as client:
        job_id = post(client, clips)
        job = webhook_settled(client, job_id)
    (delivery,) = receiver.to("/key-hook")
    assert job["webhook"]["state"] == "delivered" and job["webhook"]["url"] == url
    assert [a["status_code"] for a in job["webhook"]["attempts"]] == [204]
    assert delivery.headers["Host"] == f"localhost:{receiver.port}"  # the name is kept in Host
    assert delivery.headers["Viddiff-Event"] == "comparison.done"
    sent = verify(secret, delivery.headers, delivery.body)
    assert sent == {k: v for k, v in job.items() if k != "webhook"}  # the comparison as GET returns it
    assert [d["description"] for d in sent["result"]["differences"]] == STATEMENTS
    with pytest.raises(ValueError):
        verify("whsec_another", delivery.headers, delivery.body)
    with pytest.raises(ValueError):
        verify(secret, delivery.headers, delivery.body.replace(b"done", b"DONE"))


def test_a_failing_receiver_gets_retries_with_backoff_recorded_on_the_job(allowing, clips, receiver, capsys):
    key, secret = create_key(allowing.data_dir, "retried", capsys)
    receiver.fail_first["/flaky"] = 2
    receiver.fail_first["/down"] = 10
    with allowing.client(key) as client:
        flaky = post(client, clips, callback_url=receiver.url("/flaky"))
        down = post(client, clips, callback_url=receiver.url("/down"))
        flaky_job, down_job = webhook_settled(client, flaky), webhook_settled(client, down)
    assert flaky_job["webhook"]["state"] == "delivered"
    assert [a["status_code"] for a in flaky_job["webhook"]["attempts"]] == [503, 503, 204]
    times = [d.at for d in receiver.to("/flaky")]
    assert times[1] - times[0] >= 0.3 and times[2] - times[1] >= 0.6  # the backoff doubles
    assert all(verify(secret, d.headers, d.body)["id"] == flaky for d in receiver.to("/flaky"))
    assert len({d.body for d in receiver.to("/flaky")}) == 1  # each retry sends the same comparison
    assert down_job["webhook"]["state"] == "failed" and "3 tries" in down_job["webhook"]["error"]
    assert [a["status_code"] for a in down_job["webhook"]["attempts"]] == [503, 503, 503]
    assert len(receiver.to("/down")) == 3  # bounded by serve.webhook_attempts


def test_failed_and_cancelled_comparisons_send_their_webhooks(allowing, clips, receiver, capsys):
    key, secret = create_key(allowing.data_dir, "ends", capsys)
    with allowing.client(key) as client:
        failed = post(client, clips, differences=[f"{BROKEN} statement"], callback_url=receiver.url("/failed"))
        assert webhook_settled(client, failed)["webhook"]["state"] == "delivered"
        allowing.model.latency_s = 0.4
        try:
            cancelled = post(client, clips, callback_url=receiver.url("/cancelled"))
            assert client.delete(f"/v1/comparisons/{cancelled}").status_code == 204  # cancels, then deletes
        finally:
            allowing.model.latency_s = 0.0
        wait_until(lambda: receiver.to("/cancelled"), 30, "the cancelled comparison's webhook")
    (failure,) = receiver.to("/failed")
    assert failure.headers["Viddiff-Event"] == "comparison.failed"
    body = verify(secret, failure.headers, failure.body)
    assert body["status"] == "failed" and "maximum context length" in body["error"]
    (cancel,) = receiver.to("/cancelled")
    assert cancel.headers["Viddiff-Event"] == "comparison.cancelled"
    assert verify(secret, cancel.headers, cancel.body)["status"] == "cancelled"


def test_loopback_targets_are_refused_unless_webhook_allow_names_them(served, clips, receiver, capsys):
    key, _ = create_key(served.data_dir, "inward", capsys)
    before = len(receiver.deliveries)
    with served.client(key) as client:
        files = {side: (f"{side}.mp4", clips[side[-1]].read_bytes(), "video/mp4") for side in ("video_a", "video_b")}
        refused = client.post("/v1/comparisons", files=files, data={
            "action": "a square crossing the frame", "differences": STATEMENTS, "callback_url": receiver.url("/in")})
        assert refused.status_code == 422
        assert refused.json()["detail"] == (
            "callback_url: 127.0.0.1 is a loopback address, which webhooks may not call unless serve.webhook_allow names it"
        )
        # a name is resolved when the webhook is sent, and refused then (recorded on the job)
        job_id = post(client, clips, callback_url=receiver.url("/in", host="localhost"))
        job = webhook_settled(client, job_id)
        assert job["status"] == "done"
        assert job["webhook"]["state"] == "refused" and job["webhook"]["attempts"] == []
        assert "loopback address" in job["webhook"]["error"] and "serve.webhook_allow" in job["webhook"]["error"]
        for bad, words in (("ftp://example.com/x", "not an http:// or https:// URL"),
                           ("http://user:pw@example.com/", "holds credentials"),
                           ("http://169.254.169.254/latest/meta-data", "link-local")):
            answer = client.post("/v1/comparisons", files=files, data={
                "action": "a square crossing the frame", "differences": STATEMENTS, "callback_url": bad})
            assert answer.status_code == 422 and words in answer.json()["detail"], answer.text
    assert len(receiver.deliveries) == before
    assert viddiff_main(["serve", "keys", "create", "bad-url", "--data-dir", str(served.data_dir),
                         "--callback-url", "not a url"]) == 2
    assert "--callback-url: 'not a url' is not an http:// or https:// URL" in capsys.readouterr().err


def test_a_webhook_pending_at_a_stop_is_sent_by_the_next_start(tmp_path, serve_model, clips, receiver, capsys):
    allow = ["serve.webhook_allow=[127.0.0.0/8]", "serve.webhook_attempts=3"]
    key, secret = create_key(tmp_path, "restarted", capsys, "--callback-url", receiver.url("/later"))
    receiver.fail_first["/later"] = 1
    first = ServerThread(tmp_path, serve_config(serve_model, tmp_path, [*LIMITS, *allow, "serve.webhook_backoff_s=600"]))
    with first, Served(first, serve_model).client(key) as client:
        job_id = post(client, clips)
        wait_until(lambda: client.get(f"/v1/comparisons/{job_id}").json()["webhook"]["attempts"], 60, "the first try")
    # stopped while waiting to retry: the try is recorded and the webhook still pending
    second = ServerThread(tmp_path, serve_config(serve_model, tmp_path, [*LIMITS, *allow, "serve.webhook_backoff_s=0.1"]))
    with second, Served(second, serve_model).client(key) as client:
        job = webhook_settled(client, job_id)
    assert job["webhook"]["state"] == "delivered"
    assert [a["status_code"] for a in job["webhook"]["attempts"]] == [503, 204]
    deliveries = receiver.to("/later")
    assert len(deliveries) == 2 and deliveries[0].body == deliveries[1].body
    assert verify(secret, deliveries[1].headers, deliveries[1].body)["id"] == job_id
