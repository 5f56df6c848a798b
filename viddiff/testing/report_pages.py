"""Checks on generated report pages, shared by the report tests and the demo script.

``HostileModel`` is the scripted stand-in with markup in its rationales and stage names: a page
built from its answers must show that markup as text.
"""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path
from urllib.parse import unquote

from PIL import Image

from viddiff.testing.fake_openai import ChatRequest
from viddiff.testing.htmldoc import Element, parse_html
from viddiff.testing.responders import ScriptedModel

EVIL_RATIONALE = '</blockquote><script>alert("rationale")</script><img src="https://evil.example/x.png"> '
EVIL_STAGE = "<img src=x onerror=alert(1)> "
RESOURCE_ATTRS = ("src", "href", "poster", "srcset", "action", "formaction", "data", "xlink:href")
_SCHEME = re.compile(r"^\s*([a-z][a-z0-9+.-]*:|//)", re.I)


class HostileModel(ScriptedModel):
    """The scripted model, but its rationales and stage names carry markup that must render as text."""

    def _answer_stages(self, req: ChatRequest) -> dict:
        answer = super()._answer_stages(req)
        for stage in answer["stages"]:
            stage["name"] = EVIL_STAGE + stage["name"]
        return answer

    def _answer_AnswerABC(self, req: ChatRequest) -> dict:
        return _with_evil_rationale(super()._answer_AnswerABC(req))

    def _answer_AnswerAB(self, req: ChatRequest) -> dict:
        return _with_evil_rationale(super()._answer_AnswerAB(req))


def _with_evil_rationale(answer: dict) -> dict:
    return {**answer, "answer_detailed": EVIL_RATIONALE + answer["answer_detailed"]}


def read_page(path: Path) -> Element:
    """Parse a page (pages are written as ASCII with character references)."""
    return parse_html(Path(path).read_text(encoding="ascii"))


def decode_data_image(src: str) -> Image.Image:
    head, _, payload = src.partition(",")
    if head != "data:image/jpeg;base64":
        raise AssertionError(f"not a JPEG data URL: {src[:40]!r}")
    image = Image.open(io.BytesIO(base64.b64decode(payload, validate=True)))
    image.load()
    return image


def assert_self_contained(doc: Element, page: Path) -> None:
    """No resource from the network: every URL is a data URL, an in-page anchor, or an existing file near the page."""
    for element in doc.iter():
        assert element.tag not in ("link", "iframe", "object", "embed", "base"), f"<{element.tag}> in the page"
        for name in RESOURCE_ATTRS:
            value = element.attrs.get(name)
            if value is None or value.startswith(("data:", "#")):
                continue
            assert not _SCHEME.match(value), f"<{element.tag} {name}={value[:60]!r}> points outside the page"
            assert (Path(page).parent / unquote(value)).exists(), f"<{element.tag} {name}> names a missing file {value}"
    for style in doc.find_all("style"):
        assert "url(" not in style.text() and "@import" not in style.text()


def assert_escaped(doc: Element) -> None:
    """Markup from a model is text: one script element (ours), no event handler, no injected image."""
    scripts = doc.find_all("script")
    assert len(scripts) == 1 and "alert" not in scripts[0].text()
    assert not [e for e in doc.iter() if any(k.startswith("on") for k in e.attrs)]
    assert not [e for e in doc.find_all("img") if e.attrs.get("src") in ("x", "https://evil.example/x.png")]
