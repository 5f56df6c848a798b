"""The web page at ``/`` in a real headless Chromium (Playwright driving the system browser): each verdict with
its rationale, keyframe times and measurement in the order the statements were typed, the results' notes, the
report naming the user's files, the key's recent comparisons, a reload finding a running comparison, cancel,
and errors shown without stale progress. Every step is screenshot and the screenshot checked."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest
from serve_helpers import BROKEN, HELD, calibration_toml, wait_finished, wait_until

from viddiff.serve.jobs import JobStore
from viddiff.testing.browser import browser_page

# typed out of the order the scripted model decides them in, each with another kind of measurement:
# a stage duration (measured, no pose needed), no measurement for brightness, a knee angle squares lack
STATEMENTS = ["the square is brighter", "the squat is deeper", "the square moves faster"]
VERDICT_WORDS = {"a": "A", "b": "B", "c": "similar", None: "no valid answer"}
ROWS = "#verdicts tbody tr"


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where the screenshots go: ``VIDDIFF_SCREENSHOT_DIR`` (to look at them) or the test's own folder."""
    folder = Path(os.environ.get("VIDDIFF_SCREENSHOT_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def named_clips(clips, tmp_path: Path) -> dict[str, Path]:
    """The test clips under the names a user gave them."""
    return {"a": shutil.copy(clips["a"], tmp_path / "monday.mp4"), "b": shutil.copy(clips["b"], tmp_path / "tuesday.mp4")}


class Watched:
    """A page whose console errors and warnings, page errors and failed requests are collected."""

    def __init__(self, page, shots: Path):
        self.page = page
        self.shots = shots
        self.problems: list[str] = []
        page.on("console", lambda m: self.problems.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))

    def screenshot(self, name: str, *must_show: str):
        """Screenshot the page as ``name``.png; check it is the page, and that each of ``must_show`` (selectors)
        is visible on it and drawn (its pixels are not one flat colour)."""
        from PIL import Image

        png = self.page.screenshot(full_page=True)
        (self.shots / f"{name}.png").write_bytes(png)
        image = Image.open(io.BytesIO(png)).convert("RGB")
        assert image.width == 1280 and image.height >= 600, image.size
        for selector in must_show:
            element = self.page.locator(selector)
            assert element.is_visible(), f"{selector} is not visible in {name}"
            part = Image.open(io.BytesIO(element.screenshot())).convert("RGB")
            colours = part.getcolors(maxcolors=1 << 16)
            assert colours is None or len(colours) > 8, f"{selector} is drawn blank in {name}"
        return image

    def open(self, url: str, key: str) -> None:
        self.page.goto(url)
        self.page.fill("#api-key", key)
        self.page.dispatch_event("#api-key", "change")


def fill(page, clips: dict[str, Path], statements: list[str], *, pose: bool = False) -> None:
    page.set_input_files("#video-a", str(clips["a"]))
    page.set_input_files("#video-b", str(clips["b"]))
    page.fill("#action", "a square crossing the frame")
    page.fill("#statements", "\n".join(statements))
    if pose:
        page.check("#pose")


def wait_rows(page, statements: list[str], *, decided: bool = True, timeout_ms: int = 60000) -> None:
    """Wait for exactly these rows (any order while they come), each with a verdict when ``decided``."""
    page.wait_for_function(
        """([selector, statements, decided]) => {
            const rows = [...document.querySelectorAll(selector)];
            const texts = rows.map((r) => r.querySelector('.statement .text').textContent).sort();
            return JSON.stringify(texts) === JSON.stringify([...statements].sort())
                && (!decided || rows.every((r) => !r.classList.contains('pending')));
        }""",
        arg=[ROWS, statements, decided], timeout=timeout_ms,
    )


def row_texts(page) -> list[dict[str, str]]:
    return page.eval_on_selector_all(ROWS, """rows => rows.map((r) => ({
        statement: r.querySelector('.statement .text').textContent,
        rationale: r.querySelector('.rationale') ? r.querySelector('.rationale').textContent : '',
        prediction: r.querySelector('.prediction').textContent,
        keyframes: r.querySelector('.keyframes').textContent,
        measured: r.querySelector('.measured').textContent,
    }))""")


def number(value: float) -> str:
    size = abs(value)
    return f"{value:.{0 if size >= 100 else 1 if size >= 10 else 2}f}"


def shown_measurement(difference: dict) -> str:
    """What the page must show for a difference's measurement."""
    evidence = difference["evidence"]
    if evidence is None:
        return f"not compared: {difference['evidence_absent']}" if difference["evidence_absent"] else ""
    if evidence["status"] != "measured":
        return f"not compared: {evidence['reason']}"
    unit = f" {evidence['unit']}" if evidence["unit"] else ""

    def side(s: str) -> str:
        return f"{number(evidence['value_' + s])} ± {number(evidence['interval_' + s]['half_width'])}{unit}"

    return f"{evidence['label']}: A {side('a')}, B {side('b')}"


@pytest.mark.slow
def test_each_verdict_shows_its_evidence_in_typed_order_and_the_report_names_the_users_files(served, named_clips, shots):
    key = served.new_key("page-evidence")
    with browser_page() as page:
        watched = Watched(page, shots)
        watched.open(served.url + "/", key)
        fill(page, named_clips, STATEMENTS, pose=True)
        watched.screenshot("1-filled", "#compare-form")
        page.click("#submit")
        wait_rows(page, STATEMENTS)
        page.wait_for_selector("#report-link:not([hidden])", timeout=60000)
        job_id = page.evaluate("location.hash.slice(1)")
        with served.client(key) as client:
            job = wait_finished(client, job_id)
        assert job["status"] == "done", job["error"]
        differences = job["result"]["differences"]
        assert [d["description"] for d in differences] == STATEMENTS

        rows = row_texts(page)
        assert [r["statement"] for r in rows] == STATEMENTS  # the typed order, whatever order they were decided in
        for row, difference in zip(rows, differences):
            agreement = difference.get("agreement")  # with evidence, the headline every face shows
            assert row["prediction"] == (agreement["headline"] if agreement else VERDICT_WORDS[difference["prediction"]])
            assert row["rationale"] == difference["rationale"] and row["rationale"]
            assert row["keyframes"] == " · ".join(
                f"{side.upper()} " + ", ".join(f"{t:.2f}" for t in difference[f"times_{side}"]) + " s"
                for side in "ab" if difference[f"times_{side}"]
            ) and row["keyframes"]
            assert row["measured"] == shown_measurement(difference)
        by_statement = {r["statement"]: r["measured"] for r in rows}
        assert " ± " in by_statement["the square moves faster"]  # value ± interval
        assert by_statement["the squat is deeper"].startswith("not compared: ")
        notes = job["result"]["notes"]
        assert page.eval_on_selector_all("#notes li", "items => items.map((i) => i.textContent)") == notes
        assert page.locator("#notes").is_visible() == bool(notes)
        assert page.inner_text("#status").startswith("done")
        assert page.locator("#upload-row").is_hidden() and page.locator("#cancel").is_hidden()
        assert page.locator("#error").is_hidden()
        watched.screenshot("2-done", "#verdicts", "#recent-section", *(["#notes"] if notes else []))

        with page.expect_popup() as popup:
            page.click("#report-link")
        report = popup.value
        report.wait_for_load_state()
        html = report.content()
        assert "monday.mp4" in html and "tuesday.mp4" in html  # the user's names, not the stored files'
        assert "vid_" not in html

        page.goto(served.url + "/")  # no hash: the comparison is found again in the key's list
        page.locator(f"#recent button[data-id='{job_id}']").click()
        wait_rows(page, STATEMENTS)
        assert row_texts(page) == rows
        watched.screenshot("3-reopened", "#verdicts")
        assert watched.problems == []


@pytest.mark.slow
def test_a_reload_finds_the_running_comparison_and_cancel_stops_it(served, named_clips, shots):
    key = served.new_key("page-reload")
    statements = ["the square moves faster", f"the square is {HELD}", "the square is wider"]
    try:
        with browser_page() as page:
            watched = Watched(page, shots)
            watched.open(served.url + "/", key)
            fill(page, named_clips, statements)
            page.click("#submit")
            wait_rows(page, statements, decided=False)
            job_id = page.evaluate("location.hash.slice(1)")
            page.reload()
            wait_until(lambda: len([r for r in row_texts(page) if r["prediction"] in VERDICT_WORDS.values()]) == 2,
                       30, "the two verdicts decided before the held one")
            assert page.evaluate("location.hash.slice(1)") == job_id
            assert [r["statement"] for r in row_texts(page)] == statements
            page.wait_for_selector(f"#recent button[data-id='{job_id}'].status-running")
            assert page.locator("#cancel").is_visible()
            watched.screenshot("4-reloaded-running", "#verdicts", "#cancel", "#recent-section")
            page.click("#cancel")
            wait_until(lambda: page.inner_text("#status") == "cancelled", 30, "the page to say cancelled")
            assert page.locator("#cancel").is_hidden()
            assert [r["prediction"] == "not decided" for r in row_texts(page)] == [False, True, False]
            watched.screenshot("5-cancelled", "#verdicts")
            assert watched.problems == []
        with served.client(key) as client:
            assert client.get(f"/v1/comparisons/{job_id}").status_code == 404  # cancelled, and deleted
    finally:
        wait_until(lambda: served.client(None).get("/healthz").json()["running"] == 0, what="an idle server")


@pytest.mark.slow
def test_after_an_error_only_the_red_message_stays(served, named_clips, tmp_path, shots):
    key = served.new_key("page-errors")
    text = tmp_path / "notes.mp4"
    text.write_text("a text file with a video's name\n" * 50)
    with browser_page() as page:
        watched = Watched(page, shots)
        watched.open(served.url + "/", key)
        fill(page, {"a": text, "b": named_clips["b"]}, ["the square moves faster"])
        page.click("#submit")
        page.wait_for_selector("#error:not([hidden])", timeout=30000)
        assert "video_a" in page.inner_text("#error")
        assert page.locator("#upload-row").is_hidden()  # no stale "Upload 100%"
        assert page.locator("#verdicts").is_hidden()  # no empty table
        image = watched.screenshot("6-upload-refused", "#error")
        box = page.locator("#error").bounding_box()
        red = [image.getpixel((x, y)) for x in range(int(box["x"]), int(box["x"] + box["width"]), 2)
               for y in range(int(box["y"]), int(box["y"] + box["height"]), 2)]
        assert sum(1 for r, g, b in red if r > 140 and g < 90 and b < 90) > 20  # the message is drawn red
        # the refused upload is the one expected console line (Chromium logs every 4xx answer)
        assert len(watched.problems) == 1 and "status of 415" in watched.problems[0], watched.problems
        watched.problems.clear()

        fill(page, named_clips, ["the square moves faster", f"{BROKEN} statement"])
        page.click("#submit")
        page.wait_for_selector("#error:not([hidden])", timeout=60000)
        assert "maximum context length" in page.inner_text("#error")
        rows = row_texts(page)
        assert [r["statement"] for r in rows] == ["the square moves faster", f"{BROKEN} statement"]
        assert rows[0]["prediction"] in ("A", "B", "similar") and rows[1]["prediction"] == "not decided"
        assert page.locator("#upload-row").is_hidden()
        assert page.inner_text("#status") == "failed"
        watched.screenshot("7-failed", "#error", "#verdicts")
        assert watched.problems == []


@pytest.mark.slow
def test_two_views_per_side_are_uploaded_with_their_calibrations(served, named_clips, clips, tmp_path, shots):
    key = served.new_key("page-two-views")
    calibration = calibration_toml(tmp_path / "setup.toml")
    statements = ["the squat is deeper"]
    with browser_page() as page:
        watched = Watched(page, shots)
        watched.open(served.url + "/", key)
        fill(page, named_clips, statements)
        page.click("#two-views summary")
        page.set_input_files("#views-a", str(clips["webm"]))
        page.set_input_files("#views-b", str(clips["avi"]))
        assert page.is_checked("#pose")  # other views serve the body-pose measurement only
        page.click("#submit")  # no calibration yet: said at once, nothing uploaded
        page.wait_for_selector("#error:not([hidden])")
        assert page.inner_text("#error") == "pick the calibration of A's cameras, or no other views of A"
        page.set_input_files("#calibration-a", str(calibration))
        page.set_input_files("#calibration-b", str(calibration))
        watched.screenshot("8-two-views-filled", "#two-views")
        page.click("#submit")
        wait_rows(page, statements)
        page.wait_for_selector("#report-link:not([hidden])", timeout=60000)
        job_id = page.evaluate("location.hash.slice(1)")
        watched.screenshot("9-two-views-done", "#verdicts")
        assert watched.problems == []
    with served.client(key) as client:
        job = wait_finished(client, job_id)
        assert job["status"] == "done", job["error"]
        store = JobStore(served.data_dir / "serve.sqlite")
        try:
            spec = store.job(job_id).spec
        finally:
            store.close()
        for side, clip in (("a", "webm.webm"), ("b", "avi.avi")):
            (view,) = spec[f"views_{side}"]
            assert client.get(f"/v1/videos/{Path(view).stem}").json()["filename"] == clip
            setup = client.get(f"/v1/calibrations/{Path(spec[f'calibration_{side}']).name.split('.')[0]}").json()
            assert (setup["filename"], setup["cameras"]) == ("setup.toml", 2)


def test_the_report_names_the_uploaded_files_not_the_stored_ones(served, named_clips):
    """The same over the API alone (the browser tests skip without Chromium)."""
    with served.client(served.new_key("report-names")) as client:
        created = client.post(
            "/v1/comparisons", data={"action": "a square crossing the frame", "differences": STATEMENTS[:1], "report": "true"},
            files={f"video_{side}": (path.name, path.read_bytes(), "video/mp4") for side, path in named_clips.items()},
        )
        job = wait_finished(client, created.json()["id"])
        assert job["status"] == "done", job["error"]
        html = client.get(f"/v1/comparisons/{job['id']}/report").text
    assert ">monday.mp4<" in html and ">tuesday.mp4<" in html
    assert "vid_" not in html and str(served.data_dir) not in html  # neither stored names nor server paths
