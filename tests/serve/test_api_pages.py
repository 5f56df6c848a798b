"""``/docs`` and ``/redoc`` in Chromium with every request off this server refused: both pages render every
operation of the schema from the files the server ships."""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx

from viddiff.testing.browser import browser_page

REDOC_BADGE = "https://cdn.redoc.ly/redoc/logo-mini.svg"


def schema_operations(url: str) -> list[tuple[str, str, str]]:
    schema = httpx.get(url + "/openapi.json").json()
    return [(method.upper(), path, operation["summary"])
            for path, item in schema["paths"].items() for method, operation in item.items()]


def offline(page, served_url: str) -> list[str]:
    """Refuse (and record) every request that does not go to the server under test."""
    ours = urlsplit(served_url).netloc
    elsewhere: list[str] = []

    def only_ours(route) -> None:
        if urlsplit(route.request.url).netloc == ours:
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    page.context.route("**/*", only_ours)
    return elsewhere


def test_swagger_ui_lists_every_operation_without_network(served):
    operations = schema_operations(served.url)
    with browser_page() as page:
        elsewhere = offline(page, served.url)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(served.url + "/docs")
        page.wait_for_selector(".opblock", timeout=30000)
        shown = [
            (block.locator(".opblock-summary-method").inner_text().strip(),
             block.locator(".opblock-summary-path").inner_text().strip().replace("\u200b", ""))
            for block in page.locator(".opblock").all()
        ]
        assert sorted(shown) == sorted((method, path) for method, path, _ in operations)
        assert page.locator("button.authorize").count() == 1  # the bearer scheme
    assert elsewhere == [] and errors == []


def test_redoc_lists_every_operation_without_network(served):
    operations = schema_operations(served.url)
    with browser_page() as page:
        elsewhere = offline(page, served.url)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(served.url + "/redoc")
        page.wait_for_selector("h2", timeout=30000)
        headings = {h.strip() for h in page.locator("h2").all_inner_texts()}
        assert {summary for _, _, summary in operations} <= headings
    # ReDoc's bundle links its "API docs by Redocly" badge to an image on its CDN; offline only that badge is
    # missing. Nothing else may leave the server.
    assert [url for url in elsewhere if url != REDOC_BADGE] == [] and errors == []
