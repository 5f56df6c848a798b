"""What an operator of ``viddiff serve`` gets: ``/metrics`` behind its own credential (parsed with
prometheus_client's parser), request ids, a list of comparisons that pages, and a correct ``Allow``."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families
from serve_helpers import BROKEN, METRICS_TOKEN, wait_finished

ACTION = "a square crossing the frame"


def post(client, clips, differences):
    files = {side: (clips[side].name, clips[side].read_bytes(), "video/mp4") for side in ("a", "b")}
    answer = client.post(
        "/v1/comparisons", data={"action": ACTION, "differences": differences},
        files={f"video_{side}": f for side, f in files.items()},
    )
    assert answer.status_code == 202, answer.text
    return answer.json()["id"]


@pytest.fixture(scope="module")
def finished(served, clips):
    """A key with three finished comparisons, oldest first: done, failed, done."""
    key = served.new_key("operations-app")
    ids = []
    with served.client(key) as client:
        for differences in (["the square moves faster"], ["the square is wider", f"{BROKEN} statement"],
                            ["the square is brighter", "the square is taller"]):
            ids.append(post(client, clips, differences))
            wait_finished(client, ids[-1])
    return key, ids


def families(text: str) -> dict:
    return {family.name: family for family in text_string_to_metric_families(text)}


def sample_value(family, name: str, **labels) -> float:
    matching = [s.value for s in family.samples if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())]
    assert len(matching) == 1, (name, labels, family.samples)
    return matching[0]


def test_metrics_need_a_metrics_credential(served, finished):
    app_key, _ = finished
    with served.client(app_key) as client:
        refused = client.get("/metrics")
    assert refused.status_code == 403
    assert "--scope metrics" in refused.json()["detail"]
    with served.client(None) as anonymous:
        assert anonymous.get("/metrics").status_code == 401
    operator_key = served.new_key("operations-scraper", ("metrics",))
    with served.client(operator_key) as operator:
        assert operator.get("/metrics").status_code == 200
        assert operator.get("/v1/comparisons").status_code == 403  # a metrics key is no app key
    with served.client(METRICS_TOKEN) as token:
        assert token.get("/metrics").status_code == 200
    with served.client(METRICS_TOKEN + "x") as wrong:
        assert wrong.get("/metrics").status_code == 401


def test_metrics_count_per_key_and_time_jobs_in_histograms(served, finished):
    with served.client(METRICS_TOKEN) as operator:
        answer = operator.get("/metrics")
    assert answer.headers["content-type"].startswith("text/plain")
    got = families(answer.text)
    jobs = got["viddiff_jobs"]
    assert jobs.type == "gauge"
    assert sample_value(jobs, "viddiff_jobs", key="operations-app", state="done") == 2
    assert sample_value(jobs, "viddiff_jobs", key="operations-app", state="failed") == 1
    job_seconds = got["viddiff_job_seconds"]
    assert job_seconds.type == "histogram"
    done_count = sample_value(job_seconds, "viddiff_job_seconds_count", state="done")
    assert done_count >= 2
    assert sample_value(job_seconds, "viddiff_job_seconds_bucket", state="done", le="+Inf") == done_count
    assert sample_value(job_seconds, "viddiff_job_seconds_count", state="failed") >= 1
    first = got["viddiff_first_verdict_seconds"]
    assert first.type == "histogram"
    assert sample_value(first, "viddiff_first_verdict_seconds_count") >= 3  # the failed job had a verdict too
    requests = got["viddiff_http_requests"]
    assert requests.type == "counter"
    assert sample_value(requests, "viddiff_http_requests_total", route="/v1/comparisons", method="POST", status="202") >= 3
    assert sample_value(requests, "viddiff_http_requests_total", route="/metrics", method="GET", status="403") >= 1
    assert sample_value(got["viddiff_model_call_errors"], "viddiff_model_call_errors_total") >= 1
    assert sample_value(got["viddiff_queue_length"], "viddiff_queue_length") == 0


def test_the_list_pages_with_summaries_and_a_next_link(served, finished):
    key, (first, failed, last) = finished
    with served.client(key) as client:
        page = client.get("/v1/comparisons", params={"limit": 2}).json()
        assert [c["id"] for c in page["comparisons"]] == [last, failed]
        assert page["next"] == f"/v1/comparisons?limit=2&after={failed}"
        newest = page["comparisons"][0]
        assert "result" not in newest
        assert newest["status"] == "done" and newest["action"] == ACTION and newest["finished_at"] >= newest["created_at"]
        counts = newest["counts"]
        assert counts["differences"] == counts["decided"] == 2
        assert counts["a"] + counts["b"] + counts["c"] + counts["unanswered"] == 2
        assert newest["links"]["self"] == f"/v1/comparisons/{last}"
        rest = client.get(page["next"]).json()
        assert [c["id"] for c in rest["comparisons"]] == [first] and rest["next"] is None
        done = client.get("/v1/comparisons", params={"status": "done"}).json()
        assert [c["id"] for c in done["comparisons"]] == [last, first]
        assert client.get("/v1/comparisons", params={"status": "failed"}).json()["comparisons"][0]["counts"]["decided"] == 1
        for params, status, said in (({"limit": 0}, 422, "limit"), ({"limit": 201}, 422, "limit"),
                                     ({"status": "lost"}, 422, "status"), ({"after": "cmp_gone"}, 404, "after")):
            refused = client.get("/v1/comparisons", params=params)
            assert refused.status_code == status
            assert refused.json()["detail"].startswith(said), refused.json()


def test_a_request_id_is_returned_and_a_clients_own_is_kept(served):
    with served.client(None) as client:
        made = client.get("/healthz").headers["x-request-id"]
        assert len(made) >= 16
        assert client.get("/healthz").headers["x-request-id"] != made
        assert client.get("/healthz", headers={"X-Request-ID": "app-7f3a"}).headers["x-request-id"] == "app-7f3a"
        for odd in ("two words", "x" * 300, '"quoted"'):  # could split or flood a log line: replaced
            replaced = client.get("/healthz", headers={"X-Request-ID": odd}).headers["x-request-id"]
            assert replaced != odd and len(replaced) >= 16


def test_allow_names_every_method_of_a_path(served):
    with served.client(None) as client:
        answer = client.request("OPTIONS", "/v1/comparisons/cmp_any")
        assert answer.status_code == 405
        assert answer.headers["allow"] == "DELETE, GET, HEAD"
        assert client.request("PUT", "/v1/comparisons").headers["allow"] == "GET, HEAD, POST"


def test_a_metrics_token_variable_that_is_not_set_stops_the_start(tmp_path, monkeypatch, capsys):
    from viddiff.cli import main

    monkeypatch.delenv("VIDDIFF_TEST_UNSET_TOKEN", raising=False)
    code = main(["serve", "--data-dir", str(tmp_path), "--set", "serve.metrics_token_env=VIDDIFF_TEST_UNSET_TOKEN"])
    assert code == 2
    assert "serve.metrics_token_env names VIDDIFF_TEST_UNSET_TOKEN, which is not set" in capsys.readouterr().err
    assert not (tmp_path / "serve.sqlite").exists()
