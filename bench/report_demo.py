"""Demo of the HTML report: a synthetic run with ``--report``, and a screenshot of one sample page.

Offline: synthetic videos, the scripted stand-in model on 127.0.0.1, random-weight CLIP (so the
page carries the stand-in banner, as it must). The screenshot is taken in a headless system
Chromium through Playwright after pressing a difference's seek button, so the players show the
keyframes; it is what the README shows (``docs/report-demo.png``).

Usage: python bench/report_demo.py [--out docs/report-demo.png] [--keep DIR] [--height 2600]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import tempfile
from pathlib import Path

from viddiff.cli import main
from viddiff.data.synthetic import write_synthetic_benchmark
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel

SAMPLE_PAGE = "0001-pair_0001.html"
"""The basketball pair: a trimmed video A, two lengths, three differences."""
CHROMIUM_FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def write_demo_run(work: Path) -> Path:
    """Synthetic benchmark → ``viddiff run --report``; returns the report directory."""
    write_synthetic_benchmark(work / "synth", pairs=3, seed=5)
    os.environ.setdefault("OPENAI_API_KEY", "dummy")
    with FakeOpenAIServer(ScriptedModel()) as server:
        argv = ["-q", "run", "--dataset", str(work / "synth"), "--mode", "closed", "--output", str(work / "run"), "--report"]
        for item in offline_overrides(server.base_url, str(work / "cache.sqlite")):
            argv += ["--set", item]
        with contextlib.redirect_stdout(io.StringIO()):
            if main(argv) != 0:
                raise SystemExit("the demo run failed")
    return work / "run" / "report"


def screenshot(page_path: Path, out: Path, height: int) -> None:
    from playwright.sync_api import sync_playwright

    executable = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
    if executable is None:
        raise SystemExit("no Chromium found (Debian: apt-get install -y chromium)")
    with tempfile.TemporaryDirectory() as profile, sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=executable, args=CHROMIUM_FLAGS, headless=True,
            viewport={"width": 1280, "height": 900}, device_scale_factor=1,
        )
        page = context.new_page()
        page.goto(page_path.resolve().as_uri())
        page.wait_for_function("['a','b'].every(s => document.getElementById('video-' + s).readyState >= 2)")
        page.locator("button.seek").nth(1).click()
        page.wait_for_function("document.getElementById('video-a').seeking === false && document.getElementById('video-b').seeking === false")
        page.wait_for_timeout(300)
        page.evaluate("window.scrollTo(0, 0)")
        first = page.locator("article.difference").first.bounding_box()
        bottom = min(height, int(first["y"] + first["height"] + 10))
        out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out), full_page=True, clip={"x": 0, "y": 0, "width": 1280, "height": bottom})
        context.close()


def main_demo() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("docs/report-demo.png"))
    parser.add_argument("--keep", type=Path, help="write the run (and its report) here instead of a temp dir")
    parser.add_argument("--height", type=int, default=2600, help="most pixels to show (the shot ends after the first difference)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        report = write_demo_run(work)
        screenshot(report / SAMPLE_PAGE, args.out, args.height)
    print(f"report pages in {report if args.keep else '(a temp dir; use --keep DIR)'}; screenshot {args.out}")


if __name__ == "__main__":
    main_demo()
