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
            # the playhead follows the video's next 'timeupdate' event, which may come just after the seek lands
            page.wait_for_function(
                "() => document.getElementById('playhead-b').getAttribute('visibility') === 'visible'", timeout=5000
            )
            assert page.get_attribute("#playhead-b", "visibility") == "visible"

        keyframe = page.locator("img.keyframe").first
        box = keyframe.bounding_box()
        assert max(box["width"], box["height"]) >= 360
        keyframe.click()
        assert page.locator("dialog#lightbox[open]").count() == 1
        page.locator("dialog#lightbox").click()
        assert page.locator("dialog#lightbox[open]").count() == 0
        assert problems == []


@pytest.mark.slow
@pytest.mark.parametrize("width", [1400, 1920, 900])
def test_a_wide_index_table_never_runs_under_the_models_panel(cli, tmp_path, offline_sets, width):
    """VidPair-Halluc's index has a wide metrics table: at 1400 and 1920 px it ran under the Models panel beside
    it. Now the panel moves below a table that does not fit beside it, and nothing overflows the page."""
    from viddiff.benchmarks.vidpair.synthetic import write_synthetic_vidpair

    data = write_synthetic_vidpair(tmp_path / "vidpair", pairs=2, seed=3)
    out = tmp_path / "run"
    rc, _, err = cli(["-q", "run", "--benchmark", "vidpair-halluc", "--dataset", str(data), "--output", str(out),
                      "--report", *offline_sets])
    assert rc == 0, err
    with browser_page() as page:
        page.set_viewport_size({"width": width, "height": 1000})
        page.goto((out / "report" / "index.html").resolve().as_uri())
        tables = [t.bounding_box() for t in page.locator("section.facts table.metrics").all()]
        models = page.locator("section.facts h2", has_text="Models").bounding_box()
        card = page.locator("section.facts").bounding_box()
        page.screenshot(path=str(tmp_path / f"index-{width}.png"), full_page=True)
        assert tables and models and card
        for box in tables:
            below = models["y"] >= box["y"] + box["height"]
            assert below or box["x"] + box["width"] <= models["x"], (width, box, models)  # never under the panel
        holder = page.locator("section.facts > div").first.bounding_box()  # a table wider than that scrolls in it
        assert holder and holder["x"] + holder["width"] <= card["x"] + card["width"], (width, holder, card)
        assert page.evaluate("document.documentElement.scrollWidth") <= width  # nothing runs off the page
