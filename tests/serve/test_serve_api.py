"""``viddiff serve`` over real HTTP: comparisons, events, keys, cancelling, failures, metrics (the web page:
test_web_page.py)."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import time

import pytest
from serve_helpers import BROKEN, read_events, wait_finished, wait_until

from viddiff.api import VidDiff
from viddiff.cli import main as viddiff_main

STATEMENTS = ["the square moves faster", "the square is brighter"]


def post_comparison(client, clips, *, differences=STATEMENTS, report=False, headers=None, **files):
    files = files or {"video_a": clips["a"], "video_b": clips["b"]}
    data = {"action": "a square crossing the frame", "differences": list(differences), "report": str(report).lower()}
    return client.post(
        "/v1/comparisons", data=data, headers=headers or {},
        files={name: (path.name, path.read_bytes(), "video/mp4") for name, path in files.items()},
    )


def idle(served) -> None:
    """Wait until no comparison is queued or running (tests that slow the model leave none behind)."""
    wait_until(lambda: served.client(None).get("/healthz").json() == {"status": "ok", "queued": 0, "running": 0},
               what="an idle server")


@pytest.fixture
def slow_model(served):
    """Every model call takes 0.4 s while the test runs, so jobs can be caught queued or running."""
    served.model.latency_s = 0.4
    try:
        yield served.model
    finally:
        served.model.latency_s = 0.0
        idle(served)


def test_a_comparison_streams_the_events_of_astream_and_its_result_equals_acompare(served, clips):
    key = served.new_key("events")
    with served.client(key) as client:
        created = post_comparison(client, clips, report=True)
        assert created.status_code == 202, created.text
        body = created.json()
        job_id = body["id"]
        assert body["status"] == "queued"
        assert created.headers["location"] == body["links"]["self"] == f"/v1/comparisons/{job_id}"

        events = read_events(client, job_id)
        assert [kind for _, kind, _ in events] == ["proposal", "segmentation", "verdict", "verdict", "result"]
        assert [event_id for event_id, _, _ in events] == [1, 2, 3, 4, 5]
        job = client.get(f"/v1/comparisons/{job_id}").json()
        assert job["status"] == "done" and job["error"] is None
        assert job["progress"] == {"step": "finished", "differences": 2, "decided": 2, "attempts": 1}
        assert job["result"] == events[-1][2]["result"]

        report = client.get(f"/v1/comparisons/{job_id}/report")
        assert report.status_code == 200 and report.headers["content-type"].startswith("text/html")
        assert "the square moves faster" in report.text and "<video" in report.text

    # The same comparison through the Python API: the same events, the same result.
    config = served.server.config.model_copy(update={"cache": served.server.config.cache.model_copy(update={"path": None, "enabled": False})})

    async def direct():
        vd = VidDiff(config)
        try:
            return [e async for e in vd.astream(clips["a"], clips["b"], "a square crossing the frame", differences=STATEMENTS)]
        finally:
            await vd.aclose()

    expected = asyncio.run(direct())
    assert [e.type for e in expected] == [kind for _, kind, _ in events]
    direct_result = expected[-1].result.model_dump(mode="json")
    assert {d["key"]: d["prediction"] for d in direct_result["differences"]} == {
        d["key"]: d["prediction"] for d in job["result"]["differences"]
    }
    assert [d["keyframes_a"] for d in direct_result["differences"]] == [d["keyframes_a"] for d in job["result"]["differences"]]
    # The same notes, the stand-ins included (here the scripted model server and random-weight CLIP).
    assert job["result"]["notes"] == direct_result["notes"]
    assert [n.split(":")[0] for n in direct_result["notes"] if n.startswith("stand-in: ")] == [
        "stand-in", "stand-in"
    ]


def test_open_mode_on_a_reference_video_uploaded_once(served, clips):
    with served.client(served.new_key("reference")) as client:
        uploaded = client.post("/v1/videos", files={"video": ("ref.mp4", clips["a"].read_bytes())})
        assert uploaded.status_code == 201, uploaded.text
        video = uploaded.json()
        assert (video["kind"], video["width"], video["height"], video["n_frames"]) == ("mp4", 96, 64, 24)
        assert client.get(f"/v1/videos/{video['id']}").json() == video
        for other in ("webm", "avi"):
            created = client.post(
                "/v1/comparisons",
                data={"action": "a square crossing the frame", "n_differences": "2", "video_a_id": video["id"]},
                files={"video_b": (clips[other].name, clips[other].read_bytes())},
            )
            assert created.status_code == 202, created.text
            job = wait_finished(client, created.json()["id"])
            assert job["status"] == "done", job["error"]
            assert job["mode"] == "open" and 1 <= len(job["result"]["differences"]) <= 2
        # deleting a comparison leaves the reference video (it belongs to no comparison)
        assert client.delete(f"/v1/comparisons/{created.json()['id']}").status_code == 204
        assert client.get(f"/v1/videos/{video['id']}").status_code == 200
        assert client.delete(f"/v1/videos/{video['id']}").status_code == 204
        assert client.get(f"/v1/videos/{video['id']}").status_code == 404


def test_a_client_reconnecting_with_last_event_id_gets_the_events_it_missed(served, clips, slow_model):
    with served.client(served.new_key("reconnect")) as client:
        job_id = post_comparison(client, clips).json()["id"]
        first = read_events(client, job_id, stop_after=2)  # then the connection drops
        assert [kind for _, kind, _ in first] == ["proposal", "segmentation"]
        rest = read_events(client, job_id, last_event_id=first[-1][0])
        assert [kind for _, kind, _ in rest] == ["verdict", "verdict", "result"]
        assert read_events(client, job_id) == first + rest  # nothing lost, nothing repeated
        assert read_events(client, job_id, last_event_id=5) == []  # after the last event: the stream just ends


def test_a_retried_post_with_the_same_idempotency_key_makes_one_job(served, clips):
    with served.client(served.new_key("idempotent")) as client:
        headers = {"Idempotency-Key": "upload-7f3a"}
        first = post_comparison(client, clips, headers=headers)
        again = post_comparison(client, clips, headers=headers)
        assert first.status_code == again.status_code == 202
        assert first.json()["id"] == again.json()["id"]
        other = post_comparison(client, clips, headers={"Idempotency-Key": "upload-other"})
        assert other.json()["id"] != first.json()["id"]
        listed = [c["id"] for c in client.get("/v1/comparisons").json()["comparisons"]]
        assert sorted(listed) == sorted({first.json()["id"], other.json()["id"]})
        for job_id in listed:
            wait_finished(client, job_id)


def test_a_key_sees_only_its_own_jobs_and_videos(served, clips):
    owner, stranger = served.new_key("owner"), served.new_key("stranger")
    with served.client(owner) as mine, served.client(stranger) as theirs:
        job_id = post_comparison(mine, clips, report=True).json()["id"]
        video_id = mine.post("/v1/videos", files={"video": ("a.mp4", clips["a"].read_bytes())}).json()["id"]
        wait_finished(mine, job_id)
        for method, path in (
            ("GET", f"/v1/comparisons/{job_id}"), ("GET", f"/v1/comparisons/{job_id}/events"),
            ("GET", f"/v1/comparisons/{job_id}/report"), ("DELETE", f"/v1/comparisons/{job_id}"),
            ("GET", f"/v1/videos/{video_id}"), ("DELETE", f"/v1/videos/{video_id}"),
        ):
            answer = theirs.request(method, path)
            assert answer.status_code == 404, (method, path, answer.text)
        borrowed = theirs.post(
            "/v1/comparisons", data={"action": "squat", "n_differences": "1", "video_a_id": video_id, "video_b_id": video_id}
        )
        assert borrowed.status_code == 404 and video_id in borrowed.json()["detail"]
        assert job_id not in theirs.get("/v1/comparisons").text
        assert mine.get(f"/v1/comparisons/{job_id}").json()["status"] == "done"  # still there for its owner


READ_STORE_FILES = """
import pathlib, sys
sys.stdout.buffer.write(b"".join(p.read_bytes() for p in pathlib.Path(sys.argv[1]).glob("serve.sqlite*")))
"""
"""Reads the store's files from another process: a process that opens and closes a SQLite file behind the
library's back drops every lock its own connections hold on it (POSIX locks are per process), after which
another process's last connection checkpoints and deletes the WAL under the live server."""


def test_keys_are_printed_once_stored_hashed_and_revocable(served, capsys):
    assert viddiff_main(["serve", "keys", "create", "cli-made", "--data-dir", str(served.data_dir)]) == 0
    key, secret = capsys.readouterr().out.split("\n")[:2]
    assert re.fullmatch(r"vdk_[A-Za-z0-9_-]{40,}", key)
    assert re.fullmatch(r"whsec_[A-Za-z0-9_-]{40,}", secret)  # signs its webhooks (test_webhooks.py)
    with served.client(key) as client:
        assert client.get("/v1/comparisons").status_code == 200
        assert viddiff_main(["serve", "keys", "list", "--data-dir", str(served.data_dir)]) == 0
        assert "cli-made\tactive" in capsys.readouterr().out
        raw = subprocess.run([sys.executable, "-c", READ_STORE_FILES, str(served.data_dir)], capture_output=True,
                             check=True).stdout
        assert key.encode() not in raw  # only its hash is stored
        assert viddiff_main(["serve", "keys", "revoke", "cli-made", "--data-dir", str(served.data_dir)]) == 0
        refused = client.get("/v1/comparisons")
        assert refused.status_code == 401 and "revoked" in refused.json()["detail"]
    assert viddiff_main(["serve", "keys", "create", "cli-made", "--data-dir", str(served.data_dir)]) == 2
    assert "exists already" in capsys.readouterr().err
    with served.client(None) as anonymous:
        missing = anonymous.get("/v1/comparisons")
        assert missing.status_code == 401 and "viddiff serve keys create" in missing.json()["detail"]
        assert anonymous.get("/metrics").status_code == 401
        assert anonymous.get("/healthz").status_code == 200


def test_delete_cancels_a_running_job_its_model_calls_stop_and_its_files_go(served, clips, slow_model):
    videos_before = set((served.data_dir / "videos").iterdir())
    with served.client(served.new_key("canceller")) as client:
        job_id = post_comparison(client, clips, differences=["the square is wider", "the square is taller", "it is later"]).json()["id"]
        wait_until(lambda: client.get(f"/v1/comparisons/{job_id}").json()["status"] == "running", what="running")
        calls_before = len(slow_model.requests)
        wait_until(lambda: len(slow_model.requests) > calls_before, what="a model call of the job")
        assert client.delete(f"/v1/comparisons/{job_id}").status_code == 204
        calls_at_cancel = len(slow_model.requests)
        time.sleep(1.5)  # more than three model calls' time: none more may start
        assert len(slow_model.requests) == calls_at_cancel
        assert client.get(f"/v1/comparisons/{job_id}").status_code == 404
        assert client.get(f"/v1/comparisons/{job_id}/events").status_code == 404
        assert set((served.data_dir / "videos").iterdir()) == videos_before


def test_delete_cancels_a_queued_job_before_any_model_call(served, clips, slow_model):
    with served.client(served.new_key("queue-cancel")) as client:
        running = post_comparison(client, clips, differences=["a statement of the running job"]).json()["id"]
        wait_until(lambda: client.get(f"/v1/comparisons/{running}").json()["status"] == "running", what="running")
        queued = post_comparison(client, clips, differences=["a statement only the queued job has"]).json()["id"]
        assert client.get(f"/v1/comparisons/{queued}").json()["status"] == "queued"
        assert client.delete(f"/v1/comparisons/{queued}").status_code == 204
        assert wait_finished(client, running)["status"] == "done"
        assert not any("only the queued job has" in r.text for r in slow_model.requests)


def test_a_failed_job_says_why_in_the_cli_words_and_keeps_its_partial_verdicts(served, clips):
    with served.client(served.new_key("failing")) as client:
        job_id = post_comparison(client, clips, differences=["the square moves faster", f"{BROKEN} statement"]).json()["id"]
        events = read_events(client, job_id)
        assert [kind for _, kind, _ in events] == ["proposal", "segmentation", "verdict", "failed"]
        job = client.get(f"/v1/comparisons/{job_id}").json()
        assert job["status"] == "failed" and job["result"] is None
        assert "rejected the request" in job["error"] and "maximum context length" in job["error"]
        assert "send smaller or fewer images" in job["error"]  # the CLI's advice, word for word
        assert events[-1][2] == {"type": "failed", "error": job["error"]}
        assert [d["description"] for d in job["partial"]] == ["the square moves faster"]
        assert job["partial"][0]["prediction"] in ("a", "b", "c")


def test_pose_measures_each_difference_on_the_shared_models(served, clips):
    pytest.importorskip("mediapipe", reason="the pose extra is not installed")
    with served.client(served.new_key("pose")) as client:
        created = client.post(
            "/v1/comparisons", data={"action": "squat", "differences": ["the squat is deeper"], "pose": "true"},
            files={"video_a": ("a.mp4", clips["a"].read_bytes()), "video_b": ("b.mp4", clips["b"].read_bytes())},
        )
        job = wait_finished(client, created.json()["id"])
        assert job["status"] == "done", job["error"]
        (difference,) = job["result"]["differences"]
        evidence = difference["evidence"]
        assert evidence is not None and evidence["measurement"]["quantity"] == "knee_angle"
        # squares have no knees: the measurement says why it has no value instead of inventing one
        assert evidence["status"] == "uncertain" and evidence["value_a"] is None and evidence["reason"]
        # the headline every face shows: the VLM's answer beside a measurement that decides nothing
        assert difference["agreement"]["outcome"] == "undecided"
        assert difference["agreement"]["headline"] == f"VLM: {difference['prediction'].upper()} · measured: not measured reliably — undecided"


def test_without_the_serve_extra_the_command_names_the_install(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "fastapi", None)  # `import fastapi` now fails as if it were not installed
    assert viddiff_main(["serve", "--data-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "viddiff serve needs the serve extra (fastapi not installed)" in err
    assert 'pip install "viddiff[serve]"' in err


def test_the_openapi_schema_is_generated_from_the_api_models(served):
    schema = served.client(None).get("/openapi.json").json()
    components = schema["components"]["schemas"]
    assert {"ComparisonResult", "DifferenceResult", "Comparison", "ComparisonCreated", "Video", "Problem"} <= set(components)
    form = schema["paths"]["/v1/comparisons"]["post"]["requestBody"]["content"]["multipart/form-data"]["schema"]
    assert {"video_a", "video_b", "action", "differences", "n_differences", "pose", "report"} <= set(form["properties"])
