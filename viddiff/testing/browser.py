"""A page in the system's headless Chromium, driven by Playwright (its own browser download is not used).

The report test and the web page test of ``viddiff serve`` share it. A missing Playwright or Chromium skips
the calling test with the reason.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from typing import Iterator

CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_executable() -> str | None:
    """A system Chromium/Chrome (``VIDDIFF_CHROMIUM`` wins)."""
    configured = os.environ.get("VIDDIFF_CHROMIUM")
    if configured:
        return configured
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


@contextlib.contextmanager
def browser_page() -> Iterator:
    """A page in headless Chromium. Open it after any ``viddiff`` call: Playwright's sync API runs an event loop."""
    import pytest

    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')")
    executable = chromium_executable()
    if executable is None:
        pytest.skip("no Chromium found: install it (Debian: apt-get install -y chromium) or set VIDDIFF_CHROMIUM")
    with tempfile.TemporaryDirectory() as profile, sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=executable, args=CHROMIUM_FLAGS, headless=True, viewport={"width": 1280, "height": 900}
        )
        try:
            yield context.new_page()
        finally:
            context.close()
