"""The report in a real headless Chromium (Playwright driving the system browser): seek buttons, no errors."""

from __future__ import annotations

import pytest

from viddiff.testing.browser import browser_page


@pytest.mark.slow
def test_seek_buttons_move_both_videos_and_the_page_has_no_errors(cli, webm_pair, hostile_sets, tmp_path):
    report = tmp_path / "report.html"
    rc, _, err = cli(["compare", str(webm_pair[0]), str(webm_pair[1]), "--action", "squat", "--n-differences", "4",
                      "--report", str(report), *hostile_sets])
    assert rc == 0, err
    with browser_page() as page:
        problems: list[str] = []
        page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url[:80]}"))
        page.goto(report.resolve().as_uri())
        page.wait_for_function("['a','b'].every(s => document.getElementById('video-' + s).readyState >= 1)", timeout=15000)

        buttons = page.locator("button.seek")
        assert buttons.count() >= 2
        seen = []
        for i in (buttons.count() - 1, 1):  # two different keyframe rows, so the second seek really moves
            button = buttons.nth(i)
            targets = {side: float(button.get_attribute(f"data-seek-{side}")) for side in "ab"}
            before = page.evaluate("['a','b'].map(s => document.getElementById('video-' + s).currentTime)")
            assert before != pytest.approx([targets["a"], targets["b"]], abs=0.05)  # a seek is needed to get there
            seen.append(targets)
            button.click()
            page.wait_for_function(
                "([a, b]) => Math.abs(document.getElementById('video-a').currentTime - a) < 0.05"
                " && Math.abs(document.getElementById('video-b').currentTime - b) < 0.05",
                arg=[targets["a"], targets["b"]],
                timeout=10000,
            )
            times = page.evaluate("['a','b'].map(s => document.getElementById('video-' + s).currentTime)")
            assert times == pytest.approx([targets["a"], targets["b"]], abs=0.05)
            assert page.get_attribute("#playhead-b", "visibility") == "visible"

        keyframe = page.locator("img.keyframe").first
        box = keyframe.bounding_box()
        assert max(box["width"], box["height"]) >= 360
        keyframe.click()
        assert page.locator("dialog#lightbox[open]").count() == 1
        page.locator("dialog#lightbox").click()
        assert page.locator("dialog#lightbox[open]").count() == 0
        assert problems == []
