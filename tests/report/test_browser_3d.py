"""The report's 3D skeleton view in a real headless Chromium, served as ``viddiff serve`` serves a report (its
sandboxing ``Content-Security-Policy``): both poses drawn, turned by dragging, no error, no policy violation."""

from __future__ import annotations

import contextlib
import http.server
import io
import threading
from pathlib import Path
from typing import Iterator

import pytest
from pose3d_helpers import page_with_3d_evidence

from viddiff.report.render import render_page
from viddiff.serve.security import REPORT_CSP
from viddiff.testing.browser import browser_page


@contextlib.contextmanager
def served_report(page_html: str) -> Iterator[str]:
    """The page at a loopback URL, answered with the report's policy header (as the service answers it)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the standard library's name
            body = page_html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Security-Policy", REPORT_CSP)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/report.html"
    finally:
        server.shutdown()
        server.server_close()


def lines(page, side: str) -> list[tuple[float, ...]]:
    return page.eval_on_selector_all(
        f"svg.skeleton3d .pose-{side} line:not([visibility=hidden])",
        "ls => ls.map(l => ['x1', 'y1', 'x2', 'y2'].map(k => parseFloat(l.getAttribute(k))))",
    )


@pytest.mark.slow
def test_both_poses_are_drawn_and_turn_when_dragged_under_the_reports_policy(tmp_path: Path):
    from PIL import Image

    page_html = render_page(page_with_3d_evidence(tmp_path)[0])
    with served_report(page_html) as url, browser_page() as page:
        problems: list[str] = []
        page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url[:80]}"))
        page.add_init_script("window.violations = []; document.addEventListener('securitypolicyviolation', "
                             "(e) => window.violations.push(e.violatedDirective + ' ' + e.blockedURI));")
        response = page.goto(url)
        assert response.headers["content-security-policy"] == REPORT_CSP
        svg = page.locator("svg.skeleton3d")
        svg.scroll_into_view_if_needed()
        before = {side: lines(page, side) for side in "ab"}
        assert len(before["a"]) == len(before["b"]) == 18  # every bone of both poses
        assert all(any(abs(v) > 0.05 for v in line) for side in "ab" for line in before[side])
        assert page.locator("svg.skeleton3d circle").count() == 34
        drawn = Image.open(io.BytesIO(svg.screenshot())).convert("RGB")
        drawn.save(tmp_path / "skeleton3d.png")
        page.screenshot(path=str(tmp_path / "report-3d.png"), full_page=True)
        colours = {c for _, c in drawn.getcolors(maxcolors=1 << 16)}
        assert any(b > r + 80 for r, g, b in colours) and any(r > b + 80 for r, g, b in colours)  # A blue, B orange

        box = svg.bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.down()
        page.mouse.move(box["x"] + box["width"] / 2 + 80, box["y"] + box["height"] / 2 + 20, steps=5)
        page.mouse.up()
        assert float(svg.get_attribute("data-yaw")) == pytest.approx(-0.6 + 0.8, abs=0.02)
        after = {side: lines(page, side) for side in "ab"}
        assert after["a"] != before["a"] and after["b"] != before["b"]  # both turned, together
        svg.focus()
        page.keyboard.press("ArrowLeft")
        assert float(svg.get_attribute("data-yaw")) == pytest.approx(-0.6 + 0.8 - 0.2, abs=0.02)
        assert page.evaluate("window.violations") == []
        assert problems == []
