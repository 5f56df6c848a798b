"""Security headers on every response, the report sandboxed at its own URL, and the page in a real Chromium
with no policy violation (docs/serve.md#security-headers)."""

from __future__ import annotations

import socket
import time

import pytest
from serve_helpers import wait_finished

from viddiff.serve.report_links import ReportLinks
from viddiff.serve.security import API_CSP, DOCS_CSP, PAGE_CSP, REPORT_CSP
from viddiff.testing.browser import browser_page

STATEMENTS = ["the square moves faster", "the square is larger"]


def _headers_ok(response, policy: str) -> None:
    assert response.headers.get_list("x-content-type-options") == ["nosniff"], response.url
    assert response.headers.get_list("referrer-policy") == ["no-referrer"], response.url
    assert response.headers.get_list("content-security-policy") == [policy], response.url
    assert "frame-ancestors 'none'" in policy


@pytest.fixture(scope="module")
def reported(served, clips) -> tuple[str, str]:
    """A key and a comparison of it that is done, with its report."""
    key = served.new_key("headers")
    with served.client(key) as client:
        files = {"video_a": clips["a"].open("rb"), "video_b": clips["b"].open("rb")}
        created = client.post("/v1/comparisons", files=files,
                              data={"action": "a square", "differences": STATEMENTS, "report": "true"})
        assert created.status_code == 202, created.text
        assert wait_finished(client, created.json()["id"])["status"] == "done"
    return key, created.json()["id"]


def test_every_response_carries_nosniff_and_a_policy_that_forbids_framing(served, reported):
    key, job_id = reported
    with served.client(key) as client, served.client(None) as anonymous:
        _headers_ok(anonymous.get("/"), PAGE_CSP)
        for path in ("/healthz", "/readyz", "/openapi.json", "/web/app.js", "/web/style.css", "/nothing-here"):
            _headers_ok(anonymous.get(path), API_CSP)
        _headers_ok(anonymous.get("/v1/comparisons"), API_CSP)  # 401
        _headers_ok(client.get("/v1/comparisons"), API_CSP)
        _headers_ok(client.get("/metrics"), API_CSP)
        _headers_ok(anonymous.get("/docs"), DOCS_CSP)
        report = client.get(f"/v1/comparisons/{job_id}/report")
        assert report.status_code == 200
        _headers_ok(report, REPORT_CSP)
        assert REPORT_CSP.startswith("sandbox ") and "allow-same-origin" not in REPORT_CSP
    # the edge's own answers too
    with socket.create_connection(("127.0.0.1", served.server.port), timeout=10) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * (64 * 1024) + b"\r\n\r\n")
        answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 431 ") and b"x-content-type-options: nosniff" in answer


def test_a_report_link_opens_its_report_without_a_key_and_only_that_report(served, reported):
    key, job_id = reported
    with served.client(key) as client, served.client(None) as anonymous:
        made = client.post(f"/v1/comparisons/{job_id}/report-link")
        assert made.status_code == 200, made.text
        url = made.json()["url"]
        assert url.startswith(f"/v1/comparisons/{job_id}/report?link=") and made.json()["expires_at"] > time.time()
        report = anonymous.get(url)
        assert report.status_code == 200 and "the square moves faster" in report.text
        _headers_ok(report, REPORT_CSP)
        token = url.split("link=")[1]
        assert anonymous.get(f"/v1/comparisons/cmp_other/report?link={token}").status_code == 401
        assert anonymous.get(f"/v1/comparisons/{job_id}/report?link={token[:-2]}xx").status_code == 401
        stranger = served.new_key("link-stranger")
        with served.client(stranger) as theirs:
            assert theirs.post(f"/v1/comparisons/{job_id}/report-link").status_code == 404


def test_an_expired_report_link_is_refused():
    links = ReportLinks(ttl_s=60)
    token, _ = links.sign("cmp_1", "someone", now=time.time() - 120)
    with pytest.raises(Exception, match="expired"):
        links.owner("cmp_1", token)
    fresh, _ = links.sign("cmp_1", "someone")
    assert links.owner("cmp_1", fresh) == "someone"
    with pytest.raises(Exception, match="not valid"):
        ReportLinks().owner("cmp_1", fresh)  # another server process's secret


@pytest.mark.slow
def test_the_page_works_under_its_policy_and_its_report_cannot_read_the_stored_key(served, clips):
    key = served.new_key("browser-csp")
    with browser_page() as page:
        problems: list[str] = []
        page.context.on("console",  # the report's tab too
                        lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.goto(served.url + "/")
        page.fill("#api-key", key)
        page.set_input_files("#video-a", str(clips["a"]))
        page.set_input_files("#video-b", str(clips["b"]))
        page.fill("#action", "a square crossing the frame")
        page.fill("#statements", "\n".join(STATEMENTS))
        page.click("#submit")
        page.wait_for_selector("#report-link:not([hidden])", timeout=60000)
        assert page.evaluate("localStorage.getItem('viddiff-key')") == key
        href = page.get_attribute("#report-link", "href")
        assert href.startswith("/v1/comparisons/") and "blob:" not in href
        with page.expect_popup() as popup:
            page.click("#report-link")
        report = popup.value
        report.wait_for_load_state()
        assert "the square moves faster" in report.content()
        stolen = report.evaluate("() => { try { return localStorage.getItem('viddiff-key'); } "
                                 "catch (e) { return 'refused: ' + e.name; } }")
        assert stolen == "refused: SecurityError"
        assert report.evaluate("() => document.querySelectorAll('video').length") == 2
        time.sleep(0.5)  # a late console message would land here
        assert problems == []
